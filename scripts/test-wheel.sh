#!/usr/bin/env bash
# Installs the wheel (scripts/build-wheel.sh) with pip into a directory of
# its own and runs the Python tests against it: the package finds its own
# libtilec.so (no TILEC_LIBRARY, no build tree), and no libLLVM is loaded.
#   WHEEL=path/to.whl (default: the one in $BUILD_DIR/wheel/dist)
#   PYTHON (default: /usr/bin/python3)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
wheel=${WHEEL:-$(ls "$BUILD_DIR"/wheel/dist/tilec-*.whl | head -1)}
target=$(mktemp -d /tmp/tilec-wheel-XXXXXX)
trap 'rm -rf "$target"' EXIT
"$PYTHON" -m pip install -q --root-user-action=ignore --no-index --no-deps --target "$target" "$wheel"
unset TILEC_LIBRARY
export PYTHONPATH="$target" TILEC_TEST_INSTALLED=1
(cd /tmp && "$PYTHON" - <<'PY'
import os, tilec
where = os.path.dirname(tilec.__file__)
assert where.startswith(os.environ["PYTHONPATH"]), where
p = tilec.compile("kernel k(x: tensor<f32, 1>) grid(1) { store(x, [0], load(x, [0], [4]) + 1.0); }")
import numpy as np
x = np.zeros(4, np.float32); p.k(x); assert (x == 1).all(), x
maps = open("/proc/self/maps").read()
assert "libLLVM" not in maps, "libLLVM loaded"
print("wheel: tilec from", where, "runs without libLLVM")
PY
)
if "$PYTHON" -c "import pytest" 2>/dev/null; then
  "$PYTHON" -m pytest -q python/tests
else
  "$PYTHON" python/tests/test_gpu.py   # script mode (no pytest here)
fi
