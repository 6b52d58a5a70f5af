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
# The Python package installed beside libtilec.so finds it from the prefix.
pydir="$prefix/lib/python3/dist-packages"
(cd /tmp && unset TILEC_LIBRARY && PYTHONPATH="$pydir" /usr/bin/python3 -c "
import os, tilec
assert tilec._capi._library_path() == os.path.join('$prefix', 'lib', 'libtilec.so'), tilec._capi._library_path()
import numpy as np
x = np.zeros(8, np.float32)
tilec.compile('kernel k(x: tensor<f32, 1>) grid(1) { store(x, [0], load(x, [0], [8]) + 2.0); }').k(x)
assert (x == 2).all(), x
print('== python package from', os.path.dirname(tilec.__file__))")
echo "install test: ok"
