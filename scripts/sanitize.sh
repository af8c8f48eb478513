#!/usr/bin/env bash
# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer
# (docs/hardening.md): scripts/test.sh on a -DGACC_SANITIZE=ON build in
# build-sanitize/ (or $GACC_BUILD_DIR). The lit configuration and ctest set
# the sanitizers' options for that build themselves.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export GACC_BUILD_DIR=${GACC_BUILD_DIR:-$root/build-sanitize}
export GACC_CMAKE_ARGS="-DGACC_SANITIZE=ON ${GACC_CMAKE_ARGS:-}"
exec "$root/scripts/test.sh"
