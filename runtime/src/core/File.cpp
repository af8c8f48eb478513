//===- File.cpp - whole-file reads and atomic writes ------------------------===//

#include "gacc/runtime/File.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
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

} // namespace gacc::rt
