//===- Blas.h - single-threaded BLAS calls on the pool --------*- C++ -*-===//
//
// The CPU kernels that compiled code calls (Matmul.cpp, Attention.cpp) cut
// their work into blocks on the runtime's thread pool, each one BLAS call on
// one thread: BLAS and the step's loops share the cores, and results do not
// depend on the thread count.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_CPU_BLAS_H
#define GACC_RUNTIME_CPU_BLAS_H

#include <cblas.h>

#include <cstdint>

extern "C" int openblas_get_num_threads(void);
extern "C" void openblas_set_num_threads(int);

namespace gacc::rt {

/// OpenBLAS on one thread for the scope: the pool's threads call it.
/// Restored after, for other users of the library in the process (PyTorch).
class SingleThreadedBlas {
public:
  SingleThreadedBlas() : saved(openblas_get_num_threads()) {
    if (saved != 1)
      openblas_set_num_threads(1);
  }
  ~SingleThreadedBlas() {
    if (saved != 1)
      openblas_set_num_threads(saved);
  }
  SingleThreadedBlas(const SingleThreadedBlas &) = delete;
  SingleThreadedBlas &operator=(const SingleThreadedBlas &) = delete;

private:
  int saved;
};

/// C = alpha · op(A) · op(B) + beta · C, row-major.
inline void gemm(const float *a, const float *b, float *c, bool ta, bool tb,
                 int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                 int64_t ldc, float beta, float alpha = 1.0f) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb,
              beta, c, ldc);
}

inline void gemm(const double *a, const double *b, double *c, bool ta,
                 bool tb, int64_t m, int64_t n, int64_t k, int64_t lda,
                 int64_t ldb, int64_t ldc, double beta, double alpha = 1.0) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb,
              beta, c, ldc);
}

} // namespace gacc::rt

#endif // GACC_RUNTIME_CPU_BLAS_H
