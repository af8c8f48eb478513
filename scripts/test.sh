#!/usr/bin/env bash
# Sets up and builds (scripts/setup.sh), then runs the whole suite: the lit
# tests and the GoogleTest/ctest tests. Fails if either runs zero tests: a
# misconfigured lit passes silently otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GACC_BUILD_DIR:-$root/build}
# The suite also needs PyTorch and torchvision (parity), scikit-learn (the digits data),
# matplotlib (the plotting script) and OpenBLAS (a fair PyTorch peer).
GACC_EXTRA_PACKAGES="python3-torch python3-torchvision python3-sklearn python3-matplotlib libopenblas0-pthread" \
  "$root/scripts/setup.sh"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
/usr/lib/llvm-22/bin/lit -sv "$build/tests" | tee "$log" || status=$?
discovered=$(sed -n 's/^Total Discovered Tests: \([0-9]*\)$/\1/p' "$log")
if [ "${discovered:-0}" -eq 0 ]; then
  echo "test: lit discovered no tests" >&2
  exit 1
fi
[ "$status" -eq 0 ] || exit "$status"

ctest --test-dir "$build" --output-on-failure --no-tests=error -j "$(nproc)"
echo "test: $discovered lit tests and the ctest suite passed"
