//===- AssembleKernels.cpp - PTX to machine code ahead of time --------------===//

#include "compiler/target/cuda/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_ASSEMBLEKERNELS
#include "compiler/target/cuda/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
/// The chips of the GPUs gacc is measured on (A100, H100 and H200).
constexpr const char *kDefaultChips[] = {"sm_80", "sm_90"};

/// Temporary files removed when it goes out of scope.
struct TemporaryFiles {
  SmallVector<std::string> paths;
  ~TemporaryFiles() {
    for (const std::string &path : paths)
      llvm::sys::fs::remove(path);
  }
  FailureOr<std::string> create(StringRef prefix, StringRef suffix) {
    SmallString<128> path;
    if (llvm::sys::fs::createTemporaryFile(prefix, suffix, path))
      return failure();
    paths.push_back(path.str().str());
    return paths.back();
  }
};

/// "sm_90" -> "90", the form fatbinary's image specs take.
StringRef chipNumber(StringRef chip) {
  chip.consume_front("sm_");
  return chip;
}

struct AssembleKernelsPass
    : public gacc::impl::AssembleKernelsBase<AssembleKernelsPass> {
  using AssembleKernelsBase::AssembleKernelsBase;

  void runOnOperation() override {
    SmallVector<std::string> targets(chips.begin(), chips.end());
    if (targets.empty())
      targets.assign(std::begin(kDefaultChips), std::end(kDefaultChips));
    WalkResult result = getOperation().walk([&](gpu::BinaryOp binary) {
      return succeeded(assemble(binary, targets)) ? WalkResult::advance()
                                                  : WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  LogicalResult assemble(gpu::BinaryOp binary, ArrayRef<std::string> targets) {
    SmallVector<Attribute> objects;
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      if (object.getFormat() != gpu::CompilationTarget::Assembly) {
        objects.push_back(object);
        continue;
      }
      FailureOr<std::string> fatbin = assemble(binary, object, targets);
      if (failed(fatbin))
        return failure();
      objects.push_back(gpu::ObjectAttr::get(
          &getContext(), object.getTarget(), gpu::CompilationTarget::Fatbin,
          StringAttr::get(&getContext(), *fatbin), object.getProperties(),
          object.getKernels()));
    }
    binary.setObjectsAttr(ArrayAttr::get(&getContext(), objects));
    return success();
  }

  /// The fatbin of `object`'s PTX: machine code for `targets` and the PTX
  /// itself, for the chip it was generated for.
  FailureOr<std::string> assemble(gpu::BinaryOp binary, gpu::ObjectAttr object,
                                  ArrayRef<std::string> targets) {
    auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
    if (!target)
      return binary.emitError("a PTX object without an NVVM target");
    TemporaryFiles files;
    FailureOr<std::string> ptx = files.create("gacc-kernels", "ptx");
    if (failed(ptx))
      return binary.emitError("cannot create a temporary file");
    {
      std::error_code error;
      llvm::raw_fd_ostream os(*ptx, error);
      if (error)
        return binary.emitError("cannot write ") << *ptx << ": "
                                                  << error.message();
      os << object.getObject().getValue();
    }
    // One ptxas per chip, all at once.
    struct Job {
      StringRef chip;
      std::string cubin, log;
      llvm::sys::ProcessInfo process;
    };
    SmallVector<Job> jobs;
    for (StringRef chip : targets) {
      Job job{chip, "", "", {}};
      FailureOr<std::string> cubin = files.create("gacc-kernels", "cubin");
      FailureOr<std::string> log = files.create("gacc-ptxas", "log");
      if (failed(cubin) || failed(log))
        return binary.emitError("cannot create a temporary file");
      job.cubin = *cubin;
      job.log = *log;
      std::string arch = "-arch=" + chip.str();
      SmallVector<StringRef> args = {ptxas, arch, "-O3", *ptx, "-o", job.cubin};
      std::optional<StringRef> redirects[] = {std::nullopt, job.log, job.log};
      std::string error;
      job.process = llvm::sys::ExecuteNoWait(ptxas, args, std::nullopt,
                                             redirects, 0, &error);
      if (!job.process.Pid)
        return binary.emitError("cannot run ") << ptxas << ": " << error;
      jobs.push_back(std::move(job));
    }
    // Every process is waited for; the first failure is the error.
    std::optional<std::string> failure;
    for (Job &job : jobs) {
      std::string error;
      llvm::sys::ProcessInfo done =
          llvm::sys::Wait(job.process, std::nullopt, &error);
      if (done.ReturnCode == 0 || failure)
        continue;
      auto log = llvm::MemoryBuffer::getFile(job.log);
      failure = ("ptxas failed for " + job.chip + ": " +
                 (log ? (*log)->getBuffer() : StringRef(error)))
                    .str();
    }
    if (failure)
      return binary.emitError(StringRef(*failure).rtrim());

    FailureOr<std::string> fatbin = files.create("gacc-kernels", "fatbin");
    FailureOr<std::string> log = files.create("gacc-fatbinary", "log");
    if (failed(fatbin) || failed(log))
      return binary.emitError("cannot create a temporary file");
    SmallVector<std::string> specs;
    for (Job &job : jobs)
      specs.push_back(("--image3=kind=elf,sm=" + chipNumber(job.chip) +
                       ",file=" + job.cubin)
                          .str());
    specs.push_back(("--image3=kind=ptx,sm=" + chipNumber(target.getChip()) +
                     ",file=" + *ptx)
                        .str());
    std::string create = "--create=" + *fatbin;
    SmallVector<StringRef> args = {fatbinary, "-64", create};
    args.append(specs.begin(), specs.end());
    std::optional<StringRef> redirects[] = {std::nullopt, *log, *log};
    std::string error;
    if (llvm::sys::ExecuteAndWait(fatbinary, args, std::nullopt, redirects, 0,
                                  0, &error) != 0) {
      auto message = llvm::MemoryBuffer::getFile(*log);
      return binary.emitError("fatbinary failed: ")
             << (message ? (*message)->getBuffer() : error);
    }
    auto contents = llvm::MemoryBuffer::getFile(*fatbin, /*IsText=*/false,
                                                /*RequiresNullTerminator=*/false);
    if (!contents)
      return binary.emitError("cannot read ") << *fatbin;
    return (*contents)->getBuffer().str();
  }
};
} // namespace
