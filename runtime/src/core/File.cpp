//===- File.cpp - whole and positioned reads, atomic writes ---------------===//

#include "gacc/runtime/File.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <sys/stat.h>
#include <unistd.h>

namespace gacc::rt {

Status readFile(const std::string &path, std::string &contents) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(path + ": cannot open: " + std::strerror(errno));
  contents.assign(std::istreambuf_iterator<char>(in),
                  std::istreambuf_iterator<char>());
  if (in.bad())
    return Status::error(path + ": read error");
  return Status();
}

Status writeFileAtomically(const std::string &path,
                           const std::string &contents) {
  std::string temporary = path + ".tmp." + std::to_string(::getpid());
  std::FILE *out = std::fopen(temporary.c_str(), "wb");
  if (!out)
    return Status::error(path + ": cannot write: " + std::strerror(errno));
  bool written =
      std::fwrite(contents.data(), 1, contents.size(), out) == contents.size();
  written = std::fflush(out) == 0 && written;
  written = ::fsync(::fileno(out)) == 0 && written;
  int savedErrno = errno;
  written = std::fclose(out) == 0 && written;
  if (!written || std::rename(temporary.c_str(), path.c_str()) != 0) {
    if (written)
      savedErrno = errno;
    std::remove(temporary.c_str());
    return Status::error(path + ": write failed: " + std::strerror(savedErrno));
  }
  return Status();
}

RandomAccessFile::~RandomAccessFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

Status RandomAccessFile::open(const std::string &path) {
  path_ = path;
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0)
    return Status::error(path + ": cannot open: " + std::strerror(errno));
  struct stat info;
  if (::fstat(fd_, &info) != 0)
    return Status::error(path + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    return Status::error(path + ": not a regular file");
  size_ = static_cast<uint64_t>(info.st_size);
  return Status();
}

Status RandomAccessFile::read(uint64_t offset, size_t length, void *out) const {
  auto *bytes = static_cast<char *>(out);
  while (length > 0) {
    ssize_t got = ::pread(fd_, bytes, length, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return Status::error(
          path_ + ": read failed at byte " + std::to_string(offset) + ": " +
          (got < 0 ? std::strerror(errno) : "the file is shorter than it was"));
    bytes += got;
    offset += static_cast<uint64_t>(got);
    length -= static_cast<size_t>(got);
  }
  return Status();
}

} // namespace gacc::rt
