#!/usr/bin/env bash
# Session 36's mmas in an 'if' (python/tests/block_sparse.tile) on the GPU,
# then session 34's checks that have not run, in one device call after
# scripts/device-bundle.sh (carry .device):
#   bash bench/gpu-session36.sh OUTDIR     (under 10 minutes)
# The kernels against torch on sm_90a and sm_80 (test_gpu.py's tile checks),
# their speed next to torch.mm and tilec's dense matmul at densities 1 to
# 0.1, compute-sanitizer racecheck through torch, then session 34's tests
# (norm_linear, quantized, the staged reads' racecheck).
set -u
out=${1:?usage: gpu-session36.sh OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
LIT_OPTS="--filter xyz_none" bash .device/gpu-tests.sh > /dev/null 2>&1
source bench/device-env.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader
step 150 bs-pytest python3 -m pytest -q -x python/tests/test_gpu.py -k "tile_checks and block_sparse"
step 120 bs-bench python3 bench/bench_block_sparse.py --rounds 2
step 200 bs-racecheck compute-sanitizer --tool racecheck --error-exitcode 1 python3 -m pytest -q \
  python/tests/test_gpu.py -k "tile_checks and block_sparse"
n=examples/norm_linear.tile
step 45 san-norm-racecheck compute-sanitizer --tool racecheck --error-exitcode 1 \
  build/bin/tilec-check $n --shape 200x300x130
step 45 san-w8-racecheck compute-sanitizer --tool racecheck --error-exitcode 1 \
  build/bin/tilec-check examples/quantized.tile --shape 200x300x130
step 150 pytest34 python3 -m pytest -q python/tests/test_gpu.py -k "rmsnorm or w8a16 or tile_checks"
