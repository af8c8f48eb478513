//===- File.h - whole and positioned reads, atomic writes -------*- C++ -*-===//
#ifndef GACC_RUNTIME_FILE_H
#define GACC_RUNTIME_FILE_H

#include "gacc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace gacc::rt {

/// Reads all of `path`; errors name the path and the system's reason.
Status readFile(const std::string &path, std::string &contents);

/// Writes `contents` to `path` atomically: a temporary file beside it,
/// flushed to disk and renamed over `path`, so a crash or a full disk never
/// leaves a half-written file under the final name.
Status writeFileAtomically(const std::string &path,
                           const std::string &contents);

/// A file read piecewise at any offset (token files, .npy examples), never
/// whole: what a reader holds is what it copied out. (Mapping it would hold
/// more: a read of a few bytes maps the page-cache folio around them, 2 MiB
/// with large folios, until it is unmapped.) Reads are safe from several
/// threads.
class RandomAccessFile {
public:
  RandomAccessFile() = default;
  ~RandomAccessFile();
  RandomAccessFile(const RandomAccessFile &) = delete;
  RandomAccessFile &operator=(const RandomAccessFile &) = delete;

  /// Errors name the path and the system's reason.
  Status open(const std::string &path);
  uint64_t size() const { return size_; }
  const std::string &path() const { return path_; }
  /// Copies bytes [offset, offset + length) to `out`; an error (naming the
  /// path) if the file no longer holds them.
  Status read(uint64_t offset, size_t length, void *out) const;

private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

} // namespace gacc::rt

#endif // GACC_RUNTIME_FILE_H
