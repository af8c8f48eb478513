//===- gacc.cpp - the gacc command-line tool ------------------------------===//
//
//   gacc compile MODEL.mlir   compile a training step ahead of time
//   gacc run MODEL.mlir       train
//   gacc plan MODEL.mlir      report the memory a step needs, without running
//   gacc tune MODEL.mlir      the fastest configuration that fits a budget
//   gacc import FILE.py:FACTORY   a PyTorch module as MODEL.mlir (Python)
//   gacc plot RUN.jsonl -o loss.png   draw training metrics (Python)
//
// Every subcommand parses and verifies the model first; errors are reported
// as file:line:col diagnostics with a non-zero exit.
//
//===----------------------------------------------------------------------===//

#include "Run.h"
#include "Tune.h"
#include "compiler/ConfigureStep.h"
#include "compiler/InitAll.h"
#include "compiler/aot/Aot.h"
#include "compiler/aot/CompileCache.h"
#include "gacc/runtime/File.h"
#include "gacc/runtime/HostCode.h"
#include "gacc/runtime/ThreadPool.h"
#include "compiler/jit/Jit.h"
#include "compiler/target/cuda/KernelCodegen.h"
#include "gacc/runtime/DeviceMemory.h"
#include "compiler/LoadModel.h"
#include "compiler/plan/MemoryPlan.h"
#include "dialects/gacc/GaccDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>

using namespace llvm;
using mlir::FailureOr;

static cl::SubCommand
    compileCommand("compile",
                   "Compile a training step ahead of time into an artifact");
static cl::SubCommand runCommand(
    "run", "Train a model (.mlir, compiled just in time, or a .gacc artifact)");
static cl::SubCommand
    planCommand("plan",
                "Report the memory a training step needs, without running it");

// `import` and `plot` are parsed by Python tools (bindings/python/gacc/
// import_cli.py, plot_cli.py), which main() hands the arguments to; declared
// here for `gacc --help`.
static cl::SubCommand importCommand(
    "import", "Write a PyTorch module's training step as gacc MLIR and its "
              "weights as safetensors (gacc import --help)");

static cl::SubCommand tuneCommand(
    "tune", "Find the fastest configuration (precision, remat, micro-batch, "
            "optimizer, ZeRO stage) whose planned peak fits --memory-budget: "
            "planned without running, the best few measured");

static cl::SubCommand plotCommand(
    "plot", "Draw `gacc run --metrics` files (train and eval loss against the "
            "step) as a PNG: gacc plot RUN.jsonl... -o loss.png (Python, "
            "matplotlib; gacc plot --help)");

static cl::SubCommand consolidateCommand(
    "consolidate", "Turn a sharded (ZeRO) checkpoint directory into one "
                   "checkpoint that any number of ranks resumes from");

static cl::SubCommand
    exportCommand("export",
                  "Write a checkpoint's weights alone, by their names, as "
                  "safetensors (--merge-lora folds LoRA adapters in)");

static cl::opt<std::string> inputPath(cl::Positional, cl::Required,
                                      cl::desc("<model.mlir | model.gacc>"),
                                      cl::sub(compileCommand),
                                      cl::sub(runCommand), cl::sub(planCommand), cl::sub(tuneCommand),
                                      cl::sub(consolidateCommand),
                                      cl::sub(exportCommand),
                                      cl::sub(tuneCommand));
static cl::OptionCategory modelCategory("Model and optimizer options");
static cl::opt<std::string>
    stepName("step",
             cl::desc("The gacc.train_step to use when the model has several"),
             cl::value_desc("name"), cl::sub(compileCommand),
             cl::sub(runCommand), cl::sub(planCommand), cl::sub(tuneCommand), cl::cat(modelCategory));

static cl::OptionCategory compileCategory("Compile options");
static cl::opt<std::string> outputPath(
    "o",
    cl::desc("The artifact (compile), checkpoint (consolidate), weights "
             "(export) or chosen configuration (tune) to write"),
    cl::value_desc("file"), cl::sub(compileCommand), cl::sub(tuneCommand),
    cl::sub(consolidateCommand), cl::sub(exportCommand),
    cl::cat(compileCategory));
static cl::opt<bool> mergeLora(
    "merge-lora",
    cl::desc("Write each LoRA-adapted weight W as W + (alpha/r)·B·A and "
             "leave the adapters out, so that the file loads into the model "
             "without them"),
    cl::init(false), cl::sub(exportCommand));
static cl::opt<mlir::gacc::EmitKind> emitKind(
    "emit", cl::desc("Write an intermediate stage instead of the artifact"),
    cl::values(clEnumValN(mlir::gacc::EmitKind::Mlir, "mlir",
                          "the LLVM dialect the pipeline ends with"),
               clEnumValN(mlir::gacc::EmitKind::Llvm, "llvm",
                          "optimized LLVM IR"),
               clEnumValN(mlir::gacc::EmitKind::Object, "obj",
                          "the host object code"),
               clEnumValN(mlir::gacc::EmitKind::Ptx, "ptx",
                          "the CUDA kernels' PTX (--target cuda)")),
    cl::init(mlir::gacc::EmitKind::Artifact), cl::sub(compileCommand),
    cl::cat(compileCategory));
static cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the IR after every pass (compiler debugging; the "
             "result is verified once either way)"),
    cl::init(false), cl::sub(compileCommand), cl::sub(runCommand),
    cl::sub(planCommand), cl::sub(tuneCommand), cl::cat(compileCategory));
static cl::opt<bool> timeReport(
    "time-report",
    cl::desc("Print where the time went: the passes, translation to LLVM "
             "IR, LLVM's code generation, linking, the compile cache and "
             "loading the code (-mlir-timing's report, with the cache)"),
    cl::init(false), cl::sub(compileCommand), cl::sub(runCommand),
    cl::cat(compileCategory));
static cl::opt<bool> noCache(
    "no-cache",
    cl::desc("Compile even if the compile cache ($GACC_CACHE_DIR, default "
             "~/.cache/gacc) holds the step, and do not store it"),
    cl::init(false), cl::sub(compileCommand), cl::sub(runCommand),
    cl::sub(planCommand), cl::sub(tuneCommand), cl::cat(compileCategory));
static cl::opt<std::string>
    target("target",
           cl::desc("cpu (the default), cuda (PTX kernels on the first GPU) or "
                    "cuda-emulated (the CUDA kernels run on the CPU, block and "
                    "thread ids as loop indices: tests them without a GPU); "
                    "gacc plan plans the step as that target compiles it"),
           cl::init("cpu"), cl::sub(compileCommand), cl::sub(runCommand),
           cl::sub(planCommand), cl::cat(compileCategory));

static cl::opt<std::string>
    lora("lora",
         cl::desc("Train low-rank adapters instead of the model (as peft): "
                  "rank=8,alpha=16,dropout=0.05,targets=REGEX, the regular "
                  "expression over whole parameter names (gacc-lora)"),
         cl::value_desc("options"), cl::sub(compileCommand),
         cl::sub(runCommand), cl::sub(planCommand), cl::sub(tuneCommand), cl::cat(modelCategory));
static cl::opt<std::string> optimizerName(
    "optimizer",
    cl::desc("Train with this optimizer instead of the model's: sgd, adam, "
             "adamw, adamw8bit (bitsandbytes') or adafactor (as "
             "transformers' --optim adafactor), keeping its learning rate "
             "and weight decay"),
    cl::value_desc("name"), cl::sub(compileCommand), cl::sub(runCommand),
    cl::sub(planCommand), cl::sub(tuneCommand), cl::cat(modelCategory));
static cl::opt<std::string> lrSchedule(
    "lr-schedule",
    cl::desc("Learning-rate schedule: constant, or cosine, linear or "
             "polynomial after a linear warmup, as KIND,warmup=N,total=N,"
             "min_lr=X,power=X (gacc run: total defaults to the run's last "
             "step)"),
    cl::value_desc("spec"), cl::sub(compileCommand), cl::sub(runCommand),
    cl::sub(planCommand), cl::sub(tuneCommand), cl::cat(modelCategory));
static cl::opt<std::string> learningRate(
    "lr", cl::desc("Base learning rate (default: the optimizer's)"),
    cl::value_desc("X"), cl::sub(compileCommand), cl::sub(runCommand),
    cl::sub(planCommand), cl::sub(tuneCommand), cl::cat(modelCategory));
static cl::opt<std::string> weightDecay(
    "weight-decay", cl::desc("Weight decay (default: the optimizer's)"),
    cl::value_desc("X"), cl::sub(compileCommand), cl::sub(runCommand),
    cl::sub(planCommand), cl::sub(tuneCommand), cl::cat(modelCategory));
static cl::opt<std::string> gradClip(
    "grad-clip",
    cl::desc("Clip the global gradient norm to this (default: the step's "
             "grad_clip_norm)"),
    cl::value_desc("X"), cl::sub(compileCommand), cl::sub(runCommand),
    cl::sub(planCommand), cl::sub(tuneCommand), cl::cat(modelCategory));

static cl::OptionCategory runCategory("Training options");
static cl::opt<uint64_t>
    steps("steps",
          cl::desc("Train until this step (default 100; a resumed run does "
                   "the rest)"),
          cl::value_desc("N"), cl::init(100), cl::sub(runCommand),
          cl::cat(runCategory));
static cl::opt<uint64_t>
    epochs("epochs",
           cl::desc("Train for this many passes over the data instead"),
           cl::value_desc("N"), cl::sub(runCommand), cl::cat(runCategory));
static cl::opt<uint64_t> seed("seed",
                              cl::desc("Seed of initialization and data order"),
                              cl::value_desc("N"), cl::init(0),
                              cl::sub(runCommand), cl::cat(runCategory));
static cl::opt<unsigned> threadCount(
    "threads",
    cl::desc("Threads the step runs on (default: $GACC_NUM_THREADS, else "
             "every core); results do not depend on it"),
    cl::value_desc("N"), cl::init(0), cl::sub(runCommand),
    cl::cat(runCategory));

static cl::OptionCategory dataCategory("Data options");
static cl::opt<std::string> dataPath(
    "data",
    cl::desc("Training examples: a .safetensors file or a directory of "
             "<input>.npy files (default: synthetic data)"),
    cl::value_desc("path"), cl::sub(runCommand), cl::cat(dataCategory));
static cl::opt<std::string> tokensPath(
    "tokens",
    cl::desc("Training text: a token file (nanoGPT's train.bin), read in "
             "windows of the context + 1 tokens"),
    cl::value_desc("file"), cl::sub(runCommand), cl::cat(dataCategory));
static cl::opt<gacc::rt::TokenFileOptions::Width> tokenWidth(
    "token-dtype", cl::desc("The token files' integers"),
    cl::values(clEnumValN(gacc::rt::TokenFileOptions::Width::U16, "uint16",
                          "2 bytes (the default; vocabularies to 65536)"),
               clEnumValN(gacc::rt::TokenFileOptions::Width::U32, "uint32",
                          "4 bytes")),
    cl::init(gacc::rt::TokenFileOptions::Width::U16), cl::sub(runCommand),
    cl::cat(dataCategory));
static cl::opt<gacc::rt::TokenFileOptions::Sampling> tokenSampling(
    "token-sampling", cl::desc("How training windows are drawn"),
    cl::values(clEnumValN(gacc::rt::TokenFileOptions::Sampling::Epochs,
                          "epochs",
                          "every non-overlapping window once per epoch, "
                          "shuffled (the default)"),
               clEnumValN(gacc::rt::TokenFileOptions::Sampling::Random,
                          "random",
                          "uniform random starts, as nanoGPT's get_batch")),
    cl::init(gacc::rt::TokenFileOptions::Sampling::Epochs), cl::sub(runCommand),
    cl::cat(dataCategory));
static cl::opt<std::string> evalDataPath(
    "eval-data",
    cl::desc("Evaluation examples, as --data: the loss (and a classifier's "
             "accuracy) over every one"),
    cl::value_desc("path"), cl::sub(runCommand), cl::cat(dataCategory));
static cl::opt<std::string> evalTokensPath(
    "eval-tokens",
    cl::desc("Evaluation text, as --tokens: the loss over every window"),
    cl::value_desc("file"), cl::sub(runCommand), cl::cat(dataCategory));
static cl::opt<uint64_t>
    evalEvery("eval-every",
              cl::desc("Evaluate every N steps as well as at the end"),
              cl::value_desc("N"), cl::init(0), cl::sub(runCommand),
              cl::cat(dataCategory));
static cl::opt<unsigned> prefetchDepth(
    "prefetch",
    cl::desc("Batches a background thread prepares ahead of the step "
             "(default 4; 0 reads each when the step needs it)"),
    cl::value_desc("N"), cl::init(4), cl::sub(runCommand),
    cl::cat(dataCategory));

static cl::OptionCategory checkpointCategory("Checkpoint options");
static cl::opt<std::string>
    initPath("init", cl::desc("Load initial parameters (.safetensors)"),
             cl::value_desc("file"), cl::sub(runCommand),
             cl::cat(checkpointCategory));
static cl::opt<std::string>
    savePath("save",
             cl::desc("At the end, save parameters, optimizer state and step "
                      "(.safetensors)"),
             cl::value_desc("file"), cl::sub(runCommand),
             cl::cat(checkpointCategory));
static cl::opt<std::string> saveShardedPath(
    "save-sharded",
    cl::desc("ZeRO: at the end, save one file per rank and an index into a "
             "directory, without gathering"),
    cl::value_desc("dir"), cl::sub(runCommand), cl::cat(checkpointCategory));
static cl::opt<uint64_t> saveEvery(
    "save-every",
    cl::desc("Save a checkpoint every N steps (and at the end) into "
             "--checkpoint-dir; a signal (Ctrl-C, SIGTERM) saves one too"),
    cl::value_desc("N"), cl::init(0), cl::sub(runCommand),
    cl::cat(checkpointCategory));
static cl::opt<uint64_t>
    keepLast("keep-last",
             cl::desc("Keep only the newest K checkpoints of --save-every"),
             cl::value_desc("K"), cl::init(0), cl::sub(runCommand),
             cl::cat(checkpointCategory));
static cl::opt<std::string> checkpointDir(
    "checkpoint-dir",
    cl::desc("Where periodic checkpoints go, as step-<N>.safetensors "
             "(default: checkpoints)"),
    cl::value_desc("dir"), cl::init("checkpoints"), cl::sub(runCommand),
    cl::cat(checkpointCategory));
static cl::opt<std::string> resumePath(
    "resume",
    cl::desc("Continue from a checkpoint, a directory of --save-sharded, or "
             "'latest' (the newest in --checkpoint-dir)"),
    cl::value_desc("file|dir|latest"), cl::sub(runCommand),
    cl::cat(checkpointCategory));

static cl::OptionCategory outputCategory("Output options");
static cl::opt<std::string> metricsPath(
    "metrics",
    cl::desc("Write one JSON object per step (loss, lr, grad_norm, "
             "samples_per_s, timing, epoch) and per evaluation (gacc plot "
             "draws them)"),
    cl::value_desc("file.jsonl"), cl::sub(runCommand), cl::cat(outputCategory));
static cl::opt<uint64_t> logEvery(
    "log-every",
    cl::desc("Not on a terminal: print a line every N steps (default 10)"),
    cl::value_desc("N"), cl::init(10), cl::sub(runCommand),
    cl::cat(outputCategory));
static cl::opt<std::string> dumpGradsPath(
    "dump-grads",
    cl::desc("Write the first step's gradients, named like the parameters"),
    cl::value_desc("file.safetensors"), cl::sub(runCommand),
    cl::cat(outputCategory));

static cl::OptionCategory batchCategory("Batch options");
static cl::opt<std::string> globalBatch(
    "batch",
    cl::desc("Global batch size: rebuild the model for this many examples per "
             "step (overrides the model's batch_size)"),
    cl::value_desc("B"), cl::sub(compileCommand), cl::sub(runCommand),
    cl::sub(planCommand), cl::sub(tuneCommand), cl::cat(batchCategory));
static cl::opt<std::string> microBatch(
    "micro-batch",
    cl::desc("Micro-batch size: accumulate gradients over ceil(batch / m) "
             "micro-batches (overrides the model's micro_batch_size)"),
    cl::value_desc("M"), cl::sub(compileCommand), cl::sub(runCommand),
    cl::sub(planCommand), cl::sub(tuneCommand), cl::cat(batchCategory));
static cl::opt<std::string> accumulationSteps(
    "accumulation-steps",
    cl::desc("Accumulate over K micro-batches of ceil(batch / K) examples"),
    cl::value_desc("K"), cl::sub(compileCommand), cl::sub(runCommand),
    cl::sub(planCommand), cl::sub(tuneCommand), cl::cat(batchCategory));

static cl::opt<std::string> memoryBudget(
    "memory-budget",
    cl::desc("Use the largest micro-batch whose planned peak fits in this "
             "many bytes (8GiB, 512MiB, 1.5GB, 1e9, ...)"),
    cl::value_desc("bytes"), cl::sub(compileCommand), cl::sub(runCommand),
    cl::sub(planCommand), cl::sub(tuneCommand),
    cl::cat(batchCategory));

static cl::OptionCategory transformCategory("Transform options");
static cl::opt<std::string> rematPolicy(
    "remat",
    cl::desc("Rematerialization policy: none, blocks, sqrt, matmuls or "
             "budget (overrides the step's remat attribute)"),
    cl::value_desc("policy"), cl::sub(compileCommand), cl::sub(runCommand),
    cl::sub(planCommand), cl::sub(tuneCommand),
    cl::cat(transformCategory));
static cl::opt<std::string> rematBudget(
    "remat-budget",
    cl::desc("With --remat=budget: the peak to stay within (8GiB, ...)"),
    cl::value_desc("bytes"), cl::sub(compileCommand), cl::sub(runCommand),
    cl::sub(planCommand), cl::sub(tuneCommand),
    cl::cat(transformCategory));

static cl::opt<std::string> precision(
    "precision",
    cl::desc("Compute precision: f32, f16 (with dynamic loss scaling) or "
             "bf16, with f32 master weights (overrides the step's precision)"),
    cl::value_desc("type"), cl::sub(compileCommand), cl::sub(runCommand),
    cl::sub(planCommand), cl::sub(tuneCommand),
    cl::cat(transformCategory));

static cl::opt<std::string> ranks(
    "ranks",
    cl::desc("ZeRO data-parallel ranks: the step for one of N processes, each "
             "reading batch/N examples (gacc run under mpirun -np N: N "
             "by default)"),
    cl::value_desc("N"), cl::sub(compileCommand), cl::sub(runCommand),
    cl::sub(planCommand), cl::sub(tuneCommand), cl::cat(transformCategory));
static cl::opt<std::string> zeroStage(
    "zero-stage",
    cl::desc("ZeRO stage: 0 (gradients all-reduced), 1 (optimizer state "
             "sharded), 2 (and gradients), 3 (and parameters)"),
    cl::value_desc("S"), cl::sub(compileCommand), cl::sub(runCommand),
    cl::sub(planCommand), cl::sub(tuneCommand), cl::cat(transformCategory));

static cl::OptionCategory planCategory("Plan options");
static cl::opt<bool> planJson("json",
                              cl::desc("Print the plan (tune: every "
                                       "configuration and the choice) as JSON"),
                              cl::sub(planCommand), cl::sub(tuneCommand), cl::cat(planCategory));
static cl::opt<bool> planMeasure(
    "measure",
    cl::desc("Also compile and run one step (synthetic data) and print the "
             "measured peak next to the plan's"),
    cl::sub(planCommand), cl::cat(planCategory));

static cl::OptionCategory tuneCategory("Tune options");
static cl::opt<std::string> tuneAllow(
    "allow",
    cl::desc("What the search (tune, run --auto) may choose, as KEY=V1,V2 "
             "lists: precision= "
             "(default f32,bf16), remat= (none,blocks,sqrt,matmuls,budget), "
             "optimizer= (default: the model's); --precision, --remat, "
             "--optimizer and --zero-stage fix one"),
    cl::value_desc("lists"), cl::sub(tuneCommand), cl::sub(runCommand),
    cl::cat(tuneCategory));
static cl::opt<unsigned> tuneMeasureTop(
    "measure-top",
    cl::desc("Measure at most this many configurations: the best by the "
             "cost model, and of those it predicts within 10% of it, the "
             "best of each other precision and micro-batch (default 3)"),
    cl::value_desc("K"), cl::init(3), cl::sub(tuneCommand),
    cl::cat(tuneCategory));
static cl::opt<unsigned> tuneMeasureSteps(
    "measure-steps",
    cl::desc("Steps each measurement times at most (more while under "
             "0.25 s), stopping once two in a row agree within 3%; with "
             "several configurations measured, in each of two passes "
             "(default 3)"),
    cl::value_desc("N"), cl::init(3), cl::sub(tuneCommand),
    cl::cat(tuneCategory));
static cl::opt<bool> autoTune(
    "auto",
    cl::desc("Tune first (gacc tune with --memory-budget and --allow), then "
             "train with the fastest configuration that fits"),
    cl::sub(runCommand), cl::cat(batchCategory));
static cl::opt<std::string> configPath(
    "config",
    cl::desc("Training options from a file gacc tune wrote (flags given "
             "too take precedence)"),
    cl::value_desc("tuned.json"), cl::sub(compileCommand), cl::sub(runCommand),
    cl::sub(planCommand), cl::cat(batchCategory));

/// The flags that are training options, named as those: their text goes
/// through the options' own parser (TrainingPipelineOptions), as gacc-opt's
/// pipeline strings and C's gacc_trainer_compile do.
static cl::opt<std::string> *const trainingFlags[] = {
    &stepName,          &target,       &globalBatch,  &microBatch,
    &accumulationSteps, &memoryBudget, &rematPolicy,  &rematBudget,
    &precision,         &ranks,        &zeroStage,    &lora,
    &optimizerName,     &lrSchedule,   &learningRate, &weightDecay,
    &gradClip};

/// Whether gacc run lets a decaying --lr-schedule end at the run's last
/// step (its total not given): Run.cpp sets it once the data says when.
static bool scheduleEndsWithRun = false;

/// The training options of the --config file (gacc tune's choice), as a
/// pipeline string; empty without one, nothing after an error.
static std::optional<std::string> configText() {
  if (configPath.empty())
    return std::string();
  std::string contents;
  if (gacc::rt::Status s = gacc::rt::readFile(configPath, contents); !s) {
    errs() << "gacc: error: " << s.message() << "\n";
    return std::nullopt;
  }
  Expected<json::Value> parsed = json::parse(contents);
  if (!parsed) {
    errs() << "gacc: error: " << configPath << ": not JSON: "
           << toString(parsed.takeError()) << "\n";
    return std::nullopt;
  }
  const json::Object *object = parsed->getAsObject();
  std::optional<StringRef> options =
      object ? object->getString("options") : std::nullopt;
  if (!options) {
    errs() << "gacc: error: " << configPath
           << ": no \"options\" string (a file gacc tune -o writes)\n";
    return std::nullopt;
  }
  return options->str();
}

/// The training options the flags (after --config's) give, as a pipeline
/// string, leaving out `excluded`; nothing after an error.
static std::optional<std::string>
trainingOptionsText(ArrayRef<cl::opt<std::string> *> excluded = {}) {
  std::optional<std::string> text = configText();
  if (!text)
    return std::nullopt;
  // The schedule tune chose (its activation budget) is for the step as the
  // file configures it: with any flag given too, the budget policy
  // searches again.
  if (llvm::any_of(trainingFlags, [](cl::opt<std::string> *flag) {
        return flag->getNumOccurrences() > 0;
      })) {
    SmallVector<StringRef> words;
    StringRef(*text).split(words, ' ', -1, false);
    llvm::erase_if(words, [](StringRef word) {
      return word.starts_with("remat-activation-budget=");
    });
    *text = llvm::join(words, " ");
  }
  for (cl::opt<std::string> *flag : trainingFlags) {
    if (!flag->getNumOccurrences() || llvm::is_contained(excluded, flag))
      continue;
    std::string value = flag->getValue();
    // A schedule that `gacc run` trains through ends with the run, whose
    // last step is known once the data is (--epochs): compiled with a total
    // no run reaches, and set then (one compiled step serves every length).
    if (flag == &lrSchedule && runCommand &&
        value.find("total=") == std::string::npos && value != "constant") {
      value += ",total=" + std::to_string(UINT32_MAX);
      scheduleEndsWithRun = true;
    }
    *text +=
        ((text->empty() ? "" : " ") + flag->ArgStr + "={" + value + "}").str();
  }
  // Under mpirun, a step compiled just in time is for the world's ranks,
  // as torchrun and DeepSpeed users expect.
  if (runCommand && !ranks.getNumOccurrences() && gacc::mpiWorldSize() > 1)
    *text += (text->empty() ? "" : " ") + std::string("ranks={") +
             std::to_string(gacc::mpiWorldSize()) + "}";
  return text;
}

/// The training options the flags give; one not given leaves it to the
/// model. A value its option cannot parse is an error.
static mlir::LogicalResult
trainingOptions(mlir::gacc::TrainingPipelineOptions &options) {
  std::optional<std::string> text = trainingOptionsText();
  if (!text)
    return mlir::failure();
  options.seed = seed.getValue();
  return options.parseFromString(*text);
}

namespace {
/// Parses and verifies the model and finds its step; null after an error.
struct LoadedModel {
  llvm::SourceMgr sourceMgr;
  mlir::MLIRContext context;
  mlir::SourceMgrDiagnosticHandler diagnostics{sourceMgr, &context};
  /// Remarks (what a memory or remat budget chose) read as the tool's notes.
  mlir::ScopedDiagnosticHandler remarks{
      &context, [](mlir::Diagnostic &diag) {
        if (diag.getSeverity() != mlir::DiagnosticSeverity::Remark)
          return mlir::failure();
        errs() << "gacc: " << diag.str() << "\n";
        return mlir::success();
      }};
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::gacc::TrainStepOp step;
  mlir::gacc::TrainingPipelineOptions options;

  explicit LoadedModel(mlir::DialectRegistry &registry) : context(registry) {
    // Users read the located message, not a dump of the offending op.
    context.printOpOnDiagnostic(false);
  }

  bool load() {
    if (failed(trainingOptions(options)))
      return false;
    module = mlir::gacc::loadModel(inputPath, sourceMgr, context);
    if (module)
      step = mlir::gacc::TrainStepOp::find(*module, stepName);
    return static_cast<bool>(step);
  }
};
} // namespace

/// The compile cache, unless --no-cache, or a flag asks to watch the
/// pipeline run (-mlir-timing, -mlir-print-ir-*, --verify-each), which a
/// cached step would skip.
static std::optional<mlir::gacc::CompileCache> compileCache() {
  if (noCache || verifyEach)
    return std::nullopt;
  // (registerMlirOptions moved the -mlir-* options to these subcommands.)
  for (cl::SubCommand *sub : {&compileCommand, &runCommand, &planCommand})
    for (const auto &[name, option] : cl::getRegisteredOptions(*sub))
      if (name.starts_with("mlir-") && option->getNumOccurrences())
        return std::nullopt;
  return mlir::gacc::CompileCache::fromEnvironment();
}

/// `gacc plan`: the memory plan, and with --measure one step's measurement.
static int plan(LoadedModel &model) {
  // The target decides which attention is fused, so what is planned.
  const std::string &planTarget = model.options.target;
  if (!mlir::gacc::parseStepTarget(planTarget)) {
    errs() << "gacc plan: error: --target " << planTarget
           << " is unknown (cpu, cuda or cuda-emulated)\n";
    return 1;
  }
  if (planMeasure && planTarget != "cpu") {
    errs() << "gacc plan: error: --measure runs the step on the CPU; "
              "`gacc run --target "
           << planTarget << "` prints what it measures there\n";
    return 1;
  }
  if (failed(mlir::gacc::configureTrainStep(model.step, model.options)))
    return 1;
  // (With --measure, compiling the step says it.)
  if (!planMeasure)
    mlir::gacc::warnIfBatchStatisticsDiffer(model.step);
  FailureOr<mlir::gacc::MemoryPlan> plan =
      mlir::gacc::planMemory(model.step, model.options.target);
  if (failed(plan))
    return 1;
  plan->optimizerStateByChoice = mlir::gacc::optimizerStateByChoice(model.step);
  std::optional<mlir::gacc::MeasuredMemory> measured;
  // Printing needs the step, which compiling the module consumes.
  mlir::OwningOpRef<mlir::ModuleOp> compiled = model.module->clone();
  if (planMeasure) {
    mlir::gacc::TrainingPipelineOptions configured; // the copy's, applied
    configured.step = stepName.getValue();
    std::optional<mlir::gacc::CompileCache> cache = compileCache();
    FailureOr<mlir::gacc::JitStep> jit = mlir::gacc::jitCompileStep(
        *compiled, configured, {}, cache ? &*cache : nullptr);
    if (failed(jit))
      return 1;
    gacc::rt::Trainer trainer(std::move(jit->model), std::move(jit->compiled));
    gacc::rt::StepResult result;
    if (gacc::rt::Status s = gacc::measureOneStep(trainer, result); !s) {
      errs() << "gacc: " << s.message() << "\n";
      return 1;
    }
    measured = {result.peakBytes, result.heapBytes};
  }
  if (planJson)
    mlir::gacc::printMemoryPlanJson(outs(), model.step, *plan,
                                    measured ? &*measured : nullptr);
  else
    mlir::gacc::printMemoryPlan(outs(), model.step, *plan,
                                measured ? &*measured : nullptr);
  return 0;
}

/// The timing and pass-manager flags applied to a pipeline.
struct PipelineFlags {
  mlir::DefaultTimingManager timing;
  mlir::TimingScope scope;
  PipelineFlags() {
    mlir::applyDefaultTimingManagerCLOptions(timing);
    if (timeReport)
      timing.setEnabled(true);
    scope = timing.getRootScope();
  }
  mlir::LogicalResult configure(mlir::PassManager &pm) {
    pm.enableTiming(scope);
    pm.enableVerifier(verifyEach);
    return mlir::applyPassManagerCLOptions(pm);
  }
};

/// `gacc compile`: the artifact, or with --emit an intermediate stage.
/// Writes `text` to -o, or stdout without one.
static int writeOutput(const std::string &text) {
  if (outputPath.empty() || outputPath == "-") {
    outs() << text;
    return 0;
  }
  if (gacc::rt::Status s = gacc::rt::writeFileAtomically(outputPath, text);
      !s) {
    errs() << "gacc compile: error: " << s.message() << "\n";
    return 1;
  }
  return 0;
}

/// What --target names, after an error if nothing.
static FailureOr<mlir::gacc::CodegenTarget> codegenTarget(StringRef command) {
  std::string error;
  FailureOr<mlir::gacc::CodegenTarget> result =
      mlir::gacc::parseCodegenTarget(target, error);
  if (failed(result))
    errs() << "gacc " << command << ": error: " << error << "\n";
  return result;
}

/// The initial values `gacc import` recorded on the model
/// (gacc.initial_values), as a path next to the model's file; empty if
/// none.
static std::string recordedInitialValues(mlir::ModuleOp module) {
  auto *gacc =
      module->getContext()->getLoadedDialect<mlir::gacc::GaccDialect>();
  mlir::StringAttr file =
      gacc ? gacc->getInitialValuesAttrHelper().getAttr(module) : nullptr;
  if (!file)
    return "";
  llvm::SmallString<256> path(file.getValue());
  if (llvm::sys::path::is_relative(path)) {
    path = llvm::sys::path::parent_path(inputPath.getValue());
    llvm::sys::path::append(path, file.getValue());
  }
  return path.str().str();
}

static int compile(LoadedModel &model) {
  FailureOr<mlir::gacc::CodegenTarget> codegen = codegenTarget("compile");
  if (failed(codegen))
    return 1;
  if (codegen->kind != mlir::gacc::StepTarget::Cuda &&
      emitKind == mlir::gacc::EmitKind::Ptx) {
    errs() << "gacc compile: error: --emit ptx needs --target cuda\n";
    return 1;
  }
  PipelineFlags flags;
  if (emitKind == mlir::gacc::EmitKind::Ptx) {
    FailureOr<std::string> ptx = mlir::gacc::compileCudaKernels(
        *model.module, model.options,
        [&](mlir::PassManager &pm) { return flags.configure(pm); });
    return failed(ptx) ? 1 : writeOutput(*ptx);
  }
  if (emitKind == mlir::gacc::EmitKind::Artifact && outputPath.empty()) {
    errs() << "gacc compile: error: give the artifact's path with -o\n";
    return 1;
  }
  std::string intermediate;
  auto compileIt = [&] {
    return mlir::gacc::compileArtifact(
        *model.module, model.options, emitKind, intermediate,
        [&](mlir::PassManager &pm) { return flags.configure(pm); },
        &flags.scope);
  };
  std::optional<mlir::gacc::CompileCache> cache = compileCache();
  FailureOr<gacc::rt::Artifact> artifact =
      cache && emitKind == mlir::gacc::EmitKind::Artifact
          ? cache->getOrCompile(*model.module, model.options, compileIt)
          : compileIt();
  if (failed(artifact))
    return 1;
  if (emitKind == mlir::gacc::EmitKind::Artifact) {
    if (gacc::rt::Status s = gacc::rt::writeArtifact(outputPath, *artifact);
        !s) {
      errs() << "gacc compile: error: " << s.message() << "\n";
      return 1;
    }
    // An artifact holds no weights: the imported ones stay in their file.
    if (std::string initial = recordedInitialValues(*model.module);
        !initial.empty())
      errs() << "gacc compile: note: " << inputPath << "'s initial values are "
             << initial << ": run " << outputPath << " with --init " << initial
             << "\n";
    return 0;
  }
  return writeOutput(intermediate);
}

static gacc::RunOptions runOptions() {
  gacc::RunOptions options;
  options.steps = steps;
  if (epochs.getNumOccurrences())
    options.epochs = epochs;
  options.seed = seed;
  options.seedGiven = seed.getNumOccurrences() > 0;
  options.scheduleEndsWithRun = scheduleEndsWithRun;
  options.data = dataPath;
  options.tokens = tokensPath;
  options.evalData = evalDataPath;
  options.evalTokens = evalTokensPath;
  options.tokenOptions.width = tokenWidth;
  options.tokenOptions.sampling = tokenSampling;
  options.evalEvery = evalEvery;
  options.prefetch = prefetchDepth;
  options.init = initPath;
  options.save = savePath;
  options.saveSharded = saveShardedPath;
  options.resume = resumePath;
  options.checkpointDir = checkpointDir;
  options.saveEvery = saveEvery;
  options.keepLast = keepLast;
  options.metrics = metricsPath;
  options.logEvery = logEvery;
  options.dumpGrads = dumpGradsPath;
  return options;
}

/// The run's flags that contradict each other; empty if none.
static std::string conflictingRunFlags() {
  if (epochs.getNumOccurrences() && steps.getNumOccurrences())
    return "give --steps or --epochs, not both";
  if (!dataPath.empty() && !tokensPath.empty())
    return "give --data or --tokens, not both";
  if (!evalDataPath.empty() && !evalTokensPath.empty())
    return "give --eval-data or --eval-tokens, not both";
  if (evalEvery && evalDataPath.empty() && evalTokensPath.empty())
    return "--eval-every needs --eval-data or --eval-tokens";
  if (keepLast && !saveEvery)
    return "--keep-last needs --save-every";
  if (!initPath.empty() && !resumePath.empty())
    return "give --init or --resume, not both (a checkpoint holds the "
           "parameters)";
  if ((tokenWidth.getNumOccurrences() || tokenSampling.getNumOccurrences()) &&
      tokensPath.empty() && evalTokensPath.empty())
    return "--token-dtype and --token-sampling need --tokens or --eval-tokens";
  if (epochs.getNumOccurrences() && epochs == 0)
    return "--epochs must be at least 1";
  if (logEvery == 0)
    return "--log-every must be at least 1";
  return "";
}

/// Whether `path` is an artifact: named .gacc (so that a damaged one gets
/// the artifact reader's error) or starting with its magic.
static bool isArtifact(StringRef path) {
  if (path.ends_with(".gacc"))
    return true;
  char magic[sizeof(gacc::rt::kArtifactMagic)] = {};
  std::FILE *file = std::fopen(path.str().c_str(), "rb");
  if (!file)
    return false;
  size_t read = std::fread(magic, 1, sizeof(magic), file);
  std::fclose(file);
  return read == sizeof(magic) &&
         std::memcmp(magic, gacc::rt::kArtifactMagic, sizeof(magic)) == 0;
}

/// `gacc run MODEL.gacc`: the runtime alone, no compiler.
static int runArtifact() {
  // These shape the compiled code, so they belong to `gacc compile`; the
  // runtime sets the learning rate.
  for (cl::opt<std::string> *option : trainingFlags)
    if (option != &target && option != &learningRate &&
        option->getNumOccurrences()) {
      errs() << "gacc run: error: " << inputPath
             << " is compiled: give --" << option->ArgStr
             << " to gacc compile\n";
      return 1;
    }
  if (target.getNumOccurrences() && target != "cpu") {
    errs() << "gacc run: error: " << inputPath
           << " is compiled: give --target to gacc compile\n";
    return 1;
  }
  if (autoTune || !configPath.empty()) {
    errs() << "gacc run: error: " << inputPath << " is compiled: give --"
           << (autoTune ? "auto's choice" : "config")
           << " to gacc compile (gacc tune -o, then --config)\n";
    return 1;
  }
  std::unique_ptr<gacc::rt::Trainer> trainer;
  if (gacc::rt::Status s = gacc::rt::openTrainer(inputPath, seed, trainer);
      !s) {
    errs() << "gacc run: error: " << s.message() << "\n";
    return 1;
  }
  mlir::gacc::TrainingPipelineOptions options;
  if (failed(trainingOptions(options)))
    return 1;
  gacc::RunOptions run = runOptions();
  run.lr = options.lr.getValue();
  return gacc::runTraining(*trainer, run);
}

/// `gacc tune`: the search of compiler/plan/Tune.h, measured and printed by
/// tools/gacc/Tune.cpp.
static int tune(LoadedModel &model, std::string *chosen = nullptr) {
  auto fail = [&](const Twine &message) {
    errs() << (chosen ? "gacc run: error: --auto: " : "gacc tune: error: ")
           << message << "\n";
    return 1;
  };
  std::optional<int64_t> budget =
      memoryBudget.empty() ? std::nullopt
                           : mlir::gacc::parseByteSize(memoryBudget);
  if (!budget)
    return fail("give the peak to fit with --memory-budget (8GiB, 512MiB, "
                "...)");
  if (microBatch.getNumOccurrences() || accumulationSteps.getNumOccurrences())
    return fail("gacc tune chooses the micro-batch: leave out --micro-batch "
                "and --accumulation-steps");
  gacc::TuneOptions options;
  options.budgetBytes = *budget;
  options.measureTop = tuneMeasureTop;
  options.measureSteps = std::max(1u, tuneMeasureSteps.getValue());
  options.json = planJson;
  options.output = outputPath;
  options.cache = compileCache();
  mlir::gacc::TuneSpace &space = options.space;
  // --allow KEY=V1,V2 ... widens or narrows a dimension; a flag fixes it.
  SmallVector<StringRef> lists;
  StringRef(tuneAllow).split(lists, ' ', -1, /*KeepEmpty=*/false);
  for (StringRef list : lists) {
    auto [key, values] = list.split('=');
    SmallVector<StringRef> items;
    values.split(items, ',', -1, /*KeepEmpty=*/false);
    SmallVector<std::string> *dimension =
        key == "precision" ? &space.precisions
        : key == "remat"   ? &space.remats
        : key == "optimizer" ? &space.optimizers
                             : nullptr;
    if (!dimension || items.empty())
      return fail("--allow: '" + list +
                  "' is not precision=, remat= or optimizer= with values");
    dimension->assign(items.begin(), items.end());
  }
  if (precision.getNumOccurrences())
    space.precisions = {precision};
  if (rematPolicy.getNumOccurrences())
    space.remats = {rematPolicy};
  if (optimizerName.getNumOccurrences())
    space.optimizers = {optimizerName};
  if (zeroStage.getNumOccurrences()) {
    int64_t stage;
    if (StringRef(zeroStage).getAsInteger(10, stage))
      return fail("--zero-stage: '" + zeroStage + "' is not 0, 1, 2 or 3");
    space.zeroStages = {stage};
  }
  std::optional<std::string> base = trainingOptionsText(
      {&precision, &rematPolicy, &rematBudget, &optimizerName, &zeroStage,
       &memoryBudget});
  if (!base)
    return 1;
  return gacc::runTune(*model.module, stepName, *base, options, chosen);
}

/// MLIR's pass-manager, context and printer flags (-mlir-print-ir-after-all,
/// -mlir-timing, ...) for every subcommand: they register at the top level,
/// so re-register them with the subcommands, listed by --help-hidden only
/// (they are for compiler debugging, and would bury gacc's own).
static void registerMlirOptions() {
  mlir::registerPassManagerCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  SmallVector<cl::Option *> mlirOptions;
  for (auto &[name, option] : cl::getRegisteredOptions())
    if (name.starts_with("mlir-"))
      mlirOptions.push_back(option);
  for (cl::Option *option : mlirOptions) {
    option->removeArgument();
    option->setHiddenFlag(cl::Hidden);
    for (cl::SubCommand *sub : {&compileCommand, &runCommand, &planCommand})
      option->addSubCommand(*sub);
    option->addArgument();
  }
}

/// `gacc import ...` and `gacc plot ...`: runs the Python tool `module`
/// (gacc.import_cli, gacc.plot_cli) with the Python that has torch and
/// matplotlib and the gacc package this binary was built with (GACC_PYTHON
/// and GACC_PYTHONPATH override them); returns only on error.
static int runPythonTool(const char *module, int argc, char **argv) {
  const char *python = std::getenv("GACC_PYTHON");
  const char *path = std::getenv("GACC_PYTHONPATH");
  std::string pythonPath = path ? path : GACC_PYTHON_PACKAGE_DIR;
  if (const char *old = std::getenv("PYTHONPATH"); old && *old)
    pythonPath += std::string(":") + old;
  setenv("PYTHONPATH", pythonPath.c_str(), 1);
  std::vector<char *> args;
  std::string interpreter = python ? python : GACC_PYTHON_EXECUTABLE;
  std::string dashM = "-m", moduleName = module;
  args.push_back(interpreter.data());
  args.push_back(dashM.data());
  args.push_back(moduleName.data());
  for (int i = 2; i < argc; ++i)
    args.push_back(argv[i]);
  args.push_back(nullptr);
  execv(interpreter.c_str(), args.data());
  errs() << "gacc " << argv[1] << ": error: cannot run " << interpreter << ": "
         << std::strerror(errno) << "\n";
  return 1;
}

int main(int argc, char **argv) {
  if (argc > 1 && std::strcmp(argv[1], "import") == 0)
    return runPythonTool("gacc.import_cli", argc, argv);
  if (argc > 1 && std::strcmp(argv[1], "plot") == 0)
    return runPythonTool("gacc.plot_cli", argc, argv);
  InitLLVM initLLVM(argc, argv);
  mlir::gacc::registerAllPasses(); // -mlir-print-ir-after=<pass> names them
  registerMlirOptions();
  cl::ParseCommandLineOptions(
      argc, argv,
      "gacc: a compiler and runtime for neural-network training steps\n\n"
      "  gacc plan examples/mlp.mlir    parameters, optimizer state, memory\n"
      "  gacc <subcommand> --help       the options of one subcommand\n");

  if (!compileCommand && !runCommand && !planCommand && !consolidateCommand &&
      !exportCommand && !tuneCommand) {
    errs() << "gacc: missing subcommand (compile, run, plan, tune, import, "
              "plot, consolidate or export); see gacc --help\n";
    return 1;
  }
  if (exportCommand) {
    gacc::rt::TensorFile checkpoint, weights;
    gacc::rt::Status s =
        outputPath.empty()
            ? gacc::rt::Status::error("give the weights file to write with -o")
            : gacc::rt::readSafetensors(inputPath, checkpoint);
    if (s && !(s = gacc::rt::exportWeights(checkpoint, mergeLora, weights)))
      s = gacc::rt::Status::error(inputPath + ": " + s.message());
    if (s)
      s = gacc::rt::writeSafetensors(outputPath, weights);
    if (!s) {
      errs() << "gacc export: error: " << s.message() << "\n";
      return 1;
    }
    outs() << "wrote " << outputPath << " (" << weights.tensors.size()
           << " tensors" << (mergeLora ? ", LoRA merged" : "") << ")\n";
    return 0;
  }
  if (consolidateCommand) {
    gacc::rt::TensorFile checkpoint;
    gacc::rt::Status s =
        outputPath.empty()
            ? gacc::rt::Status::error("give the checkpoint to write with -o")
            : gacc::rt::consolidateCheckpoint(inputPath, checkpoint);
    if (s)
      s = gacc::rt::writeSafetensors(outputPath, checkpoint);
    if (!s) {
      errs() << "gacc consolidate: error: " << s.message() << "\n";
      return 1;
    }
    outs() << "wrote " << outputPath << " (" << checkpoint.tensors.size()
           << " tensors)\n";
    return 0;
  }

  if (runCommand)
    if (std::string conflict = conflictingRunFlags(); !conflict.empty()) {
      errs() << "gacc run: error: " << conflict << "\n";
      return 1;
    }
  if (runCommand && threadCount.getNumOccurrences()) {
    if (threadCount == 0) {
      errs() << "gacc run: error: --threads must be at least 1\n";
      return 1;
    }
    gacc::rt::setThreads(static_cast<int>(threadCount));
  }
  if (runCommand && isArtifact(inputPath))
    return runArtifact();

  mlir::DialectRegistry registry;
  mlir::gacc::registerAllDialects(registry);
  LoadedModel model(registry);
  if (!model.load())
    return 1;

  if (planCommand)
    return plan(model);
  if (tuneCommand)
    return tune(model);
  if (compileCommand)
    return compile(model);

  if (autoTune) {
    std::string chosen;
    if (int status = tune(model, &chosen))
      return status;
    // The flags, with the choice in place of the budget it was made for.
    std::optional<std::string> base = trainingOptionsText(
        {&precision, &rematPolicy, &rematBudget, &optimizerName, &zeroStage,
         &memoryBudget});
    if (!base || failed(model.options.parseFromString(*base + " " + chosen)))
      return 1;
    model.options.memoryBudget = "";
  }
  FailureOr<mlir::gacc::CodegenTarget> codegen = codegenTarget("run");
  if (failed(codegen))
    return 1;
  // The device first: the JIT loads the kernels as it initializes.
  std::unique_ptr<gacc::rt::DeviceMemory> device;
  if (gacc::rt::Status s = gacc::rt::openTargetDevice(target, device); !s) {
    errs() << "gacc run: error: " << s.message() << "\n";
    return 1;
  }
  PipelineFlags flags;
  std::optional<mlir::gacc::CompileCache> cache = compileCache();
  FailureOr<mlir::gacc::JitStep> jit = mlir::gacc::jitCompileStep(
      *model.module, model.options,
      [&](mlir::PassManager &pm) { return flags.configure(pm); },
      cache ? &*cache : nullptr, &flags.scope);
  if (failed(jit))
    return 1;
  gacc::rt::Trainer trainer(std::move(jit->model), std::move(jit->compiled));
  if (device)
    if (gacc::rt::Status s = trainer.placeArenasOn(std::move(device)); !s) {
      errs() << "gacc run: error: " << s.message() << "\n";
      return 1;
    }
  gacc::RunOptions run = runOptions();
  if (run.init.empty() && run.resume.empty())
    if (std::string initial = recordedInitialValues(*model.module);
        !initial.empty()) {
      std::printf("initial values from %s (recorded by gacc import)\n",
                  initial.c_str());
      run.init = initial;
    }
  return gacc::runTraining(trainer, run);
}
