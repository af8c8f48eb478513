#!/usr/bin/env bash
# Regenerates docs/dialects/ and docs/passes/ from the ODS definitions
# (mlir-tblgen -gen-dialect-doc, -gen-pass-doc) through the build. tests/docs/up-to-date.test fails when
# the committed copy is stale.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
ninja -C "$build" mlir-doc
for doc in dialects/GaccDialect.md passes/GaccPasses.md passes/GaccCompilerPasses.md passes/GaccConversionPasses.md passes/GaccCommonPasses.md passes/GaccCpuPasses.md passes/GaccCudaPasses.md; do
  mkdir -p "$root/docs/$(dirname "$doc")"
  cp "$build/docs/$doc" "$root/docs/$doc"
  echo "updated docs/$doc"
done
