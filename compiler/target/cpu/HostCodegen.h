//===- HostCodegen.h - LLVM code for the host CPU ---------------*- C++ -*-===//
//
// The JIT and ahead-of-time compilation share how a step's LLVM module
// becomes machine code for this CPU: the host's target machine, LLVM's
// optimization pipeline tuned for it, and for artifacts an object file
// linked into a shared object whose runtime imports go through pointers.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_COMPILER_TARGET_CPU_HOSTCODEGEN_H
#define GACC_COMPILER_TARGET_CPU_HOSTCODEGEN_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::gacc {

/// This CPU's target machine (its vector width and instructions);
/// position-independent with `pic`, for shared objects.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createHostTargetMachine(bool pic);

/// LLVM's pipeline at `level` for `tm`, without loop unrolling: unrolling the many
/// loops of a step (an accumulation loop holds a whole micro-batch) made
/// ScalarEvolution quadratic, 40-60 s to compile GPT-mini with accumulation
/// instead of 2, and the loops run no faster unrolled.
void optimizeForHost(llvm::Module &module, llvm::TargetMachine *tm,
                     llvm::OptimizationLevel level = llvm::OptimizationLevel::O2);

/// Replaces the module's static constructors and destructors by two
/// functions, `load` (the constructors in order) and `unload` (the
/// destructors), for a loader to call when it is ready.
void constructorsToFunctions(llvm::Module &module, llvm::StringRef load,
                             llvm::StringRef unload);

/// Makes every call of a declared function named in `imports` call through
/// a pointer variable `<prefix><name>` (null until a loader sets it).
void importThroughPointers(llvm::Module &module,
                           llvm::ArrayRef<std::string> imports,
                           llvm::StringRef prefix);

/// The object code of `module` for `tm`.
llvm::Expected<std::string> emitObject(llvm::Module &module,
                                       llvm::TargetMachine &tm);

/// Optimizes `module` for this CPU (optimizeForHost) and compiles it into
/// position-independent object files, one per part, the parts compiled in
/// parallel on up to `threads` threads (0: one per core), each in its own
/// LLVMContext. The functions without loops (the entry points: after
/// gacc-cpu-outline-loop-nests, sequences of calls, where -O2 register
/// allocation of thousands of calls took 5x longer for no faster code) and
/// the module's data form one part, optimized at -O1 and compiled without
/// codegen optimization; the functions with loops are spread over the other
/// parts by size, at -O2.
/// `module` is left in an unspecified state.
llvm::Expected<std::vector<std::string>>
compileForHost(llvm::Module &module, unsigned threads = 0);

/// Links `objects` into a shared object (with libm) with the system's C
/// compiler driver, `cc`.
llvm::Expected<std::string>
linkSharedObject(llvm::ArrayRef<std::string> objects);

} // namespace mlir::gacc

#endif // GACC_COMPILER_TARGET_CPU_HOSTCODEGEN_H
