//===- HostCodegen.cpp - LLVM code for the host CPU -------------------------===//

#include "compiler/target/cpu/HostCodegen.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace llvm;

Expected<std::unique_ptr<TargetMachine>>
mlir::gacc::createHostTargetMachine(bool pic) {
  auto builder = orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  if (pic)
    builder->setRelocationModel(Reloc::PIC_);
  return builder->createTargetMachine();
}

void mlir::gacc::optimizeForHost(Module &module, TargetMachine *tm) {
  LoopAnalysisManager loops;
  FunctionAnalysisManager functions;
  CGSCCAnalysisManager cgscc;
  ModuleAnalysisManager modules;
  PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  PassBuilder builder(tm, tuning);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  builder.buildPerModuleDefaultPipeline(OptimizationLevel::O2)
      .run(module, modules);
}

void mlir::gacc::constructorsToFunctions(Module &module, StringRef load,
                                         StringRef unload) {
  for (auto [global, name] : {std::pair{"llvm.global_ctors", load},
                              std::pair{"llvm.global_dtors", unload}}) {
    auto *function = Function::Create(
        FunctionType::get(Type::getVoidTy(module.getContext()), false),
        GlobalValue::ExternalLinkage, name, module);
    IRBuilder<> b(BasicBlock::Create(module.getContext(), "entry", function));
    if (GlobalVariable *list = module.getGlobalVariable(global)) {
      // { priority, function, data } entries, in priority order already.
      if (auto *entries = dyn_cast<ConstantArray>(list->getInitializer()))
        for (Value *entry : entries->operands())
          b.CreateCall(FunctionCallee(
              FunctionType::get(b.getVoidTy(), false),
              cast<ConstantStruct>(entry)->getOperand(1)));
      list->eraseFromParent();
    }
    b.CreateRetVoid();
  }
}

void mlir::gacc::importThroughPointers(Module &module,
                                       ArrayRef<std::string> imports,
                                       StringRef prefix) {
  auto *pointer = PointerType::getUnqual(module.getContext());
  for (const std::string &name : imports) {
    Function *function = module.getFunction(name);
    if (!function || !function->isDeclaration())
      continue;
    auto *slot = new GlobalVariable(module, pointer, /*isConstant=*/false,
                                    GlobalValue::ExternalLinkage,
                                    ConstantPointerNull::get(pointer),
                                    (prefix + name).str());
    for (User *user : make_early_inc_range(function->users())) {
      auto *call = cast<CallInst>(user);
      IRBuilder<> b(call);
      call->setCalledOperand(b.CreateLoad(pointer, slot));
    }
    function->eraseFromParent();
  }
}

Expected<std::string> mlir::gacc::emitObject(Module &module,
                                             TargetMachine &tm) {
  SmallString<0> object;
  raw_svector_ostream os(object);
  legacy::PassManager codegen;
  if (tm.addPassesToEmitFile(codegen, os, nullptr,
                             CodeGenFileType::ObjectFile))
    return createStringError("the host target cannot emit object files");
  codegen.run(module);
  return std::string(object.str());
}

Expected<std::string> mlir::gacc::linkSharedObject(StringRef object) {
  ErrorOr<std::string> cc = sys::findProgramByName("cc");
  if (!cc)
    return createStringError("no C compiler driver 'cc' to link the host "
                             "code (Debian: apt install gcc)");
  SmallString<128> objectPath, libraryPath;
  if (std::error_code ec =
          sys::fs::createTemporaryFile("gacc-host", "o", objectPath))
    return createStringError(ec, "cannot create a temporary file");
  if (std::error_code ec =
          sys::fs::createTemporaryFile("gacc-host", "so", libraryPath)) {
    sys::fs::remove(objectPath);
    return createStringError(ec, "cannot create a temporary file");
  }
  scope_exit cleanup([&] {
    sys::fs::remove(objectPath);
    sys::fs::remove(libraryPath);
  });
  {
    std::error_code ec;
    raw_fd_ostream out(objectPath, ec);
    if (ec)
      return createStringError(ec, "cannot write " + objectPath);
    out << object;
  }
  std::string message;
  StringRef args[] = {*cc, "-shared", "-o", libraryPath, objectPath, "-lm"};
  if (sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0, &message) != 0)
    return createStringError("linking the host code with " + *cc +
                             " failed" +
                             (message.empty() ? "" : ": " + message));
  ErrorOr<std::unique_ptr<MemoryBuffer>> library =
      MemoryBuffer::getFile(libraryPath);
  if (!library)
    return createStringError(library.getError(), "cannot read " + libraryPath);
  return (*library)->getBuffer().str();
}
