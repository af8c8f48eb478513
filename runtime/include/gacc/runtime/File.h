//===- File.h - whole-file reads and atomic writes ----------------*- C++ -*-===//
#ifndef GACC_RUNTIME_FILE_H
#define GACC_RUNTIME_FILE_H

#include "gacc/runtime/Status.h"

#include <string>

namespace gacc::rt {

/// Reads all of `path`; errors name the path and the system's reason.
Status readFile(const std::string &path, std::string &contents);

/// Writes `contents` to `path` atomically: a temporary file beside it,
/// flushed to disk and renamed over `path`, so a crash or a full disk never
/// leaves a half-written file under the final name.
Status writeFileAtomically(const std::string &path,
                           const std::string &contents);

} // namespace gacc::rt

#endif // GACC_RUNTIME_FILE_H
