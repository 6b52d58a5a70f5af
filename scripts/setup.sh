#!/usr/bin/env bash
# Installs what tilec needs on Debian 12 (if missing), configures and builds.
# Used by scripts/run-examples.sh, scripts/test.sh and .ci/run.
#   BUILD_DIR (default: build)   TILEC_SANITIZE=1 for ASan+UBSan
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}

packages=(cmake ninja-build ccache mold clang-22 llvm-22-dev llvm-22-tools
          libmlir-22-dev mlir-22-tools libzstd-dev zlib1g-dev libxml2-dev
          libedit-dev libffi-dev libcurl4-openssl-dev libgtest-dev python3
          python3-numpy python3-pytest python3-torch python3-pip python3-setuptools
          python3-wheel)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${missing[@]}"
fi

# ptxas (CUDA toolkit) is optional: PTX tests assemble with it when present.
[ -x /usr/local/cuda/bin/ptxas ] && export PATH=/usr/local/cuda/bin:$PATH

sanitize=OFF; [ "${TILEC_SANITIZE:-0}" = 1 ] && sanitize=ON
# LLVM's allocators poison memory with ASan annotations when instantiated in
# instrumented code, and the uninstrumented MLIR/LLVM libraries then write to
# it: a false use-after-poison. Only that check is turned off.
[ "$sanitize" = ON ] && export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DTILEC_ENABLE_SANITIZERS=$sanitize
fi
ninja -C "$BUILD_DIR"
