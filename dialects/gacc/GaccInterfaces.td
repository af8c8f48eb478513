//===- GaccInterfaces.td - gacc op interfaces --------------*- tablegen -*-===//

#ifndef GACC_INTERFACES_TD
#define GACC_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Gacc_VJPOpInterface : OpInterface<"VJPOpInterface"> {
  let cppNamespace = "::mlir::gacc";
  let description = [{
    The reverse-mode derivative rule of an op: given the gradient of the loss
    with respect to the op's (single) result, build the gradients with
    respect to its operands. `gacc-autodiff` calls it for every op on a path
    from a parameter to the loss; a new op brings its own rule by
    implementing this interface.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at the builder's insertion point, the vector-Jacobian product
        of this op for `resultGrad`, and fills `operandGrads` with one value
        per operand: a gradient of the operand's type, or null where the
        operand is not differentiable (integer ids, masks).
      }],
      "::llvm::LogicalResult", "buildVJP",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Value":$resultGrad,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>
  ];
}

#endif // GACC_INTERFACES_TD
