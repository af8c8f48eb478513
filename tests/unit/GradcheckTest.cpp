//===- GradcheckTest.cpp - every VJP rule against finite differences -------===//
//
// For each differentiable op: a float64 model whose loss is
// sum(op(params) * r) (r a fixed random input), compiled through the full
// pipeline and JIT; the gradients of one step are compared with central
// differences of the eval entry point, with torch.autograd.gradcheck's
// tolerances (eps 1e-6, atol 1e-5, rtol 1e-3).
//
//===----------------------------------------------------------------------===//

#include "compiler/InitAll.h"
#include "compiler/jit/Jit.h"
#include "gacc/runtime/Trainer.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>

namespace rt = gacc::rt;

namespace {
struct GradCase {
  const char *name;
  /// Declarations (params as `gacc.param`, inputs other than r) and the
  /// body, which must define %y.
  std::string declarations;
  std::string body;
  /// The type of %y; a non-scalar %y is contracted with an input r.
  std::string resultType;
  int64_t batch;
  /// Differences of the training step's loss instead of evaluation's (for
  /// ops that evaluate differently, such as batch norm; the step's tiny
  /// learning rate leaves the parameters as they are).
  bool trainingLoss = false;
};

std::ostream &operator<<(std::ostream &os, const GradCase &c) {
  return os << c.name;
}

std::string param(const std::string &name, const std::string &type,
                  int seed) {
  return "gacc.param @" + name + " : " + type +
         " = #gacc.init<uniform, seed = " + std::to_string(seed) + ">\n";
}

std::string buildModule(const GradCase &c) {
  std::string text = c.declarations;
  bool scalar = c.resultType == "tensor<f64>";
  if (!scalar)
    text += "gacc.input @r : " + c.resultType + " features\n";
  text += "func.func @m() -> tensor<f64> {\n" + c.body;
  if (scalar) {
    text += "  return %y : tensor<f64>\n}\n";
  } else {
    std::string axes;
    int rank = 1;
    for (char ch : c.resultType)
      rank += ch == 'x';
    rank -= 1;
    for (int d = 0; d < rank; ++d)
      axes += (d ? ", " : "") + std::to_string(d);
    text += "  %r = gacc.load @r : " + c.resultType + "\n";
    text += "  %yr = gacc.mul %y, %r : " + c.resultType + ", " +
            c.resultType + "\n";
    text += "  %l = gacc.reduce_sum %yr axes = [" + axes + "] : " +
            c.resultType + " -> tensor<f64>\n  return %l : tensor<f64>\n}\n";
  }
  text += "gacc.train_step @train model @m batch_size " + std::to_string(c.batch) +
          " optimizer #gacc.sgd<lr = 1.0e-30>\n";
  return text;
}

class Gradcheck : public ::testing::TestWithParam<GradCase> {};

TEST_P(Gradcheck, MatchesCentralDifferences) {
  const GradCase &c = GetParam();
  mlir::DialectRegistry registry;
  mlir::gacc::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  std::string text = buildModule(c);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  ASSERT_TRUE(module) << text;
  auto jit = mlir::gacc::jitCompileStep(*module);
  ASSERT_TRUE(mlir::succeeded(jit)) << text;
  rt::Trainer trainer(std::move(jit->model), std::move(jit->compiled));
  ASSERT_TRUE(trainer.initialize(/*seed=*/7).ok());
  rt::TensorFile start = trainer.parameters();
  auto data = rt::Dataset::synthetic(trainer.model(), 3);
  rt::Batch batch;
  ASSERT_TRUE(data->batch(0, batch).ok());
  ASSERT_TRUE(trainer.setBatch(batch).ok());
  rt::StepResult result;
  ASSERT_TRUE(trainer.step(result).ok());
  rt::TensorFile grads = trainer.gradients();

  const double eps = 1e-6, atol = 1e-5, rtol = 1e-3;
  std::vector<rt::Tensor> outputs;
  for (auto &[name, value] : start.tensors) {
    if (!grads.tensors.count(name))
      continue; // frozen: no gradient
    const rt::Tensor &grad = grads.tensors.at(name);
    for (int64_t i = 0; i < value.numElements(); ++i) {
      double losses[2];
      for (int side = 0; side < 2; ++side) {
        rt::TensorFile moved = start;
        rt::Tensor &tensor = moved.tensors.at(name);
        tensor.dataAs<double>()[i] += side ? -eps : eps;
        ASSERT_TRUE(trainer.loadParameters(moved, "gradcheck").ok());
        if (c.trainingLoss) {
          rt::StepResult moved;
          ASSERT_TRUE(trainer.step(moved).ok());
          losses[side] = moved.loss;
        } else {
          ASSERT_TRUE(trainer.evaluate(losses[side], outputs).ok());
        }
      }
      double numeric = (losses[0] - losses[1]) / (2 * eps);
      double analytic = grad.dataAs<double>()[i];
      EXPECT_NEAR(analytic, numeric, atol + rtol * std::fabs(numeric))
          << c.name << ": d loss / d " << name << "[" << i << "]";
    }
  }
}

const std::string m34 = "tensor<3x4xf64>", v4 = "tensor<4xf64>";

std::vector<GradCase> cases() {
  std::string a = param("a", m34, 1), b = param("b", v4, 2);
  std::string loadA = "  %a = gacc.load @a : tensor<3x4xf64>\n";
  std::string loadB = "  %b = gacc.load @b : tensor<4xf64>\n";
  auto unary = [&](const char *name, std::string expr) {
    return GradCase{name, a, loadA + expr, m34, 3};
  };
  auto binary = [&](const char *name, std::string op) {
    return GradCase{name, a + b, loadA + loadB + "  %y = gacc." + op +
                                     " %a, %b : tensor<3x4xf64>, "
                                     "tensor<4xf64>\n",
                    m34, 3};
  };
  std::string positive =
      "  %e = gacc.exp %a : tensor<3x4xf64>\n";
  std::vector<GradCase> all = {
      binary("add", "add"),
      binary("sub", "sub"),
      binary("mul", "mul"),
      {"div", a + b,
       loadA + loadB +
           "  %eb = gacc.exp %b : tensor<4xf64>\n"
           "  %y = gacc.div %a, %eb : tensor<3x4xf64>, tensor<4xf64>\n",
       m34, 3},
      unary("neg", "  %y = gacc.neg %a : tensor<3x4xf64>\n"),
      unary("exp", "  %y = gacc.exp %a : tensor<3x4xf64>\n"),
      unary("log", positive + "  %y = gacc.log %e : tensor<3x4xf64>\n"),
      unary("sqrt", positive + "  %y = gacc.sqrt %e : tensor<3x4xf64>\n"),
      unary("rsqrt", positive + "  %y = gacc.rsqrt %e : tensor<3x4xf64>\n"),
      unary("tanh", "  %y = gacc.tanh %a : tensor<3x4xf64>\n"),
      unary("sigmoid", "  %y = gacc.sigmoid %a : tensor<3x4xf64>\n"),
      unary("relu", "  %y = gacc.relu %a : tensor<3x4xf64>\n"),
      unary("erf", "  %y = gacc.erf %a : tensor<3x4xf64>\n"),
      unary("gelu_erf", "  %y = gacc.gelu %a : tensor<3x4xf64>\n"),
      unary("gelu_tanh",
            "  %y = gacc.gelu %a approximation = tanh : tensor<3x4xf64>\n"),
      {"matmul", a + param("w", "tensor<4x5xf64>", 3),
       loadA +
           "  %w = gacc.load @w : tensor<4x5xf64>\n"
           "  %y = gacc.matmul %a, %w : tensor<3x4xf64>, tensor<4x5xf64> -> "
           "tensor<3x5xf64>\n",
       "tensor<3x5xf64>", 3},
      {"matmul_transposed", a + param("w", "tensor<5x3xf64>", 3),
       loadA +
           "  %w = gacc.load @w : tensor<5x3xf64>\n"
           "  %y = gacc.matmul %a, %w transpose_lhs transpose_rhs : "
           "tensor<3x4xf64>, tensor<5x3xf64> -> tensor<4x5xf64>\n",
       "tensor<4x5xf64>", 4},
      {"matmul_batched", param("x", "tensor<2x3x4xf64>", 1) +
                             param("w", "tensor<5x4xf64>", 3),
       "  %x = gacc.load @x : tensor<2x3x4xf64>\n"
       "  %w = gacc.load @w : tensor<5x4xf64>\n"
       "  %y = gacc.matmul %x, %w transpose_rhs : tensor<2x3x4xf64>, "
       "tensor<5x4xf64> -> tensor<2x3x5xf64>\n",
       "tensor<2x3x5xf64>", 2},
      {"broadcast", b,
       loadB + "  %y = gacc.broadcast %b : tensor<4xf64> -> tensor<3x4xf64>\n",
       m34, 3},
      {"reduce_sum", a,
       loadA + "  %y = gacc.reduce_sum %a axes = [1] keepdims : "
               "tensor<3x4xf64> -> tensor<3x1xf64>\n",
       "tensor<3x1xf64>", 3},
      {"reduce_mean", a,
       loadA + "  %y = gacc.reduce_mean %a axes = [0] : tensor<3x4xf64> -> "
               "tensor<4xf64>\n",
       v4, 4},
      {"reduce_max", a,
       loadA + "  %y = gacc.reduce_max %a axes = [1] : tensor<3x4xf64> -> "
               "tensor<3xf64>\n",
       "tensor<3xf64>", 3},
      {"reshape", a,
       loadA + "  %y = gacc.reshape %a : tensor<3x4xf64> -> tensor<2x6xf64>\n",
       "tensor<2x6xf64>", 2},
      {"transpose", param("x", "tensor<3x4x2xf64>", 1),
       "  %x = gacc.load @x : tensor<3x4x2xf64>\n"
       "  %y = gacc.transpose %x perm = [2, 0, 1] : tensor<3x4x2xf64> -> "
       "tensor<2x3x4xf64>\n",
       "tensor<2x3x4xf64>", 2},
      {"slice", a,
       loadA + "  %y = gacc.slice %a offsets = [1, 1] sizes = [2, 2] : "
               "tensor<3x4xf64> -> tensor<2x2xf64>\n",
       "tensor<2x2xf64>", 2},
      {"pad", a,
       loadA + "  %y = gacc.pad %a low = [1, 0] high = [0, 2] : "
               "tensor<3x4xf64> -> tensor<4x6xf64>\n",
       "tensor<4x6xf64>", 4},
      {"concat", a + param("c", "tensor<3x2xf64>", 5),
       loadA + "  %c = gacc.load @c : tensor<3x2xf64>\n"
               "  %y = gacc.concat %a, %c axis = 1 : tensor<3x4xf64>, "
               "tensor<3x2xf64> -> tensor<3x6xf64>\n",
       "tensor<3x6xf64>", 3},
      unary("softmax", "  %y = gacc.softmax %a axis = 1 : tensor<3x4xf64>\n"),
      unary("log_softmax",
            "  %y = gacc.log_softmax %a axis = 0 : tensor<3x4xf64>\n"),
      {"layer_norm", a + b + param("g", v4, 4),
       loadA + loadB + "  %g = gacc.load @g : tensor<4xf64>\n"
                       "  %y = gacc.layer_norm %a, %g, %b : "
                       "tensor<3x4xf64>, tensor<4xf64>\n",
       m34, 3},
      {"embedding",
       param("table", "tensor<5x4xf64>", 6) +
           "gacc.input @ids : tensor<3xi32> tokens\n",
       "  %t = gacc.load @table : tensor<5x4xf64>\n"
       "  %ids = gacc.load @ids : tensor<3xi32>\n"
       "  %y = gacc.embedding %t, %ids : tensor<5x4xf64>, tensor<3xi32> -> "
       "tensor<3x4xf64>\n",
       m34, 3},
      {"select_causal", param("s", "tensor<2x3x3xf64>", 1) +
                            param("f", "tensor<f64>", 2),
       "  %s = gacc.load @s : tensor<2x3x3xf64>\n"
       "  %f = gacc.load @f : tensor<f64>\n"
       "  %mask = gacc.causal_mask : tensor<3x3xi1>\n"
       "  %y = gacc.select %mask, %s, %f : tensor<3x3xi1>, "
       "tensor<2x3x3xf64>, tensor<f64>\n",
       "tensor<2x3x3xf64>", 2},
      // Attention as models write it, which the CPU pipeline fuses into
      // gacc.attention (f64 all through): causal with T = S, and causal
      // with T < S and a key bias.
      {"attention_causal",
       param("q", "tensor<2x2x3x4xf64>", 11) +
           param("k", "tensor<2x2x3x4xf64>", 12) +
           param("v", "tensor<2x2x3x4xf64>", 13),
       "  %q = gacc.load @q : tensor<2x2x3x4xf64>\n"
       "  %k = gacc.load @k : tensor<2x2x3x4xf64>\n"
       "  %v = gacc.load @v : tensor<2x2x3x4xf64>\n"
       "  %s = gacc.matmul %q, %k transpose_rhs : tensor<2x2x3x4xf64>, "
       "tensor<2x2x3x4xf64> -> tensor<2x2x3x3xf64>\n"
       "  %c = gacc.constant dense<0.5> : tensor<f64>\n"
       "  %t = gacc.mul %s, %c : tensor<2x2x3x3xf64>, tensor<f64>\n"
       "  %mask = gacc.causal_mask : tensor<3x3xi1>\n"
       "  %ninf = gacc.constant dense<0xFFF0000000000000> : tensor<f64>\n"
       "  %u = gacc.select %mask, %t, %ninf : tensor<3x3xi1>, "
       "tensor<2x2x3x3xf64>, tensor<f64>\n"
       "  %p = gacc.softmax %u axis = 3 : tensor<2x2x3x3xf64>\n"
       "  %y = gacc.matmul %p, %v : tensor<2x2x3x3xf64>, tensor<2x2x3x4xf64> "
       "-> tensor<2x2x3x4xf64>\n",
       "tensor<2x2x3x4xf64>", 2},
      {"attention_cross_key_bias",
       param("q", "tensor<2x2x3x4xf64>", 14) +
           param("k", "tensor<2x2x5x4xf64>", 15) +
           param("v", "tensor<2x2x5x4xf64>", 16) +
           "gacc.input @bias : tensor<2x1x1x5xf64> features\n",
       "  %q = gacc.load @q : tensor<2x2x3x4xf64>\n"
       "  %k = gacc.load @k : tensor<2x2x5x4xf64>\n"
       "  %v = gacc.load @v : tensor<2x2x5x4xf64>\n"
       "  %b = gacc.load @bias : tensor<2x1x1x5xf64>\n"
       "  %s = gacc.matmul %q, %k transpose_rhs : tensor<2x2x3x4xf64>, "
       "tensor<2x2x5x4xf64> -> tensor<2x2x3x5xf64>\n"
       "  %u = gacc.add %s, %b : tensor<2x2x3x5xf64>, tensor<2x1x1x5xf64>\n"
       "  %mask = gacc.causal_mask : tensor<3x5xi1>\n"
       "  %ninf = gacc.constant dense<0xFFF0000000000000> : tensor<f64>\n"
       "  %w = gacc.select %mask, %u, %ninf : tensor<3x5xi1>, "
       "tensor<2x2x3x5xf64>, tensor<f64>\n"
       "  %p = gacc.softmax %w axis = 3 : tensor<2x2x3x5xf64>\n"
       "  %y = gacc.matmul %p, %v : tensor<2x2x3x5xf64>, tensor<2x2x5x4xf64> "
       "-> tensor<2x2x3x4xf64>\n",
       "tensor<2x2x3x4xf64>", 2},
  };
  for (const char *reduction : {"sum", "mean", "token_mean"})
    all.push_back(
        {reduction[0] == 's'   ? "cross_entropy_sum"
         : reduction[0] == 'm' ? "cross_entropy_mean"
                               : "cross_entropy_token_mean",
         param("logits", "tensor<4x5xf64>", 8) +
             "gacc.input @labels : tensor<4xi32> labels\n",
         "  %lg = gacc.load @logits : tensor<4x5xf64>\n"
         "  %lb = gacc.load @labels : tensor<4xi32>\n"
         "  %y = gacc.cross_entropy " +
             std::string(reduction) +
             " %lg, %lb ignore_index = -100 : tensor<4x5xf64>, tensor<4xi32>\n",
         "tensor<f64>", 4});
  // Batch norm in training (statistics of the batch, running statistics
  // assigned) and in inference (the running statistics).
  std::string stats =
      "gacc.param @rm : tensor<3xf64> = #gacc.init<uniform, seed = 4> frozen\n"
      "gacc.param @rv : tensor<3xf64> = #gacc.init<ones> frozen\n";
  std::string loadNorm = "  %w = gacc.load @w : tensor<3xf64>\n"
                         "  %b = gacc.load @b : tensor<3xf64>\n"
                         "  %rm = gacc.load @rm : tensor<3xf64>\n"
                         "  %rv = gacc.load @rv : tensor<3xf64>\n";
  std::string normParams =
      param("w", "tensor<3xf64>", 2) + param("b", "tensor<3xf64>", 3) + stats;
  GradCase train{"batch_norm_train",
                 param("x", "tensor<2x3x2x2xf64>", 1) + normParams,
                 "  %x = gacc.load @x : tensor<2x3x2x2xf64>\n" + loadNorm +
                     "  %y, %nm, %nv = gacc.batch_norm %x, %w, %b, %rm, %rv "
                     "momentum = 1.0e-1 epsilon = 1.0e-5 : "
                     "tensor<2x3x2x2xf64>, tensor<3xf64>\n"
                     "  gacc.assign @rm, %nm : tensor<3xf64>\n"
                     "  gacc.assign @rv, %nv : tensor<3xf64>\n",
                 "tensor<2x3x2x2xf64>", 2};
  train.trainingLoss = true;
  all.push_back(train);
  all.push_back({"batch_norm_inference",
                 param("x", "tensor<4x3xf64>", 1) + normParams,
                 "  %x = gacc.load @x : tensor<4x3xf64>\n" + loadNorm +
                     "  %y, %nm, %nv = gacc.batch_norm %x, %w, %b, %rm, %rv "
                     "momentum = 1.0e-1 epsilon = 1.0e-5 inference : "
                     "tensor<4x3xf64>, tensor<3xf64>\n",
                 "tensor<4x3xf64>", 4});
  // Convolution and pooling: strides, padding, dilation and groups.
  auto window = [&](const char *name, std::string decls, std::string body,
                    const char *result, int64_t batch) {
    all.push_back({name, decls, body, result, batch});
  };
  window("conv2d_grouped_strided",
         param("x", "tensor<2x4x5x5xf64>", 1) +
             param("w", "tensor<6x2x3x3xf64>", 2),
         "  %x = gacc.load @x : tensor<2x4x5x5xf64>\n"
         "  %w = gacc.load @w : tensor<6x2x3x3xf64>\n"
         "  %y = gacc.conv2d %x, %w stride = [2, 2] padding = [1, 1] "
         "dilation = [1, 1] groups = 2 : tensor<2x4x5x5xf64>, "
         "tensor<6x2x3x3xf64> -> tensor<2x6x3x3xf64>\n",
         "tensor<2x6x3x3xf64>", 2);
  window("conv2d_dilated",
         param("x", "tensor<1x2x6x6xf64>", 1) +
             param("w", "tensor<3x2x2x3xf64>", 2),
         "  %x = gacc.load @x : tensor<1x2x6x6xf64>\n"
         "  %w = gacc.load @w : tensor<3x2x2x3xf64>\n"
         "  %y = gacc.conv2d %x, %w stride = [1, 2] padding = [1, 0] "
         "dilation = [2, 1] groups = 1 : tensor<1x2x6x6xf64>, "
         "tensor<3x2x2x3xf64> -> tensor<1x3x6x2xf64>\n",
         "tensor<1x3x6x2xf64>", 1);
  // Taps that read only padding are left out of the expansion: a 3x3
  // kernel over one pixel, over 2x2 at stride 2, and dilated rows.
  window("conv2d_one_pixel",
         param("x", "tensor<2x4x1x1xf64>", 1) +
             param("w", "tensor<3x4x3x3xf64>", 2),
         "  %x = gacc.load @x : tensor<2x4x1x1xf64>\n"
         "  %w = gacc.load @w : tensor<3x4x3x3xf64>\n"
         "  %y = gacc.conv2d %x, %w stride = [1, 1] padding = [1, 1] "
         "dilation = [1, 1] groups = 1 : tensor<2x4x1x1xf64>, "
         "tensor<3x4x3x3xf64> -> tensor<2x3x1x1xf64>\n",
         "tensor<2x3x1x1xf64>", 2);
  window("conv2d_reaching_taps_strided",
         param("x", "tensor<2x3x2x2xf64>", 1) +
             param("w", "tensor<4x3x3x3xf64>", 2),
         "  %x = gacc.load @x : tensor<2x3x2x2xf64>\n"
         "  %w = gacc.load @w : tensor<4x3x3x3xf64>\n"
         "  %y = gacc.conv2d %x, %w stride = [2, 2] padding = [1, 1] "
         "dilation = [1, 1] groups = 1 : tensor<2x3x2x2xf64>, "
         "tensor<4x3x3x3xf64> -> tensor<2x4x1x1xf64>\n",
         "tensor<2x4x1x1xf64>", 2);
  window("conv2d_reaching_taps_dilated",
         param("x", "tensor<1x2x2x3xf64>", 1) +
             param("w", "tensor<2x2x3x3xf64>", 2),
         "  %x = gacc.load @x : tensor<1x2x2x3xf64>\n"
         "  %w = gacc.load @w : tensor<2x2x3x3xf64>\n"
         "  %y = gacc.conv2d %x, %w stride = [1, 1] padding = [2, 2] "
         "dilation = [2, 2] groups = 1 : tensor<1x2x2x3xf64>, "
         "tensor<2x2x3x3xf64> -> tensor<1x2x2x3xf64>\n",
         "tensor<1x2x2x3xf64>", 1);
  window("max_pool2d", param("x", "tensor<2x3x5x5xf64>", 1),
         "  %x = gacc.load @x : tensor<2x3x5x5xf64>\n"
         "  %y = gacc.max_pool2d %x kernel = [3, 3] stride = [2, 2] "
         "padding = [1, 1] dilation = [1, 1] : tensor<2x3x5x5xf64> -> "
         "tensor<2x3x3x3xf64>\n",
         "tensor<2x3x3x3xf64>", 2);
  window("avg_pool2d", param("x", "tensor<2x3x4x4xf64>", 1),
         "  %x = gacc.load @x : tensor<2x3x4x4xf64>\n"
         "  %y = gacc.avg_pool2d %x kernel = [2, 2] stride = [2, 2] "
         "padding = [1, 1] : tensor<2x3x4x4xf64> -> tensor<2x3x3x3xf64>\n",
         "tensor<2x3x3x3xf64>", 2);
  window("im2col", param("x", "tensor<1x2x4x4xf64>", 1),
         "  %x = gacc.load @x : tensor<1x2x4x4xf64>\n"
         "  %y = gacc.im2col %x kernel = [2, 2] stride = [2, 2] "
         "padding = [1, 1] dilation = [1, 1] : tensor<1x2x4x4xf64> -> "
         "tensor<1x2x4x9xf64>\n",
         "tensor<1x2x4x9xf64>", 1);
  window("col2im", param("c", "tensor<1x2x4x9xf64>", 1),
         "  %c = gacc.load @c : tensor<1x2x4x9xf64>\n"
         "  %y = gacc.col2im %c kernel = [2, 2] stride = [2, 2] "
         "padding = [1, 1] dilation = [1, 1] : tensor<1x2x4x9xf64> -> "
         "tensor<1x2x4x4xf64>\n",
         "tensor<1x2x4x4xf64>", 1);
  all.push_back({"mse_loss", a + param("t", m34, 9),
                 loadA + "  %t = gacc.load @t : tensor<3x4xf64>\n"
                         "  %y = gacc.mse_loss mean %a, %t : "
                         "tensor<3x4xf64>\n",
                 "tensor<f64>", 3});
  return all;
}

INSTANTIATE_TEST_SUITE_P(EveryOp, Gradcheck, ::testing::ValuesIn(cases()),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });
} // namespace

namespace {
/// The gradient of sum(dropout(p) * r) is r / (1 - rate) where p survives
/// and 0 where it is dropped: it shows the mask of each step.
std::vector<double> dropoutScales(rt::Trainer &trainer, uint64_t steps) {
  auto data = rt::Dataset::synthetic(trainer.model(), 5);
  rt::Batch batch;
  rt::StepResult result;
  for (uint64_t s = 0; s < steps; ++s) {
    EXPECT_TRUE(data->batch(s, batch).ok());
    EXPECT_TRUE(trainer.setBatch(batch).ok());
    EXPECT_TRUE(trainer.step(result).ok());
  }
  rt::TensorFile grads = trainer.gradients();
  const rt::Tensor &grad = grads.tensors.at("p");
  const rt::Tensor &r = batch.at("r");
  std::vector<double> scales;
  for (int64_t i = 0; i < grad.numElements(); ++i)
    scales.push_back(grad.dataAs<double>()[i] / r.dataAs<double>()[i]);
  return scales;
}

TEST(Dropout, MaskRateScaleAndStepDependence) {
  GradCase c{"dropout", param("p", "tensor<64x64xf64>", 1),
             "  %p = gacc.load @p : tensor<64x64xf64>\n"
             "  %y = gacc.dropout %p rate = 0.25 seed = 9 : tensor<64x64xf64>\n",
             "tensor<64x64xf64>", 64};
  mlir::DialectRegistry registry;
  mlir::gacc::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  auto compile = [&] {
    auto module = mlir::parseSourceString<mlir::ModuleOp>(buildModule(c),
                                                          &context);
    auto jit = mlir::gacc::jitCompileStep(*module);
    EXPECT_TRUE(mlir::succeeded(jit));
    return std::make_unique<rt::Trainer>(std::move(jit->model),
                                         std::move(jit->compiled));
  };
  auto first = compile(), second = compile();
  ASSERT_TRUE(first->initialize(1).ok());
  ASSERT_TRUE(second->initialize(1).ok());
  std::vector<double> step1 = dropoutScales(*first, 1);
  std::vector<double> step2 = dropoutScales(*first, 1); // the next step
  std::vector<double> again = dropoutScales(*second, 1);
  int dropped = 0, differ = 0;
  for (size_t i = 0; i < step1.size(); ++i) {
    ASSERT_TRUE(step1[i] == 0.0 || std::fabs(step1[i] - 1 / 0.75) < 1e-12)
        << step1[i];
    dropped += step1[i] == 0.0;
    differ += (step1[i] == 0.0) != (step2[i] == 0.0);
    EXPECT_EQ(step1[i], again[i]) << "the same step draws the same mask";
  }
  // 4096 draws at p = 0.25: 1024 expected, sd 28.
  EXPECT_NEAR(dropped, 1024, 120);
  // Consecutive steps draw independent masks: 2·p·(1-p) = 37.5% differ.
  EXPECT_NEAR(differ, 1536, 150);
}
} // namespace
