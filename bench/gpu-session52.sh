#!/usr/bin/env bash
# What session 52 runs on the GPU (carry .device: the bundle bench/gpu-session51.sh's header
# describes, built again in session 52 from 28a0142). Every peer figure comes from the same
# process and rounds (bench/benchlib.py's interleaved).
#   bash bench/gpu-session52.sh exp OUTDIR  FP8 block scales read 1, 2 or 3 blocks of K ahead
#     (bench/fp8-block-prefetch.tile) against torch._scaled_mm at the two tuned shapes; Nsight
#     Compute's per-instruction stall samples of the tuned 8192^3 kernel (SASS, CSV); the sm_80
#     attention kernel at D = 64 with BN = 128 on 8 warps against the default tile
#   bash bench/gpu-session52.sh check|za|ATTN|MM|... OUTDIR  gpu-session51.sh's modes
source bench/session-start.sh "gpu-session52.sh exp|<gpu-session51.sh's modes> OUTDIR" "$@"
if [ "$mode" = exp ]; then
  t8=PERSISTENT=1+TURNS=0+GROUP=8     # the 8192^3 row: 128 x 128, 3 stages, pairs
  t4=PERSISTENT=1                     # the 4096^3 row: 128 x 128, 3 stages
  cfgs=default,128x128:3:2:$t8,matmul_fp8_block_d2@128x128:3:2:$t8,matmul_fp8_block_d3@128x128:3:2:$t8
  cfgs=$cfgs,128x128:3:1:$t4,matmul_fp8_block_d2@128x128:3:1:$t4,matmul_fp8_block_d3@128x128:3:1:$t4
  (cd bench && step 150 fp8 python3 bench_fp8.py --rounds 5 --modes block \
    --shapes 8192x8192x8192,4096x4096x4096 --configs $cfgs --source2 fp8-block-prefetch.tile)
  grep -E "TF/s|error|not" $out/fp8.txt | cut -c1-160
  d8="-D BM=128 -D PERSISTENT=1 -D TURNS=0 -D CLUSTER=2 -D STAGES=3 -D GROUP=8"
  for k in matmul_fp8_block:examples/matmul_fp8.tile matmul_fp8_block_d2:bench/fp8-block-prefetch.tile; do
    timeout 120 ncu --launch-skip 2 --launch-count 1 -k regex:${k%%:*}$ --section WarpStateStats \
      --section SourceCounters -f -o $out/ncu-${k%%:*} python3 bench/ncu_fp8_once.py \
      --source ${k#*:} --kernel ${k%%:*} $d8 > $out/ncu-${k%%:*}.log 2>&1
    echo "ncu ${k%%:*}: rc=$?"
    ncu -i $out/ncu-${k%%:*}.ncu-rep --page source --csv --print-source sass \
      > $out/ncu-${k%%:*}-sass.csv 2>&1
    ncu -i $out/ncu-${k%%:*}.ncu-rep --section WarpStateStats > $out/ncu-${k%%:*}-stalls.txt 2>&1
    grep -E "Warp Cycles Per Issued|Duration|stall" $out/ncu-${k%%:*}-stalls.txt | head -6
  done
  step 120 sm80 python3 bench/bench_attention.py --arch sm_80 --rounds 3 --shape 4x32x4096x64 \
    --define BN=128 --num-warps 8 --old build/bin/tilec-check --old-define BN=256
  grep -E "TF/s|tilec" $out/sm80.txt | tail -12
  exit 0
fi
exec bash bench/gpu-session51.sh "$mode" "$out"
