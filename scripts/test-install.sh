#!/usr/bin/env bash
# Installs the build into a prefix and builds examples/embed out of tree
# against it with find_package(tilec), then runs the three programs (they
# check their results on a GPU and skip the run without one).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
prefix=$(realpath -m "$BUILD_DIR/install-test/prefix")
rm -rf "$BUILD_DIR/install-test"
cmake --install "$BUILD_DIR" --prefix "$prefix" > /dev/null
cmake -G Ninja -S examples/embed -B "$BUILD_DIR/install-test/embed" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER=clang-22 \
  -DCMAKE_CXX_COMPILER=clang++-22 > /dev/null
ninja -C "$BUILD_DIR/install-test/embed" > /dev/null
export TILEC_CACHE_DIR=$(realpath -m "$BUILD_DIR/install-test/cache")
for p in embed_jit embed_c embed_aot; do
  echo "== $p (out-of-tree, find_package(tilec))"
  "$BUILD_DIR/install-test/embed/$p"
done
# The AOT program needs no LLVM: it must not link libLLVM or libtilec.
if ldd "$BUILD_DIR/install-test/embed/embed_aot" | grep -qE 'libLLVM|libtilec'; then
  echo "embed_aot links LLVM or libtilec" >&2
  exit 1
fi
echo "install test: ok"
