#!/usr/bin/env bash
# What session 48 runs on the GPU (after `scripts/device-bundle.sh --slim`; carry .device).
# Every peer figure comes from the same process and rounds (bench/benchlib.py's interleaved).
#   bash bench/gpu-session48.sh fp8blk OUTDIR  matmul_fp8_block with clusters of 2 (the B tile
#     multicast to both programs of a pair; persistent, 128-row tiles, 4 to 6 stages) against
#     the heuristic's tile, the shipped 4096^3 row and torch._scaled_mm's block scales
#   bash bench/gpu-session48.sh ATTN|MM|E2E|... OUTDIR  session 47's modes (gpu-session47.sh)
source bench/session-start.sh "gpu-session48.sh fp8blk|<gpu-session47.sh's modes> OUTDIR" "$@"
if [ "$mode" = fp8blk ]; then
  p=PERSISTENT=1
  (cd bench && step 240 fp8blk python3 bench_fp8.py --rounds 3 --modes block \
    --shapes 8192x8192x8192,4096x4096x4096 --configs \
default,192x128:0:1:GROUP=8,128x128:3:1:$p,128x128:4:1:$p+CLUSTER=2,128x128:6:1:$p+CLUSTER=2,128x128:4:1:$p+CLUSTER=2+GROUP=8,128x128:6:1:$p+CLUSTER=2+GROUP=8)
  grep -E "SUMMARY|not compiled|Error" $out/fp8blk.txt
else
  bash bench/gpu-session47.sh "$mode" "$out"
fi
