//===- HostCodegen.cpp - LLVM code for the host CPU -------------------------===//

#include "compiler/target/cpu/HostCodegen.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Analysis/CFG.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
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
#include "llvm/Transforms/Utils/Cloning.h"

#include <atomic>
#include <thread>

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

void mlir::gacc::optimizeForHost(Module &module, TargetMachine *tm,
                                  OptimizationLevel level) {
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
  builder.buildPerModuleDefaultPipeline(level).run(module, modules);
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

namespace {
bool hasLoop(const Function &function) {
  SmallVector<std::pair<const BasicBlock *, const BasicBlock *>> backEdges;
  FindFunctionBackedges(function, backEdges);
  return !backEdges.empty();
}

/// Assigns each function definition of `module` a part: 0 for those without
/// loops, the others balanced by instruction count over parts 1 to
/// `threads`. Returns the number of parts.
unsigned partition(Module &module, unsigned threads,
                   DenseMap<const GlobalValue *, unsigned> &partOf) {
  SmallVector<Function *> looped;
  for (Function &function : module)
    if (!function.isDeclaration() && hasLoop(function))
      looped.push_back(&function);
  // Part 0 is light next to the loops when the model is shallow: the loops
  // get a part per thread.
  unsigned parts = 1 + std::min<unsigned>(looped.size(), threads);
  llvm::stable_sort(looped, [](Function *a, Function *b) {
    return a->getInstructionCount() > b->getInstructionCount();
  });
  SmallVector<uint64_t> load(parts, 0);
  for (Function *function : looped) {
    unsigned lightest = 1;
    for (unsigned part = 2; part < parts; ++part)
      if (load[part] < load[lightest])
        lightest = part;
    partOf[function] = lightest;
    load[lightest] += function->getInstructionCount();
  }
  return parts;
}
} // namespace

/// Defines `__truncsfbf2` (f32 to bf16, round to nearest even, a NaN kept
/// a quiet NaN), hidden in the step's code. Without AVX512-BF16, LLVM's
/// backend calls it wherever it must round a bf16 value it promoted to f32
/// (a bf16 scalar argument of an outlined loop nest), and Debian 12's
/// libgcc (GCC 12) does not have it. The step's own conversions are
/// integer operations by then (gacc-cpu-expand-bf16-conversions).
static void defineBf16Rounding(Module &module) {
  constexpr StringLiteral name = "__truncsfbf2";
  if (Function *existing = module.getFunction(name))
    if (!existing->isDeclaration())
      return;
  LLVMContext &context = module.getContext();
  FunctionCallee callee = module.getOrInsertFunction(
      name, FunctionType::get(Type::getBFloatTy(context),
                              {Type::getFloatTy(context)}, false));
  auto *function = cast<Function>(callee.getCallee());
  function->setLinkage(GlobalValue::ExternalLinkage);
  function->setVisibility(GlobalValue::HiddenVisibility);
  IRBuilder<> b(BasicBlock::Create(context, "entry", function));
  Value *x = function->getArg(0);
  Value *bits = b.CreateBitCast(x, b.getInt32Ty());
  Value *lowestKept = b.CreateAnd(b.CreateLShr(bits, 16), 1);
  Value *rounded = b.CreateLShr(
      b.CreateAdd(bits, b.CreateAdd(lowestKept, b.getInt32(0x7fff))), 16);
  Value *quietNaN = b.CreateOr(b.CreateLShr(bits, 16), 0x40);
  Value *half = b.CreateSelect(b.CreateFCmpUNO(x, x), quietNaN, rounded);
  b.CreateRet(
      b.CreateBitCast(b.CreateTrunc(half, b.getInt16Ty()), b.getBFloatTy()));
}

Expected<std::vector<std::string>>
mlir::gacc::compileForHost(Module &module, unsigned threads) {
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  defineBf16Rounding(module);
  // Each definition goes to one part and is declared in the others, so
  // what was local to the module becomes hidden in the shared object.
  for (GlobalValue &value : module.global_values()) {
    if (value.isDeclaration())
      continue;
    if (!value.hasName())
      value.setName("gacc.unnamed");
    if (value.hasLocalLinkage()) {
      value.setLinkage(GlobalValue::ExternalLinkage);
      value.setVisibility(GlobalValue::HiddenVisibility);
    }
  }
  DenseMap<const GlobalValue *, unsigned> partOf;
  unsigned parts = partition(module, threads, partOf);
  // LLVMContexts are not shared between threads: each part travels as
  // bitcode into its own.
  std::vector<SmallVector<char, 0>> bitcode(parts);
  for (unsigned part = 0; part < parts; ++part) {
    ValueToValueMapTy mapping;
    std::unique_ptr<Module> piece =
        CloneModule(module, mapping, [&](const GlobalValue *value) {
          return partOf.lookup(value) == part;
        });
    raw_svector_ostream os(bitcode[part]);
    WriteBitcodeToFile(*piece, os);
  }

  std::vector<std::string> objects(parts), errors(parts);
  std::atomic<unsigned> next{0};
  auto work = [&] {
    for (unsigned part; (part = next++) < parts;) {
      auto fail = [&](Error error) { errors[part] = toString(std::move(error)); };
      LLVMContext context;
      Expected<std::unique_ptr<Module>> piece = parseBitcodeFile(
          MemoryBufferRef(StringRef(bitcode[part].data(), bitcode[part].size()),
                          "gacc-part"),
          context);
      if (!piece) {
        fail(piece.takeError());
        continue;
      }
      Expected<std::unique_ptr<TargetMachine>> tm =
          createHostTargetMachine(/*pic=*/true);
      if (!tm) {
        fail(tm.takeError());
        continue;
      }
      optimizeForHost(**piece, tm->get(),
                      part == 0 ? OptimizationLevel::O1 : OptimizationLevel::O2);
      if (part == 0)
        (*tm)->setOptLevel(CodeGenOptLevel::None);
      Expected<std::string> object = emitObject(**piece, **tm);
      if (!object) {
        fail(object.takeError());
        continue;
      }
      objects[part] = std::move(*object);
    }
  };
  std::vector<std::thread> workers;
  for (unsigned i = 1; i < std::min(threads, parts); ++i)
    workers.emplace_back(work);
  work();
  for (std::thread &worker : workers)
    worker.join();
  for (const std::string &error : errors)
    if (!error.empty())
      return createStringError(error);
  return objects;
}

Expected<std::string>
mlir::gacc::linkSharedObject(ArrayRef<std::string> objects) {
  ErrorOr<std::string> cc = sys::findProgramByName("cc");
  if (!cc)
    return createStringError("no C compiler driver 'cc' to link the host "
                             "code (Debian: apt install gcc)");
  SmallVector<std::string> paths;
  SmallString<128> libraryPath;
  scope_exit cleanup([&] {
    for (const std::string &path : paths)
      sys::fs::remove(path);
    if (!libraryPath.empty())
      sys::fs::remove(libraryPath);
  });
  for (const std::string &object : objects) {
    SmallString<128> path;
    if (std::error_code ec =
            sys::fs::createTemporaryFile("gacc-host", "o", path))
      return createStringError(ec, "cannot create a temporary file");
    paths.push_back(path.str().str());
    std::error_code ec;
    raw_fd_ostream out(path, ec);
    if (ec)
      return createStringError(ec, "cannot write " + path);
    out << object;
  }
  if (std::error_code ec =
          sys::fs::createTemporaryFile("gacc-host", "so", libraryPath))
    return createStringError(ec, "cannot create a temporary file");
  std::string message;
  SmallVector<StringRef> args = {*cc, "-shared", "-o", libraryPath};
  args.append(paths.begin(), paths.end());
  args.push_back("-lm");
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
