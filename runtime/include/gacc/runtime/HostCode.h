//===- HostCode.h - the runtime functions compiled CPU code calls -*- C++ -*-===//
//
// Compiled CPU code calls a few runtime functions (the BLAS matmul kernels,
// memrefCopy, and malloc/free, which go to the counting heap). The JIT binds
// them by symbol; an ahead-of-time shared object imports each through a
// pointer variable `gacc_import.<symbol>` that the loader sets, so it needs
// nothing exported by the host program.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_HOSTCODE_H
#define GACC_RUNTIME_HOSTCODE_H

#include "gacc/runtime/Status.h"
#include "gacc/runtime/Trainer.h"

#include <string>
#include <vector>

namespace gacc::rt {

struct HostImport {
  /// The symbol compiled code calls.
  std::string symbol;
  /// The runtime function it binds to.
  void *function;
};

/// Every function compiled CPU code may call, by the symbol it calls.
const std::vector<HostImport> &hostImports();

/// The prefix of an imported function's pointer variable.
inline constexpr char kHostImportPrefix[] = "gacc_import.";

/// The instruction-set extensions host code may be compiled to use that
/// the runtime can check on the CPU it runs on (LLVM's names: "avx2",
/// "avx512f", "avx512bf16", ...).
const std::vector<std::string> &checkedCpuFeatures();

/// An error naming those of `features` (checkedCpuFeatures names) this CPU
/// lacks, for host code from `origin`; success when it has them all.
Status checkCpuFeatures(const std::vector<std::string> &features,
                        const std::string &origin);

/// Loads `sharedObject` (the bytes of an artifact's "host" section) from
/// memory, binds its imports and finds `_mlir_ciface_gacc_step` and
/// `_mlir_ciface_gacc_eval`. `origin` names it in errors.
Status loadHostCode(const std::string &sharedObject, const std::string &origin,
                    CompiledStep &out);

} // namespace gacc::rt

#endif // GACC_RUNTIME_HOSTCODE_H
