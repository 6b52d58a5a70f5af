#!/usr/bin/env bash
# What session 33 built and could not run on the GPU (its one device call
# ran a build whose standalone-mma wrap broke mlp_wide; no machine after),
# in one device call after scripts/device-bundle.sh (carry .device):
#   bash bench/gpu-session33.sh OUTDIR
# the chained products (examples/mlp.tile's mlp_wide, examples/lora.tile)
# and the single mma (python/tests/single_mma.tile): tilec-check cases
# (sm_90a, f16, sm_80), compute-sanitizer, the Python tests against torch,
# their speed next to torch eager, and where ptxas spills in mlp_wide
# (SASS: STL/LDL against each part's USETMAXREG).
set -u
out=${1:?usage: gpu-session33.sh OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
LIT_OPTS="--filter xyz_none" bash .device/gpu-tests.sh > /dev/null 2>&1
source bench/device-env.sh
LIT_OPTS="--max-time 150 --filter e2e/(mlp|lora)\.test" step 160 lit bash .device/gpu-tests.sh
w=examples/mlp.tile
for tool in memcheck racecheck synccheck; do
  step 45 "san-wide-$tool" compute-sanitizer --tool $tool build/bin/tilec-check $w \
    --kernel mlp_wide --shape 200x300x130x150
  step 45 "san-lora-$tool" compute-sanitizer --tool $tool build/bin/tilec-check \
    examples/lora.tile --shape 200x300x130x8
done
step 45 san-wide-sm80-racecheck compute-sanitizer --tool racecheck build/bin/tilec-check $w \
  --kernel mlp_wide --arch sm_80 --shape 200x300x130x150
step 45 san-lora-sm80-racecheck compute-sanitizer --tool racecheck build/bin/tilec-check \
  examples/lora.tile --arch sm_80 --shape 200x300x130x8
step 90 pytest python3 -m pytest -q python/tests/test_gpu.py -k "mlp or single or lora or chained"
for shape in 16384x1024x4096x128 16384x4096x1024x256; do
  step 60 "bench-wide-$shape" python3 bench/bench_mlp.py --kernel mlp_wide --shape $shape --rounds 3
done
step 40 bench-mlp python3 bench/bench_mlp.py --rounds 2
for shape in 8192x4096x4096x16 4096x4096x11008x64; do
  step 60 "bench-lora-$shape" python3 bench/bench_lora.py --shape $shape --rounds 3
done
build/bin/tilec $w --kernel mlp_wide -o "$out/wide.ptx"
ptxas -arch=sm_90a "$out/wide.ptx" -o "$out/wide.cubin"
cuobjdump -sass "$out/wide.cubin" | grep -n "STL\|LDL\|SETMAXREG\|EXIT" > "$out/wide.spills.txt" 2>&1
