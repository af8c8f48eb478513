//===- Passes.td - gacc conversion passes ------------------*- tablegen -*-===//

#ifndef GACC_CONVERSION_PASSES_TD
#define GACC_CONVERSION_PASSES_TD

include "passes/PassBase.td"

def ConvertGaccToLinalg : GaccPass<"convert-gacc-to-linalg"> {
  let consumes = "gacc ops on tensors";
  let produces = "linalg (named contractions, generics), tensor, arith and math ops";
  let summary = "Lower primitive gacc compute ops to linalg, tensor, arith and math";
  let description = [{
    Every elementwise op (with NumPy broadcasting) becomes one
    `linalg.generic` whose indexing maps do the broadcasting, so elementwise
    fusion can merge chains; reductions become `linalg.generic` ops with
    reduction iterators; matmuls become named contractions,
    `linalg.contract` (its maps do the transposes and batch broadcasting,
    f16/bf16 operands accumulate in f32), which stay named until a target
    lowers them; shape ops become `tensor` ops;
    `gacc.constant` becomes `arith.constant`; collectives become calls of
    the runtime's communicator (`gacc_comm_all_reduce_<type>`,
    `..._reduce_scatter_<type>`, `..._all_gather_<type>`,
    `..._broadcast_<type>`: the operand's buffer and a new result buffer as
    unranked memrefs, the element type as the runtime's DType number, and
    the reduction (0 sum, 1 mean) or root). Composite ops must be
    decomposed first (`gacc-decompose`). Declarations and `gacc.load` are
    left alone: the step builder replaces them.

    ```mlir
    %y = gacc.add %x, %b : tensor<4x3xf32>, tensor<3xf32>
    // becomes
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
        affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], ...}
        ins(%x, %b : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {...}
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // GACC_CONVERSION_PASSES_TD
