#!/usr/bin/env bash
# Regenerates docs/dialects/ from the ODS definitions (mlir-tblgen
# -gen-dialect-doc) through the build. tests/docs/up-to-date.test fails when
# the committed copy is stale.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
ninja -C "$build" mlir-doc
mkdir -p "$root/docs/dialects"
cp "$build/docs/dialects/GaccDialect.md" "$root/docs/dialects/GaccDialect.md"
echo "updated docs/dialects/GaccDialect.md"
