//===- CompileCacheTest.cpp - the persistent compile cache -------------------===//
//
// Hits and misses by key, warnings replayed on a hit, corrupt entries
// rebuilt, and concurrent compilations of one step that compile it once.
//
//===----------------------------------------------------------------------===//

#include "compiler/InitAll.h"
#include "compiler/aot/Aot.h"
#include "compiler/aot/CompileCache.h"
#include "compiler/jit/Jit.h"
#include "gacc/runtime/Dataset.h"
#include "gacc/runtime/File.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace rt = ::gacc::rt;
using mlir::gacc::CompileCache;
using mlir::gacc::TrainingPipelineOptions;

namespace {
constexpr const char *kModel = R"mlir(
gacc.param @w : tensor<3x4xf32> = #gacc.init<xavier_uniform, seed = 1>
gacc.input @x : tensor<8x4xf32> features
gacc.input @y : tensor<8xi32> labels
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<8x4xf32>
  %y = gacc.load @y : tensor<8xi32>
  %w = gacc.load @w : tensor<3x4xf32>
  %l = gacc.matmul %x, %w transpose_rhs : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  %loss = gacc.cross_entropy mean %l, %y : tensor<8x3xf32>, tensor<8xi32>
  return %loss : tensor<f32>
}
gacc.train_step @t model @m batch_size 8 optimizer #gacc.sgd<lr = 0.1>
)mlir";

/// A fresh directory for one test's cache.
std::string freshDirectory(const char *name) {
  llvm::SmallString<128> path;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory(name, path));
  return path.str().str();
}

struct Model {
  mlir::DialectRegistry registry;
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  explicit Model(const std::string &text) {
    mlir::gacc::registerAllDialects(registry);
    context = std::make_unique<mlir::MLIRContext>(registry);
    module = mlir::parseSourceString<mlir::ModuleOp>(text, context.get());
  }
};

/// The model's artifact with `host` for its code: what the cache stores is
/// opaque to it, and the tests tell compilations apart by it.
rt::Artifact fakeArtifact(const std::string &host) {
  static const rt::Artifact compiled = [] {
    Model model(kModel);
    std::string unused;
    auto artifact = mlir::gacc::compileArtifact(
        *model.module, {}, mlir::gacc::EmitKind::Artifact, unused);
    EXPECT_TRUE(mlir::succeeded(artifact));
    return mlir::succeeded(artifact) ? *artifact : rt::Artifact();
  }();
  rt::Artifact artifact = compiled;
  artifact.sections["host"] = host;
  return artifact;
}

TEST(CompileCache, HitsOnTheSameModuleAndOptionsOnly) {
  CompileCache cache(freshDirectory("gacc-cache-test"));
  int compilations = 0;
  auto compile = [&]() -> mlir::FailureOr<rt::Artifact> {
    ++compilations;
    return fakeArtifact("code " + std::to_string(compilations));
  };
  TrainingPipelineOptions options, other;
  other.microBatch = 4;
  Model a(kModel), b(kModel), c(kModel);
  auto first = cache.getOrCompile(*a.module, options, compile);
  auto second = cache.getOrCompile(*b.module, options, compile);
  auto third = cache.getOrCompile(*c.module, other, compile);
  ASSERT_TRUE(mlir::succeeded(first) && mlir::succeeded(second) &&
              mlir::succeeded(third));
  EXPECT_EQ(compilations, 2);
  EXPECT_EQ(second->sections["host"], "code 1");
  EXPECT_EQ(third->sections["host"], "code 2");
}

TEST(CompileCache, ReplaysTheWarningsOfTheCompilation) {
  CompileCache cache(freshDirectory("gacc-cache-test"));
  auto compileWarning = [&](mlir::MLIRContext *context) {
    return [context]() -> mlir::FailureOr<rt::Artifact> {
      mlir::emitWarning(
          mlir::FileLineColLoc::get(context, "model.mlir", 7, 3))
          << "something to know\nover two lines";
      return fakeArtifact("code");
    };
  };
  std::vector<std::string> seen;
  for (int run = 0; run < 2; ++run) {
    Model model(kModel);
    mlir::ScopedDiagnosticHandler handler(
        model.context.get(), [&](mlir::Diagnostic &diagnostic) {
          std::string text;
          llvm::raw_string_ostream os(text);
          os << diagnostic.getLocation() << ": " << diagnostic.str();
          seen.push_back(text);
          return mlir::success();
        });
    ASSERT_TRUE(mlir::succeeded(cache.getOrCompile(
        *model.module, {}, compileWarning(model.context.get()))));
  }
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(seen[1], "loc(\"model.mlir\":7:3): something to know\nover two lines");
}

TEST(CompileCache, RebuildsATruncatedEntry) {
  std::string directory = freshDirectory("gacc-cache-test");
  CompileCache cache(directory);
  int compilations = 0;
  auto compile = [&]() -> mlir::FailureOr<rt::Artifact> {
    ++compilations;
    return fakeArtifact(std::string(4096, 'x'));
  };
  Model a(kModel);
  ASSERT_TRUE(mlir::succeeded(cache.getOrCompile(*a.module, {}, compile)));
  std::error_code ec;
  std::string entry;
  for (llvm::sys::fs::directory_iterator it(directory, ec), end;
       it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".gacc"))
      entry = it->path();
  ASSERT_FALSE(entry.empty());
  std::string bytes;
  ASSERT_TRUE(rt::readFile(entry, bytes).ok());
  ASSERT_TRUE(rt::writeFileAtomically(entry, bytes.substr(0, bytes.size() / 2))
                  .ok());

  Model b(kModel), c(kModel);
  auto rebuilt = cache.getOrCompile(*b.module, {}, compile);
  auto hit = cache.getOrCompile(*c.module, {}, compile);
  ASSERT_TRUE(mlir::succeeded(rebuilt) && mlir::succeeded(hit));
  EXPECT_EQ(compilations, 2);
  EXPECT_EQ(hit->sections["host"], std::string(4096, 'x'));
}

TEST(CompileCache, ConcurrentCompilationsOfOneStepCompileOnce) {
  CompileCache cache(freshDirectory("gacc-cache-test"));
  std::atomic<int> compilations{0};
  std::vector<std::thread> threads;
  std::atomic<int> hosts{0};
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      Model model(kModel);
      auto artifact = cache.getOrCompile(
          *model.module, {}, [&]() -> mlir::FailureOr<rt::Artifact> {
            ++compilations;
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            return fakeArtifact("code");
          });
      if (mlir::succeeded(artifact) && artifact->sections["host"] == "code")
        ++hosts;
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(compilations, 1);
  EXPECT_EQ(hosts, 4);
}

// The JIT through the cache: a hit trains exactly as the compilation did.
TEST(CompileCache, JitFromTheCacheTrainsAsCompiled) {
  CompileCache cache(freshDirectory("gacc-cache-test"));
  std::vector<double> losses[2];
  for (int run = 0; run < 2; ++run) {
    Model model(kModel);
    auto jit = mlir::gacc::jitCompileStep(*model.module, {}, {}, &cache);
    ASSERT_TRUE(mlir::succeeded(jit));
    rt::Trainer trainer(std::move(jit->model), std::move(jit->compiled));
    ASSERT_TRUE(trainer.initialize(1).ok());
    std::unique_ptr<rt::Dataset> data =
        rt::Dataset::synthetic(trainer.model(), /*seed=*/3);
    for (int step = 0; step < 3; ++step) {
      rt::Batch batch;
      ASSERT_TRUE(data->batch(step, batch).ok());
      ASSERT_TRUE(trainer.setBatch(batch).ok());
      rt::StepResult result;
      ASSERT_TRUE(trainer.step(result).ok());
      losses[run].push_back(result.loss);
    }
  }
  EXPECT_EQ(losses[0], losses[1]);
}
} // namespace
