#!/usr/bin/env bash
# Builds the Python wheel: python/tilec with a libtilec.so that has LLVM and
# MLIR linked in statically (`ninja tilec-static`), so it installs with
# `pip install` on a machine with an NVIDIA driver and no LLVM. Output:
# $BUILD_DIR/wheel/dist/tilec-<version>-py3-none-linux_x86_64.whl
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
# (The target list is read whole: `ninja ... | grep -q` under pipefail
# fails when grep stops early and ninja gets SIGPIPE.)
targets=$(ninja -C "$BUILD_DIR" -t targets all)
if ! grep -q '^tilec-static:' <<<"$targets"; then
  echo "build-wheel: the build has no tilec-static target (cmake found no static LLVM," >&2
  echo "libz.a or libzstd.a: install zlib1g-dev and libzstd-dev, then re-run cmake)" >&2
  exit 1
fi
ninja -C "$BUILD_DIR" tilec-static > /dev/null
stage="$BUILD_DIR/wheel/stage"
rm -rf "$BUILD_DIR/wheel"
mkdir -p "$stage/tilec"
cp python/setup.py "$stage/"
cp python/tilec/*.py "$stage/tilec/"
strip -o "$stage/tilec/libtilec.so" "$BUILD_DIR/static/libtilec.so"
# The static library must not need LLVM's shared library (or anything but
# the C library) at run time.
if ldd "$stage/tilec/libtilec.so" | grep -vE 'linux-vdso|libc\.so|libm\.so|ld-linux' | grep -q .; then
  echo "build-wheel: libtilec.so needs more than libc:" >&2
  ldd "$stage/tilec/libtilec.so" >&2
  exit 1
fi
(cd "$stage" && /usr/bin/python3 -m pip wheel --no-deps --no-build-isolation \
   --no-index -q -w ../dist . > /dev/null)
ls "$BUILD_DIR"/wheel/dist/*.whl
