//===- StepWork.h - what a training step computes and moves -----*- C++ -*-===//
//
// The work of one step, counted on its bufferized code (what the memory
// plan compiles anyway) as the CPU target runs it: every matmul the
// runtime's kernels take, by shape and calls, and the bytes and number of
// the other loop nests. `gacc tune` prices it with this machine's kernel
// costs (runtime/include/gacc/runtime/KernelRates.h).
//
//===----------------------------------------------------------------------===//
#ifndef GACC_COMPILER_PLAN_STEPWORK_H
#define GACC_COMPILER_PLAN_STEPWORK_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>

namespace mlir::gacc {

/// Matmuls of one shape: C[batch, m, n] = A[batch, m, k] · B[batch, k, n],
/// the loops (batch..., m, n, k) of a contraction the CPU target calls
/// gacc_cpu_matmul_<type> for.
struct MatmulWork {
  /// The element type of A and B (f32, f64, f16 or bf16).
  Type operand;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  /// Calls per step (the trips of the loops around them).
  int64_t calls = 0;

  double flops() const { return 2.0 * batch * m * n * k; }
  bool sameShape(const MatmulWork &other) const {
    return operand == other.operand && batch == other.batch && m == other.m &&
           n == other.n && k == other.k;
  }
};

struct StepWork {
  SmallVector<MatmulWork> matmuls;
  /// The other loop nests (elementwise, reductions, gathers, fills, copies,
  /// contractions with no kernel, and embedding gradients, which the CPU
  /// adds by rows: their one-hot is neither written nor read): how many
  /// run per step, and the bytes of their operands, each counted once per
  /// run.
  int64_t loopNests = 0;
  double loopBytes = 0;
};

/// How many times `op` runs per call of its function: the product of the
/// constant trip counts of the scf.for loops around it.
int64_t runsPerCall(Operation *op);

/// The work of `step`, a bufferized entry point (gacc_step after
/// gacc-bufferize-pipeline). Loops with a constant trip count multiply what
/// they hold.
StepWork countStepWork(func::FuncOp step);

/// What a machine takes for the parts of StepWork.
struct KernelCosts {
  /// Seconds of one call of a matmul of `work`'s shape.
  std::function<double(const MatmulWork &work)> matmulSeconds;
  /// Whether matmulSeconds knows `work`'s shape without timing a kernel
  /// (null: always).
  std::function<bool(const MatmulWork &work)> knowsMatmul;
  /// Bytes per second of memory-bound loops; seconds each loop nest costs
  /// besides its bytes.
  double bytesPerSecond = 1e10, loopNestSeconds = 0;
};

/// The step's predicted seconds: its matmuls and loop nests priced by
/// `costs`.
double predictStepSeconds(const StepWork &work, const KernelCosts &costs);

/// Whether `costs` prices `work` without timing a kernel.
bool knowsStepCosts(const StepWork &work, const KernelCosts &costs);

} // namespace mlir::gacc

#endif // GACC_COMPILER_PLAN_STEPWORK_H
