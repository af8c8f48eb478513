//===- CompileCache.h - compiled artifacts kept between runs ----*- C++ -*-===//
//
// A persistent cache of compiled artifacts, keyed by a hash of everything
// that determines one: the input module, the training options (target
// included), the host CPU the code is generated for, and the compiler
// itself (a hash of the binary holding this code, so a rebuilt compiler
// never reads its predecessor's entries). As torch.compile's and XLA's, it
// makes the second run of a model start at once.
//
// Entries are artifacts, whose header and sections carry checksums: a
// truncated or corrupt entry is reported once and compiled again. Writers
// hold a lock on the entry's key while they compile, so processes starting
// the same step together (the ranks under mpirun) compile it once: the
// others wait and read it. Entries are written atomically.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_COMPILER_AOT_COMPILECACHE_H
#define GACC_COMPILER_AOT_COMPILECACHE_H

#include "compiler/Pipelines.h"
#include "gacc/runtime/Artifact.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace mlir::gacc {

class CompileCache {
public:
  explicit CompileCache(std::string directory)
      : directory(std::move(directory)) {}

  /// The cache the environment asks for: $GACC_CACHE_DIR, else
  /// $XDG_CACHE_HOME/gacc, else ~/.cache/gacc; none when
  /// GACC_DISABLE_CACHE=1.
  static std::optional<CompileCache> fromEnvironment();

  /// The artifact of `module` compiled with `options`: read from the cache,
  /// or made by `compile` (which lowers `module`) and stored. On a hit,
  /// `module` is left as it is.
  FailureOr<::gacc::rt::Artifact>
  getOrCompile(ModuleOp module, const TrainingPipelineOptions &options,
               function_ref<FailureOr<::gacc::rt::Artifact>()> compile) const;

  const std::string &getDirectory() const { return directory; }

  /// A hash of the file (executable or shared library) holding the
  /// compiler, or empty when it cannot be read (then nothing is cached).
  static const std::string &compilerIdentity();

private:
  std::string directory;
};

} // namespace mlir::gacc

#endif // GACC_COMPILER_AOT_COMPILECACHE_H
