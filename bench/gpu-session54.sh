#!/usr/bin/env bash
# What session 54 runs on the GPU (carry .device from scripts/device-bundle.sh --slim). The
# light and wide modes need a bundle of a9fd97f with docs/perf-logs/s53-wide-block.patch
# applied (its knob TILEC_LIGHT_PRODUCER gives every two-consumer pipeline the producer's
# 72 / 216 register split; the knob did not land); fp8 and sustain take a bundle of main.
# Every peer figure comes from the same process and rounds (bench/benchlib.py's interleaved).
#   bash bench/gpu-session54.sh light OUTDIR  the 72 / 216 split against the compiler's
#     choice (104 / 200 for a busy producer) in the same rounds: attention (S 1024 and 4096,
#     D 64 and 128, causal and not) next to cuDNN, issue 15's twelve bf16 shapes next to
#     cuBLAS, FP8 per-tensor at 8192^3 and 4096^3 next to torch._scaled_mm
#   bash bench/gpu-session54.sh wide OUTDIR  (that bundle) the 128 x 256 FP8 block kernel in
#     two halves (docs/perf-logs/s53-matmul_fp8-wide.tile) over stages, pairs and persistence
#     at 8192^3 and 4096^3, next to the shipped kernel's default launch and torch._scaled_mm
#   bash bench/gpu-session54.sh fp8 OUTDIR  (a bundle of HEAD: matmul_fp8_block's BN = 256
#     landed) the FP8 e2e tests, then the block kernel's default launch (4096^3: BN = 256)
#     against the previous rows' parameters (BN = 128) and torch._scaled_mm, 5 rounds and 5 s
#     sustained, at 4096^3 and 8192^3; BN = 256 with the 8192^3 row's other parameters, with
#     turns, one program per tile with and without turns
#   bash bench/gpu-session54.sh sustain OUTDIR  attention at 4096 keys, D 64 and 128, causal and
#     not, burst and sustained (3 s), next to cuDNN, FLASH_ATTENTION and Triton (not run in
#     session 54: no device time was left)
source bench/session-start.sh "gpu-session54.sh light|wide|fp8|sustain OUTDIR" "$@"
if [ "$mode" = sustain ]; then
  step 280 attn python3 bench/bench_attention_sweep.py --seqs 4096 --dims 64,128 --causal 0,1 \
    --rounds 3 --sustain 3
  grep -E "TF/s" $out/attn.txt | cut -c1-150
  exit 0
fi
if [ "$mode" = fp8 ]; then
  LIT_OPTS="--max-time 300 --filter matmul-fp8" step 320 e2e bash .device/gpu-tests.sh
  grep -E "Passed|Failed|FAIL" $out/e2e.txt | head
  P=PERSISTENT=1+GROUP=8+TURNS=0
  for sh in 4096x4096x4096 8192x8192x8192; do
    (cd bench && step 250 block-${sh%%x*} python3 bench_fp8.py --rounds ${ROUNDS:-5} --sustain ${SUSTAIN:-5} --modes block \
      --shapes $sh --configs default,128x128:3:2:$P,128x128:4:2:$P+BN=256,128x128:3:2:$P+BN=256,128x128:4:2:PERSISTENT=1+GROUP=8+TURNS=1+BN=256,128x128:3:1:GROUP=8+TURNS=1+BN=256,128x128:3:1:GROUP=8+TURNS=0+BN=256)
    grep -E "SUMMARY|SUSTAINED|not" $out/block-${sh%%x*}.txt | cut -c1-170
  done
  # Where BN = 256's time goes (8192^3, one program per tile, 3 stages): stalls per SASS line.
  k=wide
  timeout 200 ncu --launch-skip 2 --launch-count 1 -k regex:matmul_fp8 --section WarpStateStats \
    --section SourceCounters --section ComputeWorkloadAnalysis -f -o $out/ncu-$k \
    python3 bench/ncu_fp8_once.py -D BM=128 -D BN=256 -D STAGES=3 > $out/ncu-$k.log 2>&1
  echo "ncu $k: rc=$?"
  ncu -i $out/ncu-$k.ncu-rep --page source --csv --print-source sass | gzip > $out/ncu-$k-sass.csv.gz
  ncu -i $out/ncu-$k.ncu-rep --section WarpStateStats --section SourceCounters \
    --section ComputeWorkloadAnalysis > $out/ncu-$k-stalls.txt 2>&1
  rm -f $out/ncu-$k.ncu-rep
  grep -E "Warp Cycles Per Issued|Duration|Pipe|Issue Slots|stall" $out/ncu-$k-stalls.txt | head -12
  exit 0
fi
if [ "$mode" = light ]; then
  step 400 attn python3 bench/bench_attention_sweep.py --seqs 1024,4096 --dims 64,128 \
    --causal 0,1 --rounds 3 --variant light:ENV_LIGHT_PRODUCER=1
  grep -iE "tilec|light|cudnn" $out/attn.txt | tail -40 | cut -c1-160
  (cd bench && step 400 bf16 python3 bench_skinny.py --rounds 2 --shapes $twelve \
    --configs matmul:default,matmul2:default --env2 LIGHT_PRODUCER=1)
  grep -E "SUMMARY|GEOMEAN|geomean|not" $out/bf16.txt | cut -c1-170
  for sh in 8192x8192x8192 4096x4096x4096; do
    (cd bench && step 150 tensor-${sh%%x*} python3 bench_fp8.py --rounds 3 --modes tensor \
      --shapes $sh --configs default,128x256:0:1:GROUP=8+ENV_LIGHT_PRODUCER=1)
    grep -E "SUMMARY|not" $out/tensor-${sh%%x*}.txt | cut -c1-170
  done
  exit 0
fi
if [ "$mode" = wide ]; then
  W=docs/perf-logs/s53-matmul_fp8-wide.tile
  P=PERSISTENT=1+GROUP=8+TURNS=0
  L=S2=1+ENV_LIGHT_PRODUCER=1
  for sh in 8192x8192x8192 4096x4096x4096; do
    (cd bench && step 250 wide-${sh%%x*} python3 bench_fp8.py --rounds 3 --modes block --shapes $sh \
      --source2 ../$W --configs default,128x128:3:1:$L,128x128:4:1:$L,128x128:3:2:$L,128x128:4:2:$L,128x128:3:1:GROUP=8+$L,128x128:4:2:$P+$L,128x128:4:1:$P+$L)
    grep -E "SUMMARY|not" $out/wide-${sh%%x*}.txt | cut -c1-170
  done
  exit 0
fi
echo "unknown mode $mode"; exit 2
