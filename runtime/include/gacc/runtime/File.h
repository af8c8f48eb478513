//===- File.h - whole-file reads and atomic writes ----------------*- C++ -*-===//
#ifndef GACC_RUNTIME_FILE_H
#define GACC_RUNTIME_FILE_H

#include "gacc/runtime/Status.h"

#include <cstddef>
#include <string>

namespace gacc::rt {

/// Reads all of `path`; errors name the path and the system's reason.
Status readFile(const std::string &path, std::string &contents);

/// Writes `contents` to `path` atomically: a temporary file beside it,
/// flushed to disk and renamed over `path`, so a crash or a full disk never
/// leaves a half-written file under the final name.
Status writeFileAtomically(const std::string &path,
                           const std::string &contents);

/// A file mapped read-only into memory, for data read piecewise (token
/// files, .npy examples) without ever holding it whole: pages are read on
/// first touch, and releasePages gives back those a reader is done with, so
/// resident memory stays what is in use, not what was ever read.
class MappedFile {
public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  /// Errors name the path and the system's reason.
  Status open(const std::string &path);
  const std::byte *data() const { return data_; }
  size_t size() const { return size_; }
  const std::string &path() const { return path_; }
  /// Drops the pages holding [offset, offset + length) from this process's
  /// resident memory (they stay in the page cache; a later read maps them
  /// again).
  void releasePages(size_t offset, size_t length) const;

private:
  std::string path_;
  const std::byte *data_ = nullptr;
  size_t size_ = 0;
};

} // namespace gacc::rt

#endif // GACC_RUNTIME_FILE_H
