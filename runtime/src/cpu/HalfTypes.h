//===- HalfTypes.h - 16-bit floats in the kernels' memrefs ------*- C++ -*-===//
//
// The element types of f16 and bf16 memrefs as the CPU kernels that
// compiled code calls (Matmul.cpp, Attention.cpp) read them: the bits,
// converted with gacc/runtime/Tensor.h's functions.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_CPU_HALFTYPES_H
#define GACC_RUNTIME_CPU_HALFTYPES_H

#include <cstdint>

namespace gacc::rt {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

} // namespace gacc::rt

#endif // GACC_RUNTIME_CPU_HALFTYPES_H
