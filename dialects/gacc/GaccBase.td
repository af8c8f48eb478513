//===- GaccBase.td - the gacc dialect and its common classes -*- tablegen -*-===//
//
// The dialect definition and the op/attribute base classes shared by
// GaccAttrs.td and GaccOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_BASE_TD
#define GACC_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Gacc_Dialect : Dialect {
  let name = "gacc";
  let cppNamespace = "::mlir::gacc";
  let summary = "Neural-network training steps: models, losses and optimizers";
  let description = [{
    The `gacc` dialect describes a model and its training step. A module holds

    * `gacc.param` declarations: the parameters, each with a shape, an
      element type and an initializer; trainable, or `frozen` (state the
      optimizer never touches, such as batch norm's running statistics,
      which the model updates with `gacc.assign`);
    * `gacc.input` declarations: the named tensors of one global batch
      (features, integer labels or token ids, masks); dimension 0 is the batch;
    * a model function (`func.func`) that reads parameters and inputs with
      `gacc.load`, computes with value-semantic tensor ops and returns the
      scalar loss as its first result;
    * one `gacc.train_step` that names the model function and configures the
      optimizer, learning-rate schedule, gradient clipping, batch and
      micro-batch sizes, precision, rematerialization and ZeRO sharding.

    Elementwise binary ops and `gacc.select` broadcast their operands with
    NumPy rules: shapes are aligned at their trailing dimensions and each pair
    of dimensions must be equal or one of them 1. Axes are non-negative.

    ```mlir
    gacc.param @w : tensor<3x4xf32> = #gacc.init<xavier_uniform, seed = 1>
    gacc.input @x : tensor<8x4xf32> features
    gacc.input @y : tensor<8xi32> labels
    func.func @model() -> tensor<f32> {
      %x = gacc.load @x : tensor<8x4xf32>
      %y = gacc.load @y : tensor<8xi32>
      %w = gacc.load @w : tensor<3x4xf32>
      %logits = gacc.matmul %x, %w transpose_rhs
          : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
      %loss = gacc.cross_entropy mean %logits, %y
          : tensor<8x3xf32>, tensor<8xi32>
      return %loss : tensor<f32>
    }
    gacc.train_step @train model @model batch_size 8
        optimizer #gacc.sgd<lr = 0.1, momentum = 0.9>
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::tensor::TensorDialect"];
  let useDefaultAttributePrinterParser = 1;
  // The attributes one pass leaves for another (and the op overrides users
  // write), each with a named helper (`getGradientsAttrHelper()`, ...) and
  // checked by verifyOperationAttribute / verifyRegionArgAttribute.
  let discardableAttrs = (ins
    // On a gradient function (gacc-autodiff): the gacc.param each trailing
    // result is the gradient of, in order.
    "::mlir::ArrayAttr":$gradients,
    // On a model that gacc-mixed-precision has autocast: its precision.
    "::mlir::gacc::PrecisionAttr":$autocast_precision,
    // On an op: "low" or "f32" overrides its autocast class.
    "::mlir::StringAttr":$autocast,
    // On an op: "save" or "recompute" overrides the remat policy.
    "::mlir::StringAttr":$remat,
    // On a gacc.train_step with the `budget` remat policy: the bytes of
    // activations gacc-remat may keep (the memory planner derives it).
    "::mlir::IntegerAttr":$remat_activation_budget,
    // On an entry point's argument: the arena it is ("state", ...).
    "::mlir::StringAttr":$arena,
    // On an entry point (gacc-plan-buffers): the workspace arena's bytes
    // and the bytes of temporaries left to the heap.
    "::mlir::IntegerAttr":$workspace_bytes,
    "::mlir::IntegerAttr":$unplanned_bytes,
    // On a loop nest function that computes a range [lo, hi) of a parallel
    // loop (gacc-cpu-split-parallel-nests): the chunk size its calls run in.
    "::mlir::IntegerAttr":$parallel_grain,
    // On a gacc.matmul (unit; kept on the linalg contraction it lowers
    // to): it is `one_hot(ids)ᵀ · dy`, the gradient of
    // an embedding table (gacc.embedding's VJP); a target may add each row
    // of dy into its id's row instead of multiplying (the CPU does).
    "::mlir::UnitAttr":$embedding_gradient,
    // On a gacc.param: its own weight decay (an f64, at least 0) instead of
    // the optimizer's, as a torch.optim parameter group's.
    "::mlir::FloatAttr":$weight_decay,
    // On a frozen gacc.param (gacc-lora): its low-rank adapter.
    "::mlir::gacc::LoraAttr":$lora,
    // On the module (`gacc import`): the safetensors file, relative to the
    // module's own file, that holds its parameters' and buffers' initial
    // values; `gacc run` starts from them unless given --init or --resume.
    "::mlir::StringAttr":$initial_values
  );
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Gacc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Gacc_Dialect, mnemonic, traits>;

class Gacc_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Gacc_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // GACC_BASE_TD
