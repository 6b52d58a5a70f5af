#!/usr/bin/env bash
# Builds and runs all tests: lit (frontend, dialect, passes, PTX + ptxas,
# GPU end-to-end where a GPU is present) and the GoogleTest unit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
scripts/setup.sh
[ "${TILEC_SANITIZE:-0}" = 1 ] && export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0}
[ -x /usr/local/cuda/bin/ptxas ] && export PATH=/usr/local/cuda/bin:$PATH
/usr/lib/llvm-22/bin/lit -sv ${LIT_OPTS:-} "$BUILD_DIR/test" "$BUILD_DIR/test/unit"
# The Python package (python/) on the CPU interpreter, with Debian's Python
# (the first python3 on PATH may be another interpreter without numpy).
if [ "${TILEC_SANITIZE:-0}" != 1 ]; then
  lib="$BUILD_DIR/lib/libtilec.so"
  case $lib in /*) ;; *) lib="$PWD/$lib" ;; esac
  TILEC_LIBRARY="$lib" /usr/bin/python3 -m pytest -q python/tests
fi
# A sanitized libtilec.so needs sanitized programs: the install test is for
# the normal build.
[ "${TILEC_SANITIZE:-0}" = 1 ] || scripts/test-install.sh
# The wheel (LLVM linked in statically), installed by pip and tested.
if [ "${TILEC_SANITIZE:-0}" != 1 ]; then
  scripts/build-wheel.sh
  scripts/test-wheel.sh
fi
