//===- PassBase.td - the base class of gacc's passes ------*- tablegen -*-===//
//
// MLIR's Pass, and what a pass reads and what it leaves for the passes after
// it. docs/architecture.md's pipeline table is generated from these fields
// (scripts/architecture.py), so that the contract between two passes is
// written where the pass is declared.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_PASSBASE_TD
#define GACC_PASSES_PASSBASE_TD

include "mlir/Pass/PassBase.td"

class GaccPass<string passArg, string operation = "">
    : Pass<passArg, operation> {
  // What the pass reads, and what it produces, in a phrase each.
  string consumes = ?;
  string produces = ?;
}

#endif // GACC_PASSES_PASSBASE_TD
