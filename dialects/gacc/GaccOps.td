//===- GaccOps.td - gacc operations ------------------------*- tablegen -*-===//
//
// Declarations (parameters, inputs), tensor compute ops, losses and the
// training step. Every tensor has a static shape.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_OPS_TD
#define GACC_OPS_TD

include "dialects/gacc/GaccAttrs.td"
include "dialects/gacc/GaccInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Gacc_Float : AnyTypeOf<[F16, BF16, F32, F64]>;
def Gacc_FloatTensor : StaticShapeTensorOf<[Gacc_Float]>;
def Gacc_IndexTensor : StaticShapeTensorOf<[I32, I64]>;
def Gacc_MaskTensor : StaticShapeTensorOf<[I1]>;
def Gacc_AnyTensor : StaticShapeTensorOf<[AnyType]>;

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

def Gacc_ParamOp : Gacc_Op<"param", [Symbol, HasParent<"ModuleOp">]> {
  let summary = "A parameter of the model: trainable, or frozen state";
  let description = [{
    Declares a parameter of the model: a float tensor that the training step
    owns, initializes with `init` and updates with the optimizer. Model
    functions read it with `gacc.load`. The xavier and kaiming initializers
    need at least two dimensions (fan-in and fan-out).

    A `frozen` parameter is state of the model that the optimizer never
    touches (PyTorch's buffers, such as batch norm's running statistics,
    and parameters with `requires_grad=False`): it has no gradient, no
    optimizer state, no part in the gradient norm, stays in its declared
    type under mixed precision and whole on every rank under ZeRO. It is
    initialized, checkpointed and read or set through the runtime like any
    parameter, and only `gacc.assign` changes it.

    ```mlir
    gacc.param @fc1_w : tensor<784x256xf32> = #gacc.init<kaiming_uniform, seed = 1>
    gacc.param @fc1_b : tensor<256xf32> = #gacc.init<zeros>
    gacc.param @bn1.running_var : tensor<64xf32> = #gacc.init<ones> frozen
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<Gacc_FloatTensor>:$type,
                       Gacc_InitAttr:$init, UnitAttr:$frozen);
  let assemblyFormat =
      "$sym_name `:` $type `=` qualified($init) (`frozen` $frozen^)? attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    RankedTensorType getTensorType() {
      return ::llvm::cast<RankedTensorType>(getType());
    }
  }];
}

def Gacc_InputOp : Gacc_Op<"input", [Symbol, HasParent<"ModuleOp">]> {
  let summary = "A named tensor of the global batch";
  let description = [{
    Declares one tensor that each training step receives, with the global
    batch in dimension 0. `features` are floats; `labels` and `tokens` are
    32- or 64-bit integers; a `mask` is `i1` or float.

    ```mlir
    gacc.input @image : tensor<64x784xf32> features
    gacc.input @label : tensor<64xi32> labels
    gacc.input @pad : tensor<16x64xi1> mask
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<Gacc_AnyTensor>:$type,
                       Gacc_InputKindAttr:$kind);
  let assemblyFormat = "$sym_name `:` $type `` $kind attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    RankedTensorType getTensorType() {
      return ::llvm::cast<RankedTensorType>(getType());
    }
  }];
}

def Gacc_LoadOp : Gacc_Op<"load",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Reads a parameter or an input";
  let description = [{
    Yields the current value of the `gacc.param` or `gacc.input` named by
    `name`; the result type is the declared type.

    ```mlir
    %w = gacc.load @fc1_w : tensor<784x256xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs Gacc_AnyTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def Gacc_ConstantOp : Gacc_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "A constant tensor";
  let description = [{
    ```mlir
    %scale = gacc.constant dense<0.125> : tensor<f32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Gacc_AnyTensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Gacc_UnaryOp<string mnemonic, string formula>
    : Gacc_Op<mnemonic, [Pure, SameOperandsAndResultType, DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "Elementwise " # formula;
  let description = [{
    Applies `}] # formula # [{` to every element.

    ```mlir
    %y = gacc.}] # mnemonic # [{ %x : tensor<64x256xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Gacc_NegOp : Gacc_UnaryOp<"neg", "-x">;
def Gacc_ExpOp : Gacc_UnaryOp<"exp", "exp(x)">;
def Gacc_LogOp : Gacc_UnaryOp<"log", "log(x)">;
def Gacc_SqrtOp : Gacc_UnaryOp<"sqrt", "sqrt(x)">;
def Gacc_RsqrtOp : Gacc_UnaryOp<"rsqrt", "1/sqrt(x)">;
def Gacc_TanhOp : Gacc_UnaryOp<"tanh", "tanh(x)">;
def Gacc_SigmoidOp : Gacc_UnaryOp<"sigmoid", "1/(1+exp(-x))">;
def Gacc_ReluOp : Gacc_UnaryOp<"relu", "max(x, 0)">;
def Gacc_ErfOp : Gacc_UnaryOp<"erf", "erf(x)">;

def Gacc_GeluOp : Gacc_Op<"gelu", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "Elementwise GELU";
  let description = [{
    `x·Φ(x)` with the exact `erf` form (the default) or the `tanh`
    approximation, as `torch.nn.functional.gelu(x, approximate=...)`.

    ```mlir
    %y = gacc.gelu %x : tensor<16x64x512xf32>
    %z = gacc.gelu %x approximation = tanh : tensor<16x64x512xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input,
      DefaultValuedAttr<Gacc_GeluApproximationAttr,
                        "GeluApproximation::erf">:$approximation);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat =
      "$input (`approximation` `=` `` $approximation^)? attr-dict `:` type($input)";
}

def Gacc_CastOp : Gacc_Op<"cast", [Pure, SameOperandsAndResultShape,
    DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "Convert every element to another float type";
  let description = [{
    Rounds to nearest even when narrowing (`f32` to `f16` or `bf16`;
    values beyond the narrow type's range become infinities) and is exact
    when widening. Its gradient is the gradient cast back to the operand's
    type. `gacc-mixed-precision` places these casts.

    ```mlir
    %h = gacc.cast %x : tensor<64x256xf32> to tensor<64x256xf16>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasFolder = 1;
}

def Gacc_QuantizeDynamicOp : Gacc_Op<"quantize_dynamic",
    [Pure, SameOperandsAndResultShape]> {
  let summary = "The nearest code of bitsandbytes' dynamic 8-bit map";
  let description = [{
    For each element (normalized to the map's range: [-1, 1] `signed`,
    [0, 1] otherwise), the index (0 to 255, an `i8` bit pattern) of the
    nearest of the 256 values of bitsandbytes' dynamic quantization map
    (`create_dynamic_map`: per decade 10^-6 to 10^0 a linear fraction, with
    0 and 1): what 8-bit optimizers store their moments as, block by block
    with an absolute maximum (see `#gacc.adamw8bit`). Not differentiable.

    ```mlir
    %c = gacc.quantize_dynamic %x signed : tensor<2048xf32> -> tensor<2048xi8>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input, UnitAttr:$is_signed);
  let results = (outs StaticShapeTensorOf<[I8]>:$result);
  let assemblyFormat =
      "$input (`signed` $is_signed^)? attr-dict `:` type($input) `->` type($result)";
  let extraClassDeclaration = [{
    /// The 256 values of the dynamic map, ascending.
    static ::llvm::ArrayRef<float> getDynamicMap(bool isSigned);
  }];
}

def Gacc_DequantizeDynamicOp : Gacc_Op<"dequantize_dynamic",
    [Pure, SameOperandsAndResultShape]> {
  let summary = "The values of codes of bitsandbytes' dynamic 8-bit map";
  let description = [{
    The inverse of `gacc.quantize_dynamic`: each code's value in the
    dynamic map (signed or not), in the result's float type.

    ```mlir
    %x = gacc.dequantize_dynamic %c signed : tensor<2048xi8> -> tensor<2048xf32>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[I8]>:$input, UnitAttr:$is_signed);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat =
      "$input (`signed` $is_signed^)? attr-dict `:` type($input) `->` type($result)";
}

class Gacc_BinaryOp<string mnemonic, string formula>
    : Gacc_Op<mnemonic, [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "Elementwise " # formula # " with broadcasting";
  let description = [{
    Computes `}] # formula # [{` elementwise after broadcasting both operands
    to a common shape with NumPy rules. The element types must match.

    ```mlir
    %y = gacc.}] # mnemonic # [{ %x, %b : tensor<64x256xf32>, tensor<256xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$lhs, Gacc_FloatTensor:$rhs);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &results) {
      return inferBroadcastResult(location, {adaptor.getLhs().getType(),
                                  adaptor.getRhs().getType()}, results);
    }
  }];
}

def Gacc_AddOp : Gacc_BinaryOp<"add", "lhs + rhs">;
def Gacc_SubOp : Gacc_BinaryOp<"sub", "lhs - rhs">;
def Gacc_MulOp : Gacc_BinaryOp<"mul", "lhs * rhs">;
def Gacc_DivOp : Gacc_BinaryOp<"div", "lhs / rhs">;

def Gacc_SelectOp : Gacc_Op<"select", [Pure, DeclareOpInterfaceMethods<Gacc_VJPOpInterface>, InferTypeOpAdaptor]> {
  let summary = "Elementwise choice with broadcasting";
  let description = [{
    `condition ? true_value : false_value` elementwise, all three operands
    broadcast with NumPy rules. With `gacc.causal_mask` this masks attention
    scores.

    ```mlir
    %masked = gacc.select %mask, %scores, %neg_inf
        : tensor<64x64xi1>, tensor<16x4x64x64xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins Gacc_MaskTensor:$condition, Gacc_FloatTensor:$true_value,
                       Gacc_FloatTensor:$false_value);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict `:`
    type($condition) `,` type($true_value) `,` type($false_value)
  }];
}

def Gacc_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "comparison", [
    I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
    I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
    I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>
  ]> {
  let cppNamespace = "::mlir::gacc";
  let genSpecializedAttr = 0;
}
def Gacc_ComparePredicateAttr
    : EnumAttr<Gacc_Dialect, Gacc_ComparePredicate, "compare_predicate"> {
  let summary = "An ordered float comparison";
  let description = [{
    Used by `gacc.compare`: `eq`, `ne`, `lt`, `le`, `gt` or `ge`.

    ```mlir
    %pos = gacc.compare gt %x, %zero : tensor<4xf32>, tensor<f32>
    ```
  }];
  let assemblyFormat = "$value";
}

def Gacc_CompareOp : Gacc_Op<"compare", [Pure, InferTypeOpAdaptor]> {
  let summary = "Elementwise comparison with broadcasting";
  let description = [{
    Compares two tensors of the same element type, float or integer (ids,
    compared as signed), elementwise after NumPy broadcasting; the result is
    an `i1` tensor (false wherever an operand is NaN, except `ne`). It has
    no gradient: derivative rules use it to build masks for `gacc.select`
    (cross-entropy's counted targets: those in `[0, classes)`).

    ```mlir
    %pos = gacc.compare gt %x, %zero : tensor<64x256xf32>, tensor<f32>
    %counted = gacc.compare ge %ids, %c0 : tensor<8x1024xi32>, tensor<i32>
    ```
  }];
  let arguments = (ins Gacc_ComparePredicateAttr:$predicate,
                       AnyTypeOf<[Gacc_FloatTensor, Gacc_IndexTensor]>:$lhs,
                       AnyTypeOf<[Gacc_FloatTensor, Gacc_IndexTensor]>:$rhs);
  let results = (outs Gacc_MaskTensor:$result);
  let assemblyFormat = [{
    `` $predicate $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)
  }];
}

def Gacc_CounterTensor : 0DTensorOf<[I64]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getI64Type())">;

def Gacc_DropoutOp : Gacc_Op<"dropout", [Pure,
    DeclareOpInterfaceMethods<Gacc_VJPOpInterface>,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Inverted dropout with an explicit seed";
  let description = [{
    Zeroes each element with probability `rate` and scales the others by
    `1/(1-rate)`. The mask is a pure function of `seed`, the `counter` (the
    step counter, which `gacc-build-step` supplies; 0 when absent) and the
    element's row-major index, so a recomputation draws the same bits and a
    resumed run the same masks. Evaluation (`gacc_eval`) skips dropout, as
    `model.eval()` does in PyTorch.

    ```mlir
    %y = gacc.dropout %x rate = 1.000000e-01 seed = 17 : tensor<16x64x128xf32>
    %z = gacc.dropout %x counter %step rate = 1.000000e-01 seed = 17 : tensor<16x64x128xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input,
                       Optional<Gacc_CounterTensor>:$counter, F64Attr:$rate,
                       I64Attr:$seed);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`counter` $counter^)? `rate` `=` $rate `seed` `=` $seed attr-dict
    `:` type($input)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra and shape
//===----------------------------------------------------------------------===//

def Gacc_MatmulOp : Gacc_Op<"matmul", [Pure, DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "Batched matrix product";
  let description = [{
    Multiplies the last two dimensions: `[..., M, K] x [..., K, N]` gives
    `[..., M, N]`; `transpose_lhs` reads the lhs as `[..., K, M]` and
    `transpose_rhs` the rhs as `[..., N, K]`. Both operands have rank at
    least 2; their leading (batch) dimensions broadcast with NumPy rules, so
    a `[B, T, C] x [C, D]` linear layer needs no explicit broadcast.

    ```mlir
    %h = gacc.matmul %x, %w : tensor<16x64x128xf32>, tensor<128x384xf32>
        -> tensor<16x64x384xf32>
    %s = gacc.matmul %q, %k transpose_rhs
        : tensor<16x4x64x32xf32>, tensor<16x4x64x32xf32> -> tensor<16x4x64x64xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$lhs, Gacc_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)?
    (`transpose_rhs` $transpose_rhs^)? attr-dict `:` type($lhs) `,` type($rhs)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Gacc_BroadcastOp : Gacc_Op<"broadcast", [Pure, DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "Broadcast to a larger shape with NumPy rules";
  let description = [{
    ```mlir
    %b2 = gacc.broadcast %b : tensor<256xf32> -> tensor<64x256xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

class Gacc_ReduceOp<string mnemonic, string what, string precision = "">
    : Gacc_Op<mnemonic, [Pure, DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "The " # what # " over axes";
  let description = [{
    Reduces the dimensions listed in `axes` (non-empty, strictly increasing,
    each below the rank) to their }] # what # [{. With `keepdims` they stay
    as dimensions of size 1.}] # precision # [{

    ```mlir
    %r = gacc.}] # mnemonic # [{ %x axes = [1] : tensor<64x10xf32> -> tensor<64xf32>
    %k = gacc.}] # mnemonic # [{ %x axes = [1] keepdims : tensor<64x10xf32> -> tensor<64x1xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdims);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `axes` `=` $axes (`keepdims` $keepdims^)? attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return verifyReduceOp(*this);
    }
  }];
}

def Gacc_ReduceSumOp : Gacc_ReduceOp<"reduce_sum", "sum", [{ An f16 or bf16
    sum adds in f32 and rounds once, as PyTorch's does (a bias gradient adds
    thousands of rows, which 8 bits of mantissa would drop).}]>;
def Gacc_ReduceMeanOp : Gacc_ReduceOp<"reduce_mean", "mean", [{ An f16 or
    bf16 mean is that sum, rounded, then divided.}]>;
def Gacc_ReduceMaxOp : Gacc_ReduceOp<"reduce_max", "maximum">;

def Gacc_ReshapeOp : Gacc_Op<"reshape", [Pure, DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "Reinterpret the elements in a new shape";
  let description = [{
    Row-major reshape; the element count and type are unchanged.

    ```mlir
    %h = gacc.reshape %x : tensor<16x64x128xf32> -> tensor<16x64x4x32xf32>
    ```
  }];
  let arguments = (ins Gacc_AnyTensor:$input);
  let results = (outs Gacc_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Gacc_TransposeOp : Gacc_Op<"transpose", [Pure, DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "Permute dimensions";
  let description = [{
    Result dimension `i` is input dimension `permutation[i]`.

    ```mlir
    %t = gacc.transpose %x perm = [0, 2, 1, 3]
        : tensor<16x64x4x32xf32> -> tensor<16x4x64x32xf32>
    ```
  }];
  let arguments = (ins Gacc_AnyTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Gacc_AnyTensor:$result);
  let assemblyFormat = [{
    $input `perm` `=` $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Gacc_SliceOp : Gacc_Op<"slice", [Pure, DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "A static rectangular slice";
  let description = [{
    Takes `sizes[i]` elements of dimension `i` starting at `offsets[i]`.

    ```mlir
    %q = gacc.slice %qkv offsets = [0, 0, 0] sizes = [16, 64, 128]
        : tensor<16x64x384xf32> -> tensor<16x64x128xf32>
    ```
  }];
  let arguments = (ins Gacc_AnyTensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes);
  let results = (outs Gacc_AnyTensor:$result);
  let assemblyFormat = [{
    $input `offsets` `=` $offsets `sizes` `=` $sizes attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Gacc_PadOp : Gacc_Op<"pad", [Pure, DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "Zero padding";
  let description = [{
    Adds `low[i]` zeros before and `high[i]` zeros after dimension `i`. It is
    the derivative of `gacc.slice`.

    ```mlir
    %p = gacc.pad %x low = [0, 1] high = [0, 2] : tensor<2x3xf32> -> tensor<2x6xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `low` `=` $low `high` `=` $high attr-dict `:` type($input) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Gacc_ConcatOp : Gacc_Op<"concat", [Pure, DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "Join tensors along an axis";
  let description = [{
    All inputs have the same rank and element type and agree on every
    dimension except `axis`.

    ```mlir
    %c = gacc.concat %a, %b axis = 1
        : tensor<8x3xf32>, tensor<8x5xf32> -> tensor<8x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Gacc_AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs Gacc_AnyTensor:$result);
  let assemblyFormat = [{
    $inputs `axis` `=` $axis attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Neural-network ops
//===----------------------------------------------------------------------===//

class Gacc_SoftmaxLikeOp<string mnemonic, string what>
    : Gacc_Op<mnemonic, [Pure, SameOperandsAndResultType, DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = what # " along an axis";
  let description = [{
    The numerically stable }] # what # [{ along `axis`.

    ```mlir
    %p = gacc.}] # mnemonic # [{ %scores axis = 3 : tensor<16x4x64x64xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = "$input `axis` `=` $axis attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Gacc_SoftmaxOp : Gacc_SoftmaxLikeOp<"softmax", "Softmax">;
def Gacc_LogSoftmaxOp : Gacc_SoftmaxLikeOp<"log_softmax", "Log-softmax">;

def Gacc_LayerNormOp : Gacc_Op<"layer_norm", [Pure, DeclareOpInterfaceMethods<Gacc_VJPOpInterface>,
    AllTypesMatch<["input", "result"]>, AllTypesMatch<["scale", "bias"]>]> {
  let summary = "Layer normalization over the trailing dimensions";
  let description = [{
    Normalizes over the trailing dimensions that `scale` and `bias` cover (the
    `normalized_shape` of `torch.nn.LayerNorm`) with the biased variance, then
    applies `scale` and `bias`.

    ```mlir
    %y = gacc.layer_norm %x, %gamma, %beta
        : tensor<16x64x128xf32>, tensor<128xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input, Gacc_FloatTensor:$scale,
                       Gacc_FloatTensor:$bias,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias attr-dict `:` type($input) `,` type($scale)
  }];
  let hasVerifier = 1;
}

def Gacc_EmbeddingOp : Gacc_Op<"embedding", [Pure, DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "Row lookup in an embedding table";
  let description = [{
    For a `[V, D]` table and integer ids of shape `S`, the result has shape
    `S x D`. Ids outside `[0, V)` are undefined behaviour in the compiled
    step (the runtime checks data it loads).

    ```mlir
    %e = gacc.embedding %table, %ids
        : tensor<96x128xf32>, tensor<16x64xi32> -> tensor<16x64x128xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$table, Gacc_IndexTensor:$indices);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $indices attr-dict `:` type($table) `,` type($indices) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Gacc_CheckpointOp : Gacc_Op<"checkpoint", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "Mark a rematerialization block boundary";
  let description = [{
    The identity, marking its operand as the input of a block (a
    transformer block, a layer): under the `blocks` rematerialization
    policy the backward pass keeps every checkpointed value and recomputes
    the forward values between them, as `torch.utils.checkpoint` around
    each block. Other policies ignore it; its gradient is the identity.
    A `gacc.remat = "save"` or `"recompute"` attribute on it forces that
    choice for the whole block, under any policy.

    ```mlir
    %x1 = gacc.checkpoint %x : tensor<16x64x128xf32>
    %x2 = gacc.checkpoint %y {gacc.remat = "save"} : tensor<16x64x128xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Gacc_OptimizationBarrierOp : Gacc_Op<"optimization_barrier",
    [AllTypesMatch<["inputs", "results"]>]> {
  let summary = "Values that optimizations must not see through";
  let description = [{
    The identity on its operands, which no rewrite may look through (it
    is not pure, so CSE never merges what is computed from its results with
    what is computed from its operands). `gacc-remat` recomputes forward
    values from the barrier's results, so that CSE does not fold the
    recomputation back into the forward pass. It survives the lowering to
    linalg and disappears in bufferization, where each result is its
    operand's buffer.

    ```mlir
    %c:2 = gacc.optimization_barrier %x, %w : tensor<16x128xf32>, tensor<128xf32>
    ```
  }];
  let arguments = (ins Variadic<Gacc_AnyTensor>:$inputs);
  let results = (outs Variadic<Gacc_AnyTensor>:$results);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
}

def Gacc_CausalMaskOp : Gacc_Op<"causal_mask", [Pure]> {
  let summary = "A lower-triangular attention mask";
  let description = [{
    For a result of shape `[..., T, S]`, element `[..., i, j]` is true when
    key `j` may be attended from query `i`: `j <= i + (S - T)`.

    ```mlir
    %mask = gacc.causal_mask : tensor<64x64xi1>
    ```
  }];
  let results = (outs Gacc_MaskTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Gacc_OneHotOp : Gacc_Op<"one_hot", [Pure,
    DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "One-hot encoding of integer ids";
  let description = [{
    For ids of shape `S` and a result of shape `S x C`, element `[s, c]` is
    1 where `ids[s] == c` and 0 elsewhere; ids outside `[0, C)` (such as an
    ignore index) give a row of zeros. Cross-entropy and the embedding
    gradient are built from it.

    ```mlir
    %h = gacc.one_hot %labels : tensor<64xi32> -> tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Gacc_IndexTensor:$indices);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = "$indices attr-dict `:` type($indices) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution and pooling (NCHW)
//===----------------------------------------------------------------------===//

// The window attributes every op of this family has, as torch.nn.functional's
// conv2d and pooling take them: output size (H + 2·padding - dilation·
// (kernel - 1) - 1) / stride + 1 per spatial dimension (floor).
class Gacc_WindowOp<string mnemonic, list<Trait> traits = []>
    : Gacc_Op<mnemonic, !listconcat([Pure], traits)> {
  let hasVerifier = 1;
}

def Gacc_Im2colOp : Gacc_WindowOp<"im2col",
    [DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "The sliding windows of an image as columns";
  let description = [{
    For an `N x C x H x W` input and a `KH x KW` window, the result is
    `N x C x (KH·KW) x (OH·OW)`: element `[n, c, kh·KW + kw, oh·OW + ow]` is
    `input[n, c, oh·stride + kh·dilation - padding, ow·... ]`, or
    `padding_value` outside the image (0 for convolutions, -inf for max
    pooling). It is linear, with `gacc.col2im` as its adjoint: the
    convolution becomes a matmul of the weights with these columns, which
    runs on BLAS or the tensor-core kernels (im2col + GEMM; the columns of
    a 3x3 convolution are 9 times its input).

    ```mlir
    %cols = gacc.im2col %x kernel = [3, 3] stride = [1, 1] padding = [1, 1] dilation = [1, 1]
        : tensor<8x64x8x8xf32> -> tensor<8x64x9x64xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation,
                       DefaultValuedAttr<F64Attr, "0.0">:$padding_value);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding
    `dilation` `=` $dilation attr-dict `:` type($input) `->` type($result)
  }];
}

def Gacc_Col2imOp : Gacc_WindowOp<"col2im",
    [DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "Columns summed back into an image";
  let description = [{
    The adjoint of `gacc.im2col` (padding dropped): each pixel of the
    `N x C x H x W` result is the sum of the column elements `gacc.im2col`
    reads from it. It is the input gradient of a convolution or pooling and
    is computed as a gather over the window (parallel over pixels, no
    scatter).

    ```mlir
    %dx = gacc.col2im %dcols kernel = [3, 3] stride = [1, 1] padding = [1, 1] dilation = [1, 1]
        : tensor<8x64x9x64xf32> -> tensor<8x64x8x8xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding
    `dilation` `=` $dilation attr-dict `:` type($input) `->` type($result)
  }];
}

def Gacc_Conv2dOp : Gacc_WindowOp<"conv2d",
    [DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "2-d convolution (cross-correlation), as F.conv2d";
  let description = [{
    `N x C x H x W` input, `F x (C/groups) x KH x KW` weight, result
    `N x F x OH x OW`; no bias (add one with `gacc.add`). `gacc-decompose`
    turns it into `gacc.im2col` and a matmul of the flattened weight with
    the columns (batched over groups); its gradients are a matmul for the
    weight and `gacc.col2im` of `Wᵀ·dy` for the input. Taps at the ends of
    the kernel that read only padding for every output position (a 3x3
    kernel over a 1x1 image has one that reaches it) are left out of both:
    the weight's slice of the others (`gacc.slice`), the window and its
    padding shrunk, and zeros (`gacc.pad`) for their gradient.

    ```mlir
    %y = gacc.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1
        : tensor<8x3x32x32xf32>, tensor<64x3x3x3xf32> -> tensor<8x64x32x32xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input, Gacc_FloatTensor:$weight,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `stride` `=` $stride `padding` `=` $padding
    `dilation` `=` $dilation `groups` `=` $groups attr-dict `:` type($input)
    `,` type($weight) `->` type($result)
  }];
}

def Gacc_MaxPool2dOp : Gacc_WindowOp<"max_pool2d",
    [DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "2-d max pooling, as F.max_pool2d";
  let description = [{
    The maximum of each window, padding counted as -inf (`ceil_mode`
    false). As PyTorch, the gradient goes to the first maximal element of
    each window in row-major order. `gacc-decompose` expands it into
    `gacc.im2col` and `gacc.reduce_max`.

    ```mlir
    %p = gacc.max_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1]
        : tensor<8x64x16x16xf32> -> tensor<8x64x8x8xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding
    `dilation` `=` $dilation attr-dict `:` type($input) `->` type($result)
  }];
}

def Gacc_AvgPool2dOp : Gacc_WindowOp<"avg_pool2d",
    [DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "2-d average pooling, as F.avg_pool2d";
  let description = [{
    The mean of each window, zero padding included in the count
    (`count_include_pad`, `ceil_mode` false). `gacc-decompose` expands it
    into `gacc.im2col` and `gacc.reduce_mean`.

    ```mlir
    %a = gacc.avg_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0]
        : tensor<8x64x16x16xf32> -> tensor<8x64x8x8xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding
    attr-dict `:` type($input) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Gacc_CrossEntropyOp : Gacc_Op<"cross_entropy", [Pure, DeclareOpInterfaceMethods<Gacc_VJPOpInterface>, InferTypeOpAdaptor]> {
  let summary = "Softmax cross-entropy with integer targets";
  let description = [{
    `logits` has shape `S x C` and `targets` shape `S`. Positions whose target
    equals `ignore_index` contribute nothing. The reduction divides the sum of
    the per-position losses by
    * `sum`: 1;
    * `mean`: the number of examples (dimension 0 of `targets`; 1 when
      `targets` is a scalar);
    * `token_mean`: the number of positions whose target is not ignored
      (`torch.nn.functional.cross_entropy`'s default).
    Accumulation and data parallelism divide by the global count of the whole
    batch, never per micro-batch. The result is a scalar of the logits'
    element type.

    ```mlir
    %loss = gacc.cross_entropy token_mean %logits, %targets ignore_index = -100
        : tensor<16x64x96xf32>, tensor<16x64xi32>
    ```
  }];
  let arguments = (ins Gacc_LossReductionAttr:$reduction,
                       Gacc_FloatTensor:$logits, Gacc_IndexTensor:$targets,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = [{
    `` $reduction $logits `,` $targets (`ignore_index` `=` $ignore_index^)?
    attr-dict `:` type($logits) `,` type($targets)
  }];
  let extraClassDeclaration = [{
    /// The ignore index as the signed id it is (-100), if set.
    std::optional<int64_t> getIgnoredTarget() {
      if (auto index = getIgnoreIndexAttr())
        return index.getInt();
      return std::nullopt;
    }
  }];
}

def Gacc_MseLossOp : Gacc_Op<"mse_loss", [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Gacc_VJPOpInterface>,
    AllTypesMatch<["input", "target"]>]> {
  let summary = "Mean squared error";
  let description = [{
    The `sum` or `mean` (over every element) of `(input - target)^2`; the
    result is a scalar of the input's element type.

    ```mlir
    %loss = gacc.mse_loss mean %pred, %target : tensor<64x1xf32>
    ```
  }];
  let arguments = (ins Gacc_LossReductionAttr:$reduction,
                       Gacc_FloatTensor:$input, Gacc_FloatTensor:$target);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat =
      "`` $reduction $input `,` $target attr-dict `:` type($input)";
}

def Gacc_LossScaleOp : Gacc_Op<"loss_scale", [Pure]> {
  let summary = "The training step's current loss scale";
  let description = [{
    The dynamic loss scale of the step being run (state that lives across
    steps, like a parameter): `gacc-autodiff` seeds the backward pass with
    it instead of 1 when the step uses loss scaling, so every gradient comes
    out multiplied by it; `gacc-build-step` unscales them, checks them for
    infinities and NaNs and updates the scale.

    ```mlir
    %s = gacc.loss_scale : tensor<f32>
    ```
  }];
  let results = (outs 0DTensorOf<[Gacc_Float]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// Every rank of a group of `ranks` processes runs the same step (SPMD) and
// reaches the same collectives in the same order; each combines one tensor
// per rank. Rank-local values stay ordinary tensors. Collectives are not
// pure: every rank must reach each of them, so CSE must not merge two (ZeRO-3
// gathers a parameter again for each use, to free it in between) and
// dead-code elimination must not drop one on some ranks.
def Gacc_Communicates : MemoryEffects<[MemRead, MemWrite]>;

def Gacc_AllReduceOp : Gacc_Op<"all_reduce", [Gacc_Communicates, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "Every rank gets the sum or mean of all ranks' tensors";
  let description = [{
    Data parallelism's gradient exchange. Its gradient is the all-reduce of
    the gradient with the same reduction (each rank's result feeds its own
    loss, which the ranks sum).

    ```mlir
    %g = gacc.all_reduce sum %x ranks = 4 : tensor<256x784xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input,
                       Gacc_CollectiveReductionAttr:$reduction,
                       ConfinedAttr<I64Attr, [IntPositive]>:$ranks);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat =
      "$reduction $input `ranks` `=` $ranks attr-dict `:` type($input)";
}

def Gacc_ReduceScatterOp : Gacc_Op<"reduce_scatter", [Gacc_Communicates,
    DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "Reduce over ranks, each rank keeping one shard";
  let description = [{
    Combines all ranks' tensors as `gacc.all_reduce` does and splits the
    result along `dim` into `ranks` equal shards; rank r gets shard r. The
    dimension must divide evenly. ZeRO-2 reduces gradients this way. Its
    gradient gathers the gradient of the shards (`gacc.all_gather`), divided
    by `ranks` for `mean`.

    ```mlir
    %s = gacc.reduce_scatter sum %g dim = 0 ranks = 4 : tensor<256x784xf32> -> tensor<64x784xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input,
                       Gacc_CollectiveReductionAttr:$reduction,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       ConfinedAttr<I64Attr, [IntPositive]>:$ranks);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = [{
    $reduction $input `dim` `=` $dim `ranks` `=` $ranks attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Gacc_AllGatherOp : Gacc_Op<"all_gather", [Gacc_Communicates,
    DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "Concatenate every rank's shard, on every rank";
  let description = [{
    The ranks' tensors concatenated along `dim` in rank order. ZeRO-3
    gathers parameters this way before use. Its gradient reduce-scatters
    the gradient with `sum`.

    ```mlir
    %w = gacc.all_gather %shard dim = 0 ranks = 4 : tensor<64x784xf32> -> tensor<256x784xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       ConfinedAttr<I64Attr, [IntPositive]>:$ranks);
  let results = (outs Gacc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `dim` `=` $dim `ranks` `=` $ranks attr-dict `:` type($input) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Gacc_CollectiveBroadcastOp : Gacc_Op<"collective_broadcast", [Gacc_Communicates,
    SameOperandsAndResultType]> {
  let summary = "Every rank gets the root rank's tensor";
  let description = [{
    Initial parameters and the other state that must agree across ranks
    come from rank `root`. It has no gradient rule.

    ```mlir
    %w = gacc.collective_broadcast %w0 root = 0 ranks = 4 : tensor<256x784xf32>
    ```
  }];
  let arguments = (ins Gacc_AnyTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$root,
                       ConfinedAttr<I64Attr, [IntPositive]>:$ranks);
  let results = (outs Gacc_AnyTensor:$result);
  let assemblyFormat = [{
    $input `root` `=` $root `ranks` `=` $ranks attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Model state and batch normalization
//===----------------------------------------------------------------------===//

def Gacc_AssignOp : Gacc_Op<"assign", [MemoryEffects<[MemWrite]>,
    HasParent<"::mlir::func::FuncOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Writes a new value into a frozen parameter";
  let description = [{
    Sets the `frozen` `gacc.param` named by `name` to `value` (of its
    declared type), as PyTorch's modules update their buffers in the
    forward pass (batch norm's running statistics). It has a side effect,
    so dead-code elimination and CSE keep it. The training step writes the
    value into the parameter's slot after the forward pass; with
    micro-batches each micro-batch's assign takes effect before the next
    micro-batch reads the parameter. `gacc.load` in the same function reads
    the value the parameter had when the function began, and a function
    assigns a parameter at most once. Evaluation (`gacc_eval`) performs no
    assign. Not differentiable: its value is no part of the loss.

    ```mlir
    %rm = gacc.load @bn1.running_mean : tensor<64xf32>
    ...
    gacc.assign @bn1.running_mean, %new_rm : tensor<64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name, Gacc_FloatTensor:$value);
  let assemblyFormat = "$name `,` $value attr-dict `:` type($value)";
}

def Gacc_BatchNormOp : Gacc_Op<"batch_norm", [Pure,
    DeclareOpInterfaceMethods<Gacc_VJPOpInterface>,
    AllTypesMatch<["input", "result"]>,
    AllTypesMatch<["scale", "bias", "running_mean", "running_var",
                   "new_running_mean", "new_running_var"]>]> {
  let summary = "Batch normalization over every dimension but the channels";
  let description = [{
    `torch.nn.BatchNorm1d`/`BatchNorm2d` on an `N x C` or `N x C x ...`
    input: each channel (dimension 1) is normalized over every other
    dimension, then scaled by `scale` and shifted by `bias` (both `[C]`).

    In training (the default) it normalizes with the batch mean and the
    biased variance and returns the running statistics updated with
    `momentum`:
    `new_running_mean = (1 - momentum) * running_mean + momentum * mean` and
    `new_running_var = (1 - momentum) * running_var + momentum * var * n / (n - 1)`
    (the unbiased variance, with `n` values per channel, which must be more
    than one). With `inference` (what `gacc_eval` runs, as `model.eval()`)
    it normalizes with `running_mean` and `running_var` and returns them
    unchanged. The running statistics have no gradient; the model writes the
    new ones back with `gacc.assign`.

    Micro-batches compute the statistics of each micro-batch, so a step
    that uses batch norm with micro-batches (or several ranks) is not
    equal to one step over the whole batch; the compiler warns about it.

    ```mlir
    %rm = gacc.load @bn1.running_mean : tensor<64xf32>
    %rv = gacc.load @bn1.running_var : tensor<64xf32>
    %y, %new_rm, %new_rv = gacc.batch_norm %x, %w, %b, %rm, %rv
        momentum = 1.000000e-01 epsilon = 1.000000e-05
        : tensor<8x64x16x16xf32>, tensor<64xf32>
    gacc.assign @bn1.running_mean, %new_rm : tensor<64xf32>
    gacc.assign @bn1.running_var, %new_rv : tensor<64xf32>
    %e, %rm2, %rv2 = gacc.batch_norm %x, %w, %b, %rm, %rv
        momentum = 1.000000e-01 epsilon = 1.000000e-05 inference
        : tensor<8x64x16x16xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Gacc_FloatTensor:$input, Gacc_FloatTensor:$scale,
                       Gacc_FloatTensor:$bias, Gacc_FloatTensor:$running_mean,
                       Gacc_FloatTensor:$running_var, F64Attr:$momentum,
                       F64Attr:$epsilon, UnitAttr:$inference);
  let results = (outs Gacc_FloatTensor:$result,
                      Gacc_FloatTensor:$new_running_mean,
                      Gacc_FloatTensor:$new_running_var);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $running_mean `,` $running_var
    `momentum` `=` $momentum `epsilon` `=` $epsilon
    (`inference` $inference^)? attr-dict `:` type($input) `,` type($scale)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The axes statistics are taken over: every one but the channels (1).
    ::llvm::SmallVector<int64_t> getReductionAxes();
    /// The values per channel: the elements over the reduction axes.
    int64_t getValuesPerChannel();
  }];
}

//===----------------------------------------------------------------------===//
// Fused attention
//===----------------------------------------------------------------------===//

// Both ops are in destination-passing style, as linalg's: on tensors they
// return their `into` operands' new values (tensor.empty where nothing is
// read from them); on buffers (after bufferization) they write them, and a
// target lowers them to its kernels (gacc-cuda-flash-attention).
class Gacc_AttentionBase<string mnemonic, list<Trait> traits = []>
    : Gacc_Op<mnemonic, !listconcat(traits, [DestinationStyleOpInterface,
          DeclareOpInterfaceMethods<MemoryEffectsOpInterface>])> {
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let hasVerifier = 1;
  code attentionDeclarations = [{
    /// Q, K and V: [batch, heads, T, D], [batch, heads, S, D] (twice).
    ::mlir::ShapedType getQueryType() {
      return ::llvm::cast<::mlir::ShapedType>(getQuery().getType());
    }
    ::mlir::ShapedType getKeyType() {
      return ::llvm::cast<::mlir::ShapedType>(getKey().getType());
    }
    /// The type of the scores, the softmax, the per-query values and the
    /// key bias: f64 for f64 operands (gradient checks), f32 otherwise.
    static ::mlir::Type getComputeType(::mlir::Type element) {
      return element.isF64() ? element
                             : ::mlir::Float32Type::get(element.getContext());
    }
    ::mlir::Type getComputeType() {
      return getComputeType(getQueryType().getElementType());
    }
  }];
}

def Gacc_AttentionOp : Gacc_AttentionBase<"attention",
    [DeclareOpInterfaceMethods<Gacc_VJPOpInterface>]> {
  let summary = "Scaled dot-product attention, without the scores in memory";
  let description = [{
    `softmax(scale · Q Kᵀ + key_bias [+ causal mask]) V` for queries `Q`
    `[B, H, T, D]` and keys and values `K`, `V` `[B, H, S, D]`, as
    PyTorch's `scaled_dot_product_attention`; also the log-sum-exp of each
    query's scores, `[B, H, T]`, which its gradient (`gacc.attention_grad`)
    reads instead of the T x S probabilities: a target computes it block by
    block and never stores the scores. `key_bias` (`[B, S]`) is added to
    every query's score of each key: 0 for tokens, a large negative number
    for padding. `causal` hides key `j` from query `i` where
    `j > i + (S - T)`, as `gacc.causal_mask`. The scores, the softmax, the
    log-sum-exp and the key bias are f32 for f32, f16 and bf16 operands and
    f64 for f64 (gradient checks); the output is in Q's type.

    gacc-fuse-attention forms it from the ops attention is written with.
    The CUDA targets lower it to FlashAttention-2's kernels
    (gacc-cuda-flash-attention), the CPU to the runtime's blocked kernel
    (gacc-cpu-attention-to-call).

    ```mlir
    %o0 = tensor.empty() : tensor<8x12x1024x64xbf16>
    %l0 = tensor.empty() : tensor<8x12x1024xf32>
    %o, %lse = gacc.attention %q, %k, %v into %o0, %l0 scale = 1.250000e-01
        causal : tensor<8x12x1024x64xbf16>, tensor<8x12x1024x64xbf16>,
        tensor<8x12x1024x64xbf16> into tensor<8x12x1024x64xbf16>,
        tensor<8x12x1024xf32> -> tensor<8x12x1024x64xbf16>, tensor<8x12x1024xf32>
    ```
  }];
  let arguments = (ins AnyShaped:$query, AnyShaped:$key, AnyShaped:$value,
                       Optional<AnyShaped>:$key_bias, AnyShaped:$out,
                       AnyShaped:$logsumexp, F64Attr:$scale, UnitAttr:$causal);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`key_bias` $key_bias^)? `into` $out `,`
    $logsumexp `scale` `=` $scale (`causal` $causal^)? attr-dict `:`
    type($query) `,` type($key) `,` type($value) (`,` type($key_bias)^)?
    `into` type($out) `,` type($logsumexp) (`->` type($results)^)?
  }];
  let extraClassDeclaration = attentionDeclarations # [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return ::mlir::MutableOperandRange(
          getOperation(), getODSOperandIndexAndLength(4).first, 2);
    }
  }];
}

def Gacc_AttentionGradOp : Gacc_AttentionBase<"attention_grad"> {
  let summary = "The gradients of gacc.attention's Q, K and V";
  let description = [{
    From the output's gradient `dO` and what the forward kept: the
    log-sum-exp of each query's scores and `delta = rowsum(dO · O)`
    (`[B, H, T]`, in the forward's compute type), FlashAttention-2's backward: the probabilities are
    recomputed block by block, `dS = P · (dO Vᵀ - delta)`,
    `dQ = scale · dS K`, `dK = scale · dSᵀ Q`, `dV = Pᵀ dO`. `key_bias`,
    `scale` and `causal` are the forward's.

    ```mlir
    %dq, %dk, %dv = gacc.attention_grad %q, %k, %v, %do, %lse, %delta
        into %e0, %e1, %e2 scale = 1.250000e-01 causal : ...
    ```
  }];
  let arguments = (ins AnyShaped:$query, AnyShaped:$key, AnyShaped:$value,
                       AnyShaped:$out_grad, AnyShaped:$logsumexp,
                       AnyShaped:$delta, Optional<AnyShaped>:$key_bias,
                       AnyShaped:$query_grad, AnyShaped:$key_grad,
                       AnyShaped:$value_grad, F64Attr:$scale,
                       UnitAttr:$causal);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $out_grad `,` $logsumexp `,` $delta
    (`key_bias` $key_bias^)? `into` $query_grad `,` $key_grad `,` $value_grad
    `scale` `=` $scale (`causal` $causal^)? attr-dict `:` type($query) `,`
    type($key) `,` type($value) `,` type($out_grad) `,` type($logsumexp) `,`
    type($delta) (`,` type($key_bias)^)? `into` type($query_grad) `,`
    type($key_grad) `,` type($value_grad) (`->` type($results)^)?
  }];
  let extraClassDeclaration = attentionDeclarations # [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return ::mlir::MutableOperandRange(
          getOperation(), getODSOperandIndexAndLength(7).first, 3);
    }
  }];
}

//===----------------------------------------------------------------------===//
// The training step
//===----------------------------------------------------------------------===//

def Gacc_TrainStepOp : Gacc_Op<"train_step", [Symbol, HasParent<"ModuleOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "One optimizer step over a global batch";
  let description = [{
    Names the model function (`model`: a `func.func` with no arguments whose
    first result is the scalar float loss; further results are outputs such as
    logits) and configures the step:

    * `batch_size`: the global batch; each rank reads `batch_size / ranks`
      examples (dimension 0 of every `gacc.input`: the whole batch on one
      rank, see `gacc-zero`); `micro_batch_size` (default: the rank's
      batch) splits a rank's examples into accumulation steps;
    * `optimizer`: `#gacc.sgd`, `#gacc.adamw`, `#gacc.adam`, `#gacc.adamw8bit` or
      `#gacc.adafactor`; `schedule`: `#gacc.constant_lr` (default),
      `#gacc.warmup_cosine` or `#gacc.warmup_polynomial`; `grad_clip_norm`: clip the global
      gradient norm to this value (default: no clipping);
    * `precision`: `f32` (default), `f16` or `bf16` compute (see
      `gacc-mixed-precision`); `loss_scale`: `#gacc.loss_scale<...>`, dynamic
      loss scaling (default: on with GradScaler's settings for `f16`, off
      otherwise);
    * `remat`: `#gacc.remat<...>` (default `none`);
    * `zero`: `#gacc.zero<...>` (default stage 0 on 1 rank); the batch must
      divide evenly over the ranks.

    The training pipeline links the functions it derives from the model to
    the step by symbol references (checked to name `func.func`s), which the
    passes after it read instead of conventions on names:

    * `micro_model`, `last_micro_model` (`gacc-split-batch`): the model of
      one micro-batch, and of the smaller last one when the micro-batch size
      does not divide the rank's batch, with the loss summed;
    * `micro_gradient`, `last_micro_gradient` (`gacc-autodiff`): their
      gradient functions, seeded by a trailing scalar argument;
    * `gradient` (`gacc-autodiff` without micro-batches, else
      `gacc-accumulate`): loss, outputs and gradients over the rank's whole
      batch, what `gacc-build-step` compiles;
    * `eval_model` (`gacc-accumulate`, with several micro-batches): the
      model's loss and outputs over the rank's batch, computed a
      micro-batch at a time, which `gacc_eval` runs instead of `model`.

    ```mlir
    gacc.train_step @train model @mlp batch_size 64 micro_batch_size 16
        optimizer #gacc.adamw<lr = 1.000000e-03>
        schedule #gacc.warmup_cosine<warmup_steps = 10, total_steps = 500>
        grad_clip_norm 1.000000e+00 precision bf16 remat #gacc.remat<sqrt>
        zero #gacc.zero<stage = 1, ranks = 2>
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    FlatSymbolRefAttr:$model,
    I64Attr:$batch_size,
    OptionalAttr<I64Attr>:$micro_batch_size,
    Gacc_OptimizerAttr:$optimizer,
    OptionalAttr<Gacc_ScheduleAttr>:$schedule,
    OptionalAttr<F64Attr>:$grad_clip_norm,
    OptionalAttr<Gacc_PrecisionAttr>:$precision,
    OptionalAttr<Gacc_LossScaleAttr>:$loss_scale,
    OptionalAttr<Gacc_RematAttr>:$remat,
    OptionalAttr<Gacc_ZeroAttr>:$zero,
    OptionalAttr<FlatSymbolRefAttr>:$micro_model,
    OptionalAttr<FlatSymbolRefAttr>:$last_micro_model,
    OptionalAttr<FlatSymbolRefAttr>:$micro_gradient,
    OptionalAttr<FlatSymbolRefAttr>:$last_micro_gradient,
    OptionalAttr<FlatSymbolRefAttr>:$gradient,
    OptionalAttr<FlatSymbolRefAttr>:$eval_model
  );
  let assemblyFormat = [{
    $sym_name `model` $model `batch_size` $batch_size
    (`micro_batch_size` $micro_batch_size^)?
    `optimizer` $optimizer (`schedule` $schedule^)?
    (`grad_clip_norm` $grad_clip_norm^)? (`precision` `` $precision^)?
    (`loss_scale` qualified($loss_scale)^)?
    (`remat` qualified($remat)^)? (`zero` qualified($zero)^)?
    (`micro_model` $micro_model^)? (`last_micro_model` $last_micro_model^)?
    (`micro_gradient` $micro_gradient^)?
    (`last_micro_gradient` $last_micro_gradient^)?
    (`gradient` $gradient^)? (`eval_model` $eval_model^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The step named `name` in `module`, or its only one when `name` is
    /// empty; reports an error at the module and returns null otherwise.
    static TrainStepOp find(::mlir::ModuleOp module, ::llvm::StringRef name);
    /// The function `ref` names; null for none or not a func.func.
    ::mlir::func::FuncOp lookupFunc(::mlir::FlatSymbolRefAttr ref);
    /// The model function and the functions the pipeline derived (see the
    /// description); null when the reference is absent.
    ::mlir::func::FuncOp getModelFunc() { return lookupFunc(getModelAttr()); }
    ::mlir::func::FuncOp getMicroModelFunc() {
      return lookupFunc(getMicroModelAttr());
    }
    ::mlir::func::FuncOp getLastMicroModelFunc() {
      return lookupFunc(getLastMicroModelAttr());
    }
    ::mlir::func::FuncOp getMicroGradientFunc() {
      return lookupFunc(getMicroGradientAttr());
    }
    ::mlir::func::FuncOp getLastMicroGradientFunc() {
      return lookupFunc(getLastMicroGradientAttr());
    }
    ::mlir::func::FuncOp getGradientFunc() {
      return lookupFunc(getGradientAttr());
    }
    ::mlir::func::FuncOp getEvalModelFunc() {
      return lookupFunc(getEvalModelAttr());
    }
    /// Whether each rank runs its examples as a loop of micro-batches whose
    /// losses and gradients are summed and normalized by the global batch's
    /// count (several micro-batches, or several ranks).
    bool accumulatesMicroBatches() {
      return getAccumulationSteps() > 1 || getEffectiveZero().getRanks() > 1;
    }
    /// Whether gacc-accumulate reduce-scatters every micro-batch's gradients
    /// into sharded accumulators (ZeRO stages 2 and 3 with several
    /// micro-batches): then `gradient` returns this rank's shards, which
    /// gacc-build-step does not reduce again.
    bool reducesGradientsPerMicroBatch() {
      return getEffectiveZero().getStage() >= 2 && getAccumulationSteps() > 1;
    }
    /// The examples each rank trains on per step (the zero attribute's
    /// ranks divide the batch: verified). Batch sizes are positive
    /// (verified), so the unsigned accessors of I64Attr convert safely.
    int64_t getRankBatchSize() {
      return getBatchSize() / getEffectiveZero().getRanks();
    }
    int64_t getEffectiveMicroBatchSize() {
      return getMicroBatchSize().value_or(getRankBatchSize());
    }
    /// How many micro-batches each rank runs per step (the last may be
    /// smaller).
    int64_t getAccumulationSteps() {
      int64_t m = getEffectiveMicroBatchSize();
      return (getRankBatchSize() + m - 1) / m;
    }
    Precision getEffectivePrecision() {
      return getPrecision().value_or(Precision::f32);
    }
    /// The dynamic loss scaling this step uses: the attribute if given,
    /// else the defaults for f16; null for none.
    LossScaleAttr getEffectiveLossScale();
    RematAttr getEffectiveRemat();
    ZeroAttr getEffectiveZero();
    ::mlir::Attribute getEffectiveSchedule();
    /// The learning rate the optimizer attribute sets.
    double getBaseLearningRate();
  }];
}

#endif // GACC_OPS_TD
