//===- CApi.cpp - compile a trainer from C, in-process --------------------===//

#include "compiler/jit/Jit.h"
#include "compiler/jit/c_api.h"
#include "gacc/runtime/CApiTrainer.h"

using namespace gacc::rt;

extern "C" int gacc_trainer_compile(const char *mlir, const char *name,
                                    const char *options, gacc_trainer **out) {
  mlir::gacc::TrainingPipelineOptions parsed;
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (options && failed(parsed.parseFromString(options, os)))
    return reportCApiStatus(
        Status::error("bad training options '" + std::string(options) + "'" +
                      (errors.empty() ? "" : ": " + errors)));
  auto handle = std::make_unique<gacc_trainer>();
  if (int rc = reportCApiStatus(mlir::gacc::compileTrainer(
          mlir, name ? name : "<string>", parsed, handle->trainer)))
    return rc;
  *out = handle.release();
  return 0;
}
