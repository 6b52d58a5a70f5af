#!/usr/bin/env bash
# What session 46 runs on the device machine (after `scripts/device-bundle.sh --slim`; carry
# .device). Every peer figure comes from the same process and rounds.
#   bash bench/gpu-session46.sh probe OUTDIR    Nsight Compute on the sm_80 attention kernel
#     (D = 128, the PTX JIT-compiled on this GPU) against torch's FLASH_ATTENTION
#     (FlashAttention-2), and on matmul_fp8_block against torch._scaled_mm's block-scaled
#     kernel at 8192^3; the SASS of the sm_80 attention kernel
#   bash bench/gpu-session46.sh remeasure OUTDIR  issue 15's other bars on this compiler
#     (last measured in sessions 28-29 and 42): FP8 per-tensor and block scales, grouped
#     GEMM at 64 and 128 groups, SGEMM, TF32; issue 14's decode
#   bash bench/gpu-session46.sh ab80 OUTDIR  the sm_80 cp.async copies by constant steps:
#     the e2e suite, then the sm_80 attention kernel (D = 128 and 64, causal) with this
#     compiler against the previous one (.device/old/tilec-check.xz, copied there by hand
#     after the bundle) beside FlashAttention-2 and cuDNN, and sm_80 matmul old against new
#   bash bench/gpu-session46.sh next OUTDIR  for the session after 46: the sm_80 attention
#     (D = 64 and 128) with tilec-check --heuristic against FlashAttention-2 (the D = 64 tile
#     after the heuristic change, through Python too), then the e2e suite; issue 14's table is
#     `bash bench/gpu-session45.sh attn OUTDIR` (a call of its own)
source bench/session-start.sh "gpu-session46.sh probe|remeasure|ab80|next OUTDIR" "$@"
sections="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy
  --section MemoryWorkloadAnalysis_Tables --section InstructionStats --section SchedulerStats
  --section ComputeWorkloadAnalysis"
keep="^  [a-z_]|Duration|SM Frequency|Compute \(SM\) Th|Memory Th|L2 Cache Th|DRAM Th|L1/TEX Hit|L2 Hit|Grid Size|Block Size|Registers Per|Shared Memory Config|Dynamic Shared|Waves Per SM|Achieved Occ|Theoretical Occ|Stall|Warp Cycles Per Issued|Issued Warp|No Eligible|Active Warps Per|Eligible Warps|Bank Conflicts|Executed Ipc|Issue Slots|Pipe|Local"
if [ "$mode" = probe ]; then
  step 120 ncu-a80 ncu --launch-skip 2 --launch-count 1 -k regex:attention $sections \
    python3 bench/ncu_attention_once.py --arch sm_80 --backend flash
  step 120 ncu-fa2 ncu --launch-skip 2 --launch-count 1 -k regex:flash_fwd $sections \
    python3 bench/ncu_attention_once.py --arch sm_80 --backend flash
  grep -E "$keep" $out/ncu-a80.txt | head -70
  grep -E "$keep" $out/ncu-fa2.txt | head -70
  tilec examples/attention.tile --kernel attention --arch sm_80 -D D=128 --emit=ptx -o $out/a80.ptx
  ptxas -arch=sm_90 -v $out/a80.ptx -o $out/a80.cubin 2>&1 | tail -2
  cuobjdump -sass $out/a80.cubin > $out/sass-a80.txt && xz $out/sass-a80.txt
  rm -f $out/a80.cubin
  tilec examples/matmul_fp8.tile --kernel matmul_fp8_block --emit=cubin -o $out/f8.cubin
  cuobjdump -sass $out/f8.cubin > $out/sass-f8.txt && xz $out/sass-f8.txt
  rm -f $out/f8.cubin
  step 120 ncu-fp8 ncu --launch-skip 2 --launch-count 1 -k regex:matmul_fp8 $sections \
    python3 bench/ncu_fp8_once.py
  step 120 ncu-fp8t ncu --launch-skip 2 --launch-count 1 -k regex:'cutlass|nvjet|sm90|gemm' $sections \
    python3 bench/ncu_fp8_once.py
  grep -E "$keep" $out/ncu-fp8.txt | head -70
  grep -E "$keep" $out/ncu-fp8t.txt | head -70
fi
if [ "$mode" = remeasure ]; then
  (cd bench && step 150 fp8 python3 bench_fp8.py --rounds 2 --modes tensor \
    --shapes 8192x8192x8192,4096x4096x4096)
  (cd bench && step 150 fp8b python3 bench_fp8.py --rounds 2 --modes block \
    --shapes 8192x8192x8192,4096x4096x4096 --configs 192x128,192x128:0:1:GROUP=8,128x128:0:9)
  grep "SUMMARY" $out/fp8.txt $out/fp8b.txt
  for g in 64 128; do
    (cd bench && step 120 grouped$g python3 bench_grouped.py --rounds 2 --groups $g)
    tail -4 $out/grouped$g.txt
  done
  step 120 sgemm python3 bench/bench_matmul.py --tilec-check $(which tilec-check) --iters 20 \
    --reps 5 --shapes 2048x2048x2048,4096x4096x4096 --f32 matmul:128x128x32
  grep -iE "sgemm|f32|TF/s" $out/sgemm.txt | tail -8
  step 150 tf32 python3 bench/bench_tf32.py --rounds 2 --layouts nn \
    --shapes 2048x2048x2048,4096x4096x4096,8192x8192x8192 --configs default
  grep "SUMMARY\|x$" $out/tf32.txt | tail -8
  step 60 decode python3 bench/bench_decode.py
  tail -8 $out/decode.txt
fi
if [ "$mode" = ab80 ]; then
  old=/tmp/old-tilec-check
  xz -dc .device/old/tilec-check.xz > $old && chmod +x $old
  for sh in "4x16x4096x128" "4x32x4096x64" "4x16x4096x128 --causal"; do
    name=a80-$(echo $sh | tr -d ' -')
    step 200 $name python3 bench/bench_attention.py --arch sm_80 --rounds 3 --shape $sh --old $old
    grep -E "^round|TF/s" $out/$name.txt | tail -8
  done
  for shape in 4096x4096x4096 2048x2048x2048; do
    bash bench/ab.sh $old tilec-check 4 20 examples/matmul.tile --kernel matmul --arch sm_80 \
      --shape $shape --no-verify > $out/mm80-$shape.txt 2>&1
    cat $out/mm80-$shape.txt
  done
  # matmul_fp8_block in grouped order and persistent (nvjet's block-scaled kernel is
  # persistent, 128 x 128, two consumer warpgroups; ncu in the probe)
  (cd bench && step 200 fp8p python3 bench_fp8.py --rounds 2 --modes block \
    --shapes 8192x8192x8192,4096x4096x4096 --configs \
    192x128:0:1:GROUP=8,192x128:0:1:PERSISTENT=1,192x128:0:1:GROUP=8+PERSISTENT=1,128x128:0:1:GROUP=8+PERSISTENT=1)
  grep "SUMMARY" $out/fp8p.txt
  LIT_OPTS="--max-time 230 --filter e2e/" step 250 e2e bash .device/gpu-tests.sh
  grep -E "Passed|Failed|FAIL" $out/e2e.txt | head
fi
if [ "$mode" = next ]; then
  for sh in "4x32x4096x64" "4x16x4096x128"; do
    name=a80-$(echo $sh | tr -d ' -')
    step 200 $name python3 bench/bench_attention.py --arch sm_80 --rounds 3 --shape $sh
    grep -E "^round" $out/$name.txt | tail -3
  done
  # sm_80 at D = 64 (0.92x FlashAttention-2 in session 46): BN = 128 against the default 256
  step 200 a80d64bn128 python3 bench/bench_attention.py --arch sm_80 --rounds 3 \
    --shape 4x32x4096x64 --define BN=128
  grep -E "^round" $out/a80d64bn128.txt | tail -3
  LIT_OPTS="--max-time 230 --filter e2e/" step 250 e2e bash .device/gpu-tests.sh
  grep -E "Passed|Failed|FAIL" $out/e2e.txt | head
fi
