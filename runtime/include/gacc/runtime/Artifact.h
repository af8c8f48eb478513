//===- Artifact.h - the compiled-model container ----------------*- C++ -*-===//
//
// What `gacc compile` writes and the runtime alone loads: everything a
// training step needs at run time, with no LLVM or MLIR. The format is
// defined here, in the runtime; the compiler includes this header, never
// the reverse. docs/artifact.md describes it byte by byte.
//
//   offset 0   magic "GACCART\0" (8 bytes)
//          8   format version, u32 little-endian (kArtifactVersion)
//         12   header size H, u32
//         16   header: H bytes of JSON (target, model description, the
//              sections' names, offsets, sizes and FNV-1a 64 checksums, and
//              "checksum": the FNV-1a 64 of the header without that field)
//          D   the data area, D = 16 + H rounded up to 64: each section at
//              its offset from D (a multiple of 64)
//
// Sections hold the compiled code: "host" (the CPU code as a shared
// object), and for the CUDA target its kernels ("ptx", "cubin"). The model
// description is ModelInfo: the arena layouts of parameters, gradients,
// optimizer and loss-scale state, inputs and outputs, initializers, the
// memory plan (workspace bytes) and the training configuration (optimizer,
// schedule, batch, clipping, loss scaling).
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_ARTIFACT_H
#define GACC_RUNTIME_ARTIFACT_H

#include "gacc/runtime/ModelInfo.h"
#include "gacc/runtime/Status.h"

#include <cstdint>
#include <map>
#include <string>

namespace gacc::rt {

inline constexpr char kArtifactMagic[8] = {'G', 'A', 'C', 'C',
                                           'A', 'R', 'T', '\0'};
/// Bumped on any change a reader of the previous version cannot read
/// (2: the optimizer's per-step scalars and hyperparameters by name; 3: the
/// host code's matmul calls pass `accumulate`).
inline constexpr uint32_t kArtifactVersion = 3;

struct Artifact {
  /// "cpu" or "cuda".
  std::string target;
  ModelInfo model;
  /// The instruction-set extensions its host code uses (checkedCpuFeatures
  /// names): a CPU without one of them refuses it.
  std::vector<std::string> cpuFeatures;
  /// Named blobs of compiled code, in name order.
  std::map<std::string, std::string> sections;
};

/// The bytes of `artifact` in the format above.
std::string serializeArtifact(const Artifact &artifact);

/// Parses `bytes` (from `origin`, for messages). With `target` non-empty, an
/// artifact for another target is an error. Truncated or corrupted bytes,
/// another magic or format version are errors that say which.
Status parseArtifact(const std::string &bytes, const std::string &origin,
                     const std::string &target, Artifact &out);

/// Writes `artifact` to `path` atomically (never half-written).
Status writeArtifact(const std::string &path, const Artifact &artifact);
Status readArtifact(const std::string &path, const std::string &target,
                    Artifact &out);

} // namespace gacc::rt

#endif // GACC_RUNTIME_ARTIFACT_H
