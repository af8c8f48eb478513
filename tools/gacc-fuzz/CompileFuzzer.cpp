//===- CompileFuzzer.cpp - fuzz parse, verify and the pipelines -----------===//
//
// The bytes are a model's text. They go through the front door every tool
// uses (parse, verify) and, when that accepts them, through lowerStep: the
// whole CPU pipeline that `gacc compile` and the JIT run, down to the LLVM
// dialect, then (from a fresh parse) the cuda-emulated one, which runs the
// CUDA target's kernel mapping (matmul tiles, block-kernel chains, host
// code moved into kernels) and the emulation of its launches. Rejecting an
// input with a diagnostic is the expected outcome; a crash, a sanitizer
// report, or a failure that reports nothing (the user would see "cannot
// compile" and no reason) is a finding.
//
//===----------------------------------------------------------------------===//

#include "compiler/Describe.h"
#include "compiler/InitAll.h"
#include "compiler/Pipelines.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mlir;
using mlir::gacc::StepTarget;

// Debian's libMLIR is not instrumented. LLVM's bump allocator, inlined into
// this instrumented code, poisons each new slab for ASan and unpoisons what
// it hands out; the copy inside libMLIR hands out the same slabs without
// unpoisoning them, which ASan would report. gacc poisons nothing itself.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static DialectRegistry *registry = [] {
    auto *registry = new DialectRegistry;
    mlir::gacc::registerAllDialects(*registry);
    return registry;
  }();
  // A fresh context per input: a finding reproduces from its input alone.
  MLIRContext context(*registry, MLIRContext::Threading::DISABLED);
  unsigned errors = 0;
  ScopedDiagnosticHandler countErrors(&context, [&](Diagnostic &diagnostic) {
    errors += diagnostic.getSeverity() == DiagnosticSeverity::Error;
    return success();
  });

  // MLIR's lexer reads up to a NUL after the buffer, which every gacc
  // reader provides (files, getMemBufferCopy); libFuzzer's bytes have none.
  std::string text(reinterpret_cast<const char *>(data), size);
  bool failedSilently = false;
  for (StepTarget kind : {StepTarget::Cpu, StepTarget::CudaEmulated}) {
    errors = 0;
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    mlir::gacc::TrainingPipelineOptions options;
    options.target = mlir::gacc::targetName(kind).str();
    if (!module || failed(mlir::gacc::lowerStep(*module, options))) {
      failedSilently = errors == 0;
      break;
    }
  }
  if (failedSilently) {
    std::fprintf(stderr, "gacc-compile-fuzzer: rejected with no error\n");
    std::abort();
  }
  return 0;
}
