#!/usr/bin/env bash
# What sessions 30 and 31 built without a GPU (docs/performance.md), to run
# in device calls of a later session (after scripts/device-bundle.sh; carry
# .device):  bash bench/gpu-session31.sh OUTDIR [30]
# Session 31's part: the GPU tests of computed mma operands, column
# slices, shared operands and the attention backward (lit and pytest),
# compute-sanitizer on them (small sizes, through python and tilec-check),
# and the backward's speed next to torch SDPA's (cuDNN, FLASH_ATTENTION). With a second argument 30 it runs session 30's script
# first (bench/gpu-session30.sh: about 8 minutes; together they may not
# fit one 10-minute call).
set -u
out=${1:?usage: gpu-session31.sh OUTDIR [30]}
mkdir -p "$out"
if [ "${2:-}" = 30 ]; then bash bench/gpu-session30.sh "$out/s30"; fi
# (gpu-tests.sh unpacks the binaries and libtilec into build/.)
LIT_OPTS="--filter (Target/computed-operands|Target/attention-backward|Target/column-slices|e2e/attention-backward)\.test" bash .device/gpu-tests.sh \
  > "$out/lit31.txt" 2>&1; tail -3 "$out/lit31.txt"
source bench/device-env.sh
python3 -m pytest -q python/tests/test_gpu.py -k "computed_operands or attention_backward or column_slices or shared_operands" \
  > "$out/pytest31.txt" 2>&1; tail -3 "$out/pytest31.txt"
small="import sys, torch; sys.path.insert(0, 'python/tests'); import common"
for tool in memcheck racecheck synccheck; do
  for arch in sm_90a sm_80; do
    compute-sanitizer --tool $tool python3 -c "$small; common.computed_operand_check(torch, arch='$arch', device='cuda')" \
      > "$out/san-computed-$arch-$tool.txt" 2>&1
    compute-sanitizer --tool $tool python3 -c "$small; common.column_slice_check(torch, arch='$arch', device='cuda'); common.shared_operand_check(torch, arch='$arch', device='cuda')" \
      > "$out/san-slices-$arch-$tool.txt" 2>&1
    compute-sanitizer --tool $tool build/bin/tilec-check examples/attention_backward.tile --arch $arch \
      -D CAUSAL=1 --shape 2x200x150x64 > "$out/san-bwd-$arch-$tool.txt" 2>&1
  done
  tail -qn1 "$out"/san-*-$tool.txt
done
cd bench
python3 bench_attention_backward.py --rounds 2 2>&1 | tee "$out/bwd.txt"
python3 bench_attention_backward.py --rounds 2 --causal 1 --shapes 4x16x4096x64,4x16x4096x128 2>&1 | tee "$out/bwd-causal.txt"
