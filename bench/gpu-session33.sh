#!/usr/bin/env bash
# Session 33's GPU call, after scripts/device-bundle.sh (carry .device):
#   bash bench/gpu-session33.sh OUTDIR
# the chained product (examples/mlp.tile's mlp_wide) on the H200: its
# tilec-check cases (sm_90a, f16, sm_80), compute-sanitizer on it, the
# Python test against torch, and its speed next to torch eager; then what
# session 32 left (bench/gpu-session32.sh tests), if time is left.
set -u
out=${1:?usage: gpu-session33.sh OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
LIT_OPTS="--filter xyz_none" bash .device/gpu-tests.sh > /dev/null 2>&1
source bench/device-env.sh
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
step() { # step SECONDS NAME COMMAND...: runs COMMAND into OUTDIR/NAME.txt
  local t=$1 name=$2; shift 2
  timeout -k 5 "$t" "$@" > "$out/$name.txt" 2>&1
  echo "$name: rc=$? $(tail -n 1 "$out/$name.txt")"
}
w=examples/mlp.tile
step 60 wide-check build/bin/tilec-check $w --kernel mlp_wide --shape 200x300x130x150 \
  --shape 1000x1024x700x300 --shape 1x17x7x9
step 40 wide-check-f16 build/bin/tilec-check $w --kernel mlp_wide -D T=f16 --shape 333x4096x256x200
step 60 wide-check-sm80 build/bin/tilec-check $w --kernel mlp_wide --arch sm_80 \
  --shape 200x300x130x150 --shape 1000x1024x700x300
for tool in memcheck racecheck synccheck; do
  step 45 "san-wide-$tool" compute-sanitizer --tool $tool build/bin/tilec-check $w \
    --kernel mlp_wide --shape 200x300x130x150
done
step 45 san-wide-sm80-racecheck compute-sanitizer --tool racecheck build/bin/tilec-check $w \
  --kernel mlp_wide --arch sm_80 --shape 200x300x130x150
step 90 pytest python3 -m pytest -q python/tests/test_gpu.py -k "mlp or single"
for shape in 16384x1024x4096x128 16384x4096x1024x256; do
  for busy in 0 1; do # the producer's registers: 72 (0) or 104 (1)
    TILEC_BUSY=$busy step 60 "bench-wide-$shape-busy$busy" python3 bench/bench_mlp.py \
      --kernel mlp_wide --shape $shape --rounds 3
  done
done
# Where ptxas spills (SASS: STL/LDL against the USETMAXREG of each part).
for busy in 0 1; do
  TILEC_BUSY=$busy build/bin/tilec $w --kernel mlp_wide -o "$out/wide$busy.ptx"
  ptxas -arch=sm_90a "$out/wide$busy.ptx" -o "$out/wide$busy.cubin"
  cuobjdump -sass "$out/wide$busy.cubin" | grep -n "STL\|LDL\|SETMAXREG\|EXIT\|WARPGROUP" \
    > "$out/wide$busy.spills.txt" 2>&1
done
step 60 bench-mlp python3 bench/bench_mlp.py --rounds 3
