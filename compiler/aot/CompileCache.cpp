//===- CompileCache.cpp - compiled artifacts kept between runs --------------===//

#include "compiler/aot/CompileCache.h"
#include "compiler/target/cuda/KernelCodegen.h"
#include "gacc/runtime/File.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::gacc;
namespace rt = ::gacc::rt;

namespace {

/// The code is generated for this CPU's instructions: a cache shared by
/// machines (a home directory on NFS) keeps one entry per kind of CPU.
std::string hostCpu() {
  std::string cpu = llvm::sys::getHostCPUName().str();
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    if (feature.second)
      cpu += "," + feature.first().str();
  return cpu;
}

/// The warnings a compilation emitted, one per line: `file\tline\tcolumn\t
/// message` (message with its newlines escaped), so that a cache hit
/// reports them as compiling did. Only those of the compiling thread: steps
/// may compile on several threads of one context (a pass manager reports
/// its parallel passes' diagnostics on the thread that runs it).
class RecordedWarnings {
public:
  explicit RecordedWarnings(MLIRContext *context)
      : thread(llvm::get_threadid()),
        handler(context, [this](Diagnostic &diagnostic) {
          if (diagnostic.getSeverity() == DiagnosticSeverity::Warning &&
              llvm::get_threadid() == thread)
            record(diagnostic);
          return failure(); // and on to the caller's handler
        }) {}

  const std::string &text() const { return lines; }

  static void replay(MLIRContext *context, StringRef text) {
    for (StringRef line : llvm::split(text, '\n')) {
      SmallVector<StringRef, 4> fields;
      line.split(fields, '\t', /*MaxSplit=*/3);
      unsigned lineNumber = 0, column = 0;
      if (fields.size() != 4 || fields[1].getAsInteger(10, lineNumber) ||
          fields[2].getAsInteger(10, column))
        continue;
      Location loc = fields[0].empty()
                         ? Location(UnknownLoc::get(context))
                         : FileLineColLoc::get(context, fields[0], lineNumber,
                                               column);
      std::string message;
      for (size_t i = 0; i < fields[3].size(); ++i)
        if (fields[3][i] == '\\' && i + 1 < fields[3].size())
          message += fields[3][++i] == 'n' ? '\n' : fields[3][i];
        else
          message += fields[3][i];
      emitWarning(loc) << message;
    }
  }

private:
  void record(Diagnostic &diagnostic) {
    FileLineColLoc loc;
    diagnostic.getLocation()->walk([&](Location nested) {
      loc = dyn_cast<FileLineColLoc>(nested);
      return loc ? WalkResult::interrupt() : WalkResult::advance();
    });
    llvm::raw_string_ostream os(lines);
    if (loc)
      os << loc.getFilename().getValue() << "\t" << loc.getLine() << "\t"
         << loc.getColumn() << "\t";
    else
      os << "\t0\t0\t";
    for (char c : diagnostic.str())
      if (c == '\n')
        os << "\\n";
      else if (c == '\\')
        os << "\\\\";
      else
        os << c;
    os << "\n";
  }

  std::string lines;
  uint64_t thread; ///< the compiling one
  ScopedDiagnosticHandler handler;
};

/// An exclusive lock on `path`, held until destruction (or the process's
/// end: the system releases it when a holder dies).
class FileLock {
public:
  explicit FileLock(const std::string &path)
      : fd(::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)) {
    if (fd >= 0 && ::flock(fd, LOCK_EX) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ~FileLock() {
    if (fd >= 0)
      ::close(fd);
  }

private:
  int fd;
};
} // namespace

const std::string &CompileCache::compilerIdentity() {
  static const std::string identity = [] {
    Dl_info info;
    if (!::dladdr(reinterpret_cast<void *>(&CompileCache::compilerIdentity),
                  &info) ||
        !info.dli_fname)
      return std::string();
    auto file = llvm::MemoryBuffer::getFile(info.dli_fname);
    if (!file)
      return std::string();
    return llvm::utohexstr(llvm::xxh3_64bits((*file)->getBuffer()));
  }();
  return identity;
}

std::optional<CompileCache> CompileCache::fromEnvironment() {
  if (const char *disable = std::getenv("GACC_DISABLE_CACHE");
      disable && std::string(disable) == "1")
    return std::nullopt;
  if (const char *dir = std::getenv("GACC_CACHE_DIR"); dir && *dir)
    return CompileCache(dir);
  llvm::SmallString<128> dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    dir = xdg;
  else if (const char *home = std::getenv("HOME"); home && *home)
    llvm::sys::path::append(dir, home, ".cache");
  else
    return std::nullopt;
  llvm::sys::path::append(dir, "gacc");
  return CompileCache(dir.str().str());
}

FailureOr<rt::Artifact> CompileCache::getOrCompile(
    ModuleOp module, const TrainingPipelineOptions &options,
    function_ref<FailureOr<rt::Artifact>()> compile) const {
  if (compilerIdentity().empty())
    return compile();
  if (std::error_code ec = llvm::sys::fs::create_directories(directory)) {
    llvm::errs() << "gacc: warning: cannot use the compile cache "
                 << directory << ": " << ec.message() << "\n";
    return compile();
  }
  llvm::SHA256 hash;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "gacc-compile-cache-1\n" << compilerIdentity() << "\n" << hostCpu()
     << "\n";
  options.print(os);
  os << "\n";
  // Whether the kernels get machine code depends on the CUDA toolkit found.
  if (options.target.getValue() == "cuda")
    os << findCudaFile("nvvm/libdevice/libdevice.10.bc") << "\n"
       << findCudaFile("bin/ptxas") << "\n"
       << findCudaFile("bin/fatbinary") << "\n";
  // With locations: the warnings a hit replays point into this file.
  module.print(os, OpPrintingFlags().enableDebugInfo());
  hash.update(text);
  std::string key = llvm::toHex(hash.final(), /*LowerCase=*/true);
  llvm::SmallString<128> entry(directory);
  llvm::sys::path::append(entry, key + ".gacc");
  std::string path = entry.str().str();

  std::string warningsPath = path + ".warnings";

  FileLock lock(path + ".lock");
  if (llvm::sys::fs::exists(path)) {
    rt::Artifact artifact;
    std::string warnings;
    rt::Status status = rt::readArtifact(path, "", artifact);
    if (status)
      status = rt::readFile(warningsPath, warnings);
    if (status) {
      RecordedWarnings::replay(module.getContext(), warnings);
      return artifact;
    }
    llvm::errs() << "gacc: warning: the compile cache's entry is unusable ("
                 << status.message() << "): compiling it again\n";
  }
  RecordedWarnings warnings(module.getContext());
  FailureOr<rt::Artifact> artifact = compile();
  if (failed(artifact))
    return failure();
  // The warnings first: an entry whose artifact exists has them.
  rt::Status status =
      rt::writeFileAtomically(warningsPath, warnings.text());
  if (status)
    status = rt::writeArtifact(path, *artifact);
  if (!status)
    llvm::errs() << "gacc: warning: cannot store the compiled step in the "
                    "compile cache: "
                 << status.message() << "\n";
  return artifact;
}
