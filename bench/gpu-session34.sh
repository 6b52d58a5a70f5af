#!/usr/bin/env bash
# What session 34 built and could not run on the GPU (no machine lent), in
# one device call after scripts/device-bundle.sh (carry .device):
#   bash bench/gpu-session34.sh tests OUTDIR     (about 6 minutes)
#   bash bench/gpu-session34.sh bench OUTDIR     (about 6 minutes)
# staged tiles read by the threads (examples/norm_linear.tile,
# examples/quantized.tile's int8 weights, and the
# kernels whose loads for other work are now staged: python/tests/
# computed_operands.tile), stores and atomics in the mma loop
# (python/tests/loop_stores.tile), mma loops one after the other
# (python/tests/sequences.tile): tilec-check
# cases (sm_90a, f16, sm_80), compute-sanitizer, the Python tests against
# torch, and the speed of the fused norm and of the int8 layer next to
# torch eager, torch.compile and the cuBLAS GEMM alone.
set -u
mode=${1:?usage: gpu-session34.sh tests|bench OUTDIR}
out=${2:?usage: gpu-session34.sh tests|bench OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
LIT_OPTS="--filter xyz_none" bash .device/gpu-tests.sh > /dev/null 2>&1
source bench/device-env.sh
if [ "$mode" = bench ]; then
  step 200 bench-norm python3 bench/bench_norm_linear.py --rounds 3 --compile
  step 150 bench-w8 python3 bench/bench_w8a16.py --rounds 3
  step 100 bench-probs python3 bench/bench_attention_probs.py --rounds 3
  exit 0
fi
LIT_OPTS="--max-time 150 --filter e2e/(norm_linear|quantized)\.test" step 150 lit bash .device/gpu-tests.sh
n=examples/norm_linear.tile
for tool in memcheck racecheck synccheck; do
  step 45 "san-norm-$tool" compute-sanitizer --tool $tool build/bin/tilec-check $n \
    --shape 200x300x130
done
step 45 san-norm-sm80-racecheck compute-sanitizer --tool racecheck build/bin/tilec-check $n \
  --arch sm_80 --shape 200x300x130
for tool in memcheck racecheck; do
  step 45 "san-w8-$tool" compute-sanitizer --tool $tool build/bin/tilec-check \
    examples/quantized.tile --shape 200x300x130
done
step 120 pytest python3 -m pytest -q python/tests/test_gpu.py \
  -k "rmsnorm or w8a16 or tile_checks"
# The kernels the interpreter checks (python/tests/*.tile: sequences,
# loop_stores, computed_operands) under racecheck, through torch.
step 150 san-seq compute-sanitizer --tool racecheck python3 -m pytest -q python/tests/test_gpu.py \
  -k "tile_checks and (sequences or loop_stores or computed_operands)"
