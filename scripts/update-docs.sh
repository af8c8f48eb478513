#!/usr/bin/env bash
# Regenerates docs/dialects/, docs/passes/ and docs/architecture.md's pipeline table from the ODS definitions
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
/usr/bin/python3 "$root/scripts/architecture.py" --gacc-opt "$build/bin/gacc-opt" \
  --update "$root/docs/architecture.md"
echo "updated docs/architecture.md"
