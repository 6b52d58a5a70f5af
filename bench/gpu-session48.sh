#!/usr/bin/env bash
# What session 48 runs on the GPU (after `scripts/device-bundle.sh --slim`; carry .device).
# Every peer figure comes from the same process and rounds (bench/benchlib.py's interleaved).
#   bash bench/gpu-session48.sh fp8blk OUTDIR  matmul_fp8_block with clusters of 2 (the B tile
#     multicast to both programs of a pair; persistent, 128-row tiles, 4 to 6 stages) against
#     the heuristic's tile, the shipped 4096^3 row and torch._scaled_mm's block scales, with and
#     without the consumers' turns at the tensor cores (TURNS = 0: @launch(turns = 0)), then
#     Nsight Compute (speed of light, memory, warp states) on a pair and on the row's kernel
#   bash bench/gpu-session48.sh fp8blk2 OUTDIR  every 128-row persistent point of
#     matmul_fp8_block (stages x cluster x turns x group) and the hand-pipelined kernel persistent
#   bash bench/gpu-session48.sh verify OUTDIR  new tuning rows (matmul, matmul_fp8_block) against
#     the ones they replace, then the GPU lit tests of matmul and FP8
#   bash bench/gpu-session48.sh sgemm OUTDIR  f32 on the CUDA cores: the shipped 128 x 128 x 32
#     tile (warp-specialized) against 192 x 128 x 16, 128 x 128 x 64 and 128 x 128 x 16
#     next to cuBLAS SGEMM
#   bash bench/gpu-session48.sh ATTN|MM|E2E|... OUTDIR  session 47's modes (gpu-session47.sh)
source bench/session-start.sh "gpu-session48.sh fp8blk|fp8blk2|verify|sgemm|<gpu-session47.sh's modes> OUTDIR" "$@"
if [ "$mode" = fp8blk ]; then
  p=PERSISTENT=1
  (cd bench && step 240 fp8blk python3 bench_fp8.py --rounds 3 --modes block \
    --shapes 8192x8192x8192,4096x4096x4096 --configs \
default,192x128:0:1:GROUP=8,128x128:3:1:$p,128x128:4:1:$p+CLUSTER=2,128x128:6:1:$p+CLUSTER=2,128x128:6:1:$p+CLUSTER=2+GROUP=8,128x128:3:1:$p+TURNS=0,128x128:6:1:$p+CLUSTER=2+TURNS=0)
  grep -E "SUMMARY|not compiled|Error" $out/fp8blk.txt
  # Nsight Compute on the pair (is the kernel held by L2's bandwidth, as 128 x 128 tiles of
  # f8 without multicast would be at 1000 TF/s?), then the shipped row's kernel beside it
  sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats"
  for d in "-D CLUSTER=2 -D STAGES=6" "-D STAGES=3"; do
    name=ncu-$(echo $d | tr -d ' =D-')
    step 100 $name ncu --launch-skip 2 --launch-count 1 -k regex:matmul_fp8 $sections \
      python3 bench/ncu_fp8_once.py --shape 8192x8192x8192 -D BM=128 -D PERSISTENT=1 $d
    grep -E "Duration|SM Frequency|Compute \(SM\) Th|Memory Th|L2 Cache Th|DRAM Th|L2 Hit|Stall|Warp Cycles Per Issued|Local" $out/$name.txt | head -40
  done
elif [ "$mode" = fp8blk2 ]; then
  # every 128-row persistent point: stages 3, 4, 6 x cluster 1, 2 x turns 0, 1 x group 0, 8,
  # and the hand-pipelined kernel persistent (CLUSTER field 9)
  cfgs=default
  for st in 3 4 6; do for c in 1 2; do for t in 0 1; do for g in 0 8; do
    cfgs=$cfgs,128x128:$st:1:PERSISTENT=1+CLUSTER=$c+TURNS=$t+GROUP=$g
  done; done; done; done
  cfgs=$cfgs,128x128:4:9:PERSISTENT=1+TURNS=0,128x128:4:9:PERSISTENT=1+CLUSTER=2+TURNS=0
  (cd bench && step 400 fp8blk2 python3 bench_fp8.py --rounds 3 --modes block \
    --shapes 8192x8192x8192,4096x4096x4096 --configs $cfgs)
  grep -E "SUMMARY|not compiled|Error" $out/fp8blk2.txt | cut -c1-170
elif [ "$mode" = verify ]; then
  # the new matmul rows (bench/matmul-s48.tile: the retune's rows, in commit cc2e0fc) against the shipped table,
  # and the FP8 block rows (the default launch) against the tiles they replace; then the GPU
  # tests of both files
  (cd bench && step 150 rows48 python3 bench_skinny.py --rounds 3 \
    --shapes 6144x6144x6144,8192x8192x1024,4096x16384x1024,8192x12288x4096,3000x3000x3000 \
    --configs matmul:default,matmul2:default --source2 $PWD/matmul-s48.tile)
  grep -E "TF/s$|SUMMARY" $out/rows48.txt | grep -v "^ *[0-9x]* cuBLAS" | cut -c1-200
  (cd bench && step 120 fp8rows python3 bench_fp8.py --rounds 3 --modes block \
    --shapes 8192x8192x8192,4096x4096x4096 \
    --configs default,192x128:0:1:GROUP=8,128x128:3:1:PERSISTENT=1+GROUP=8)
  grep -E "SUMMARY|Error" $out/fp8rows.txt | cut -c1-200
  LIT_OPTS="--max-time 150 --filter e2e/.*(matmul|fp8)" step 170 e2e-mm bash .device/gpu-tests.sh
  grep -E "Passed|Failed|FAIL|Unsupported" $out/e2e-mm.txt | head
elif [ "$mode" = sgemm ]; then
  step 150 sgemm python3 bench/bench_matmul.py --tilec-check $(which tilec-check) --iters 20 \
    --reps 5 --shapes 2048x2048x2048,4096x4096x4096 \
    --f32 matmul:128x128x32,matmul:192x128x16,matmul:128x128x64,matmul:128x128x16
  grep -iE "sgemm|f32|TF/s" $out/sgemm.txt | tail -14
else
  bash bench/gpu-session47.sh "$mode" "$out"
fi
