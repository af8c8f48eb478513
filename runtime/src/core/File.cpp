//===- File.cpp - whole-file reads and atomic writes ------------------------===//

#include "gacc/runtime/File.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <fcntl.h>
#include <iterator>
#include <sys/mman.h>
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

MappedFile::~MappedFile() {
  if (size_)
    ::munmap(const_cast<std::byte *>(data_), size_);
}

Status MappedFile::open(const std::string &path) {
  path_ = path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status::error(path + ": cannot open: " + std::strerror(errno));
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    int savedErrno = errno;
    ::close(fd);
    return Status::error(path + ": cannot stat: " + std::strerror(savedErrno));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return Status::error(path + ": not a regular file");
  }
  size_ = static_cast<size_t>(info.st_size);
  if (size_ == 0) { // mmap refuses empty files; callers see no bytes
    ::close(fd);
    return Status();
  }
  void *mapped = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
  int savedErrno = errno;
  ::close(fd);
  if (mapped == MAP_FAILED) {
    size_ = 0;
    return Status::error(path + ": cannot map: " + std::strerror(savedErrno));
  }
  data_ = static_cast<const std::byte *>(mapped);
  return Status();
}

void MappedFile::releasePages(size_t offset, size_t length) const {
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // Whole pages, rounded outward: a page another reader still uses is only
  // read again from the page cache when it touches it.
  size_t begin = offset / page * page;
  size_t end = (std::min(offset + length, size_) + page - 1) / page * page;
  if (begin < end)
    ::madvise(const_cast<std::byte *>(data_) + begin, end - begin,
              MADV_DONTNEED);
}

} // namespace gacc::rt
