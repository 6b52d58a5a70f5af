#!/usr/bin/env bash
# Builds and runs all tests: lit (frontend, dialect, passes, PTX + ptxas,
# GPU end-to-end where a GPU is present) and the GoogleTest unit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
scripts/setup.sh
[ -x /usr/local/cuda/bin/ptxas ] && export PATH=/usr/local/cuda/bin:$PATH
/usr/lib/llvm-22/bin/lit -sv ${LIT_OPTS:-} "$BUILD_DIR/test" "$BUILD_DIR/test/unit"
scripts/test-install.sh
