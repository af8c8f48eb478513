#!/usr/bin/env bash
# Installs what is missing (Debian packages, with apt), configures and builds
# gacc into build/ (or $GACC_BUILD_DIR). Safe to run again: it installs
# nothing that is present and rebuilds only what changed. Other builds
# (scripts/sanitize.sh, scripts/fuzz.sh) add packages, CMake options and
# targets with GACC_EXTRA_PACKAGES, GACC_CMAKE_ARGS and GACC_BUILD_TARGETS.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GACC_BUILD_DIR:-$root/build}

packages=(${GACC_EXTRA_PACKAGES:-}
  cmake ninja-build g++ ccache python3 python3-numpy git
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools   # LLVM/MLIR 22, lit, FileCheck
  nlohmann-json3-dev libopenblas-dev                       # runtime: safetensors, BLAS
  libgtest-dev                                             # unit tests
  pybind11-dev python3-dev                                 # Python bindings
  libopenmpi-dev openmpi-bin                               # collectives across ranks
)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
fi

llvm=/usr/lib/llvm-22
cmake -G Ninja -S "$root" -B "$build" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DMLIR_DIR=$llvm/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=$llvm/bin/lit \
  -DPython3_EXECUTABLE=/usr/bin/python3 ${GACC_CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)" ${GACC_BUILD_TARGETS:+--target $GACC_BUILD_TARGETS}
