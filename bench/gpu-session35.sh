#!/usr/bin/env bash
# Session 35's change on the GPU (after scripts/device-bundle.sh; carry .device
# and .old, the tilec-check of the compiler before it, xz-packed):
#   bash bench/gpu-session35.sh tests OUTDIR   (about 5 minutes)
#   bash bench/gpu-session35.sh bench OUTDIR   (about 8 minutes)
#   bash bench/gpu-session35.sh all OUTDIR     (the essentials of both, under 10 minutes)
# The change: in a loop of two mmas whose second only feeds the next
# iteration (attention's O += P V), that mma stays in flight while the next
# S = Q K^T is issued, and both are waited for together
# (GeneralPipelineToNVVM.cpp, `carriedWait`). Tests: the attention and MLP
# GPU tests, compute-sanitizer on attention at D = 128 (the stage release
# moved) and session 34's racecheck. Bench: the old and the new compiler in
# the same rounds as cuDNN and FLASH_ATTENTION.
set -u
mode=${1:?usage: gpu-session35.sh tests|bench|all OUTDIR}
out=${2:?usage: gpu-session35.sh tests|bench|all OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
LIT_OPTS="--filter xyz_none" bash .device/gpu-tests.sh > /dev/null 2>&1
source bench/device-env.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader
a=examples/attention.tile
if [ "$mode" = all ]; then
  # In order of need: a call may be cut short by the device time left.
  chk() { # chk D CAUSAL
    step 40 "check-d$1-c$2" build/bin/tilec-check $a --kernel attention -D D=$1 -D CAUSAL=$2 \
      --shape 3x700x2100x$1 --shape 2x2100x700x$1 --shape 2x128x128x$1
  }
  xz -dc .old/tilec-check.xz > build/bin/tilec-check-old && chmod +x build/bin/tilec-check-old
  old="--old build/bin/tilec-check-old"
  chk 128 0
  if [ "${QUICK:-0}" = 1 ]; then
    step 60 att-d128 python3 bench/bench_attention.py $old --shape 4x16x4096x128 --rounds 2
    step 50 att-d128-causal python3 bench/bench_attention.py $old --shape 4x16x4096x128 --causal --rounds 2
    step 50 san-d128-racecheck compute-sanitizer --tool racecheck build/bin/tilec-check $a \
      --kernel attention -D D=128 --shape 2x300x333x128
    chk 128 1
    exit 0
  fi
  step 70 att-d128 python3 bench/bench_attention.py $old --shape 4x16x4096x128 --rounds 3
  step 60 san-d128-racecheck compute-sanitizer --tool racecheck build/bin/tilec-check $a \
    --kernel attention -D D=128 --shape 2x300x333x128
  chk 128 1
  step 60 att-d128-causal python3 bench/bench_attention.py $old --shape 4x16x4096x128 --causal --rounds 2
  # exp2 with .ftz at D = 128 without the mask (slower in session 29, with
  # the wait inside the turn): the new compiler with FTZ = 1 against FTZ = 0.
  step 60 att-d128-ftz python3 bench/bench_attention.py --old build/bin/tilec-check \
    --define FTZ=1 --old-define FTZ=0 --shape 4x16x4096x128 --rounds 2
  step 40 check-mlp build/bin/tilec-check examples/mlp.tile --kernel mlp --shape 200x128x192x128 \
    --shape 1000x100x700x300
  step 50 mlp python3 bench/bench_mlp.py --old build/bin/tilec-check-old --rounds 2
  step 45 san-norm-racecheck compute-sanitizer --tool racecheck build/bin/tilec-check \
    examples/norm_linear.tile --shape 200x300x130
  chk 64 0
  chk 64 1
  step 90 att-d128-16k python3 bench/bench_attention.py $old --shape 1x16x16384x128 --rounds 2
  step 90 pytest python3 -m pytest -q -x python/tests/test_gpu.py -k "attention"
  exit 0
fi
if [ "$mode" = bench ]; then
  xz -dc .old/tilec-check.xz > build/bin/tilec-check-old && chmod +x build/bin/tilec-check-old
  old="--old build/bin/tilec-check-old"
  step 110 att-d128 python3 bench/bench_attention.py $old --shape 4x16x4096x128 --rounds 3
  step 100 att-d128-causal python3 bench/bench_attention.py $old --shape 4x16x4096x128 --causal --rounds 3
  step 110 att-d128-16k python3 bench/bench_attention.py $old --shape 1x16x16384x128 --rounds 2
  step 100 att-d64 python3 bench/bench_attention.py $old --shape 4x16x4096x64 --rounds 3
  step 100 att-d64-causal python3 bench/bench_attention.py $old --shape 4x16x4096x64 --causal --rounds 3
  step 60 att-d64-1k python3 bench/bench_attention.py $old --shape 16x16x1024x64 --rounds 3
  step 60 mlp python3 bench/bench_mlp.py --old build/bin/tilec-check-old --rounds 3
  exit 0
fi
LIT_OPTS="--max-time 200 --filter e2e/(attention|mlp|norm_linear|quantized|chained)" step 210 lit bash .device/gpu-tests.sh
for tool in memcheck racecheck synccheck; do
  step 60 "san-d128-$tool" compute-sanitizer --tool $tool build/bin/tilec-check $a \
    --kernel attention -D D=128 --shape 2x300x333x128
done
step 60 san-d128-causal-racecheck compute-sanitizer --tool racecheck build/bin/tilec-check $a \
  --kernel attention -D D=128 -D CAUSAL=1 --shape 2x333x300x128
step 60 san-mlp-racecheck compute-sanitizer --tool racecheck build/bin/tilec-check \
  examples/mlp.tile --kernel mlp --shape 300x128x512x256
step 45 san-norm-racecheck compute-sanitizer --tool racecheck build/bin/tilec-check \
  examples/norm_linear.tile --shape 200x300x130
for d in 64 128; do
  for c in 0 1; do
    step 60 "check-d$d-c$c" build/bin/tilec-check $a --kernel attention -D D=$d -D CAUSAL=$c \
      --shape 3x700x2100x$d --shape 2x2100x700x$d
  done
done
step 150 pytest python3 -m pytest -q python/tests/test_gpu.py -k "attention or mlp or rmsnorm or w8a16 or tile_checks"
