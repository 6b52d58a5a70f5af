#!/usr/bin/env bash
# What session 52 runs on the GPU (carry .device: the bundle bench/gpu-session51.sh's header
# describes, built again in session 52: the knob's compiler from a644799, which takes BN any
# multiple of 8 (test/e2e/matmul.test's new lines), and .device/za from 28a0142 with the
# patch). Every peer figure comes from the same process and rounds (bench/benchlib.py's
# interleaved).
#   bash bench/gpu-session52.sh exp OUTDIR  FP8 block scales' default launch against
#     torch._scaled_mm at the two tuned shapes over 5 rounds; Nsight Compute's per-instruction
#     stall samples of the tuned 8192^3 kernel (SASS, CSV); the sm_80
#     attention kernel at D = 64 with BN = 128 on 8 warps against the default tile, and at
#     D = 128 on 8 warps against its 4 (ptxas: 0 bytes spilled on 8 warps, 104 on 4)
#   bash bench/gpu-session52.sh one OUTDIR  what one call can hold: gpu-session51.sh's check
#     with the e2e suite cut to matmul, matmul-fp8 (this session's BN), sanitizer, norm_linear
#     and quantized (session 50's fix), then exp's sm_80 step at D = 64
#   bash bench/gpu-session52.sh check|za|ATTN|MM|... OUTDIR  gpu-session51.sh's modes
source bench/session-start.sh "gpu-session52.sh exp|one|<gpu-session51.sh's modes> OUTDIR" "$@"
# The sm_80 kernel at D = 64: BN = 128 on 8 warps against the default tile.
sm80_d64() {
  step 120 sm80 python3 bench/bench_attention.py --arch sm_80 --rounds 3 --shape 4x32x4096x64 \
    --define BN=128 --num-warps 8 --old build/bin/tilec-check --old-define BN=256
  grep -E "TF/s|tilec" $out/sm80.txt | tail -12
}
if [ "$mode" = exp ]; then
  # (Scales read two blocks ahead were timed in session 20: no faster; docs/perf-logs/
  # fp8-block-2026-12-03-s20-run5.txt, v3.)
  (cd bench && step 150 fp8 python3 bench_fp8.py --rounds 5 --modes block \
    --shapes 8192x8192x8192,4096x4096x4096 --configs default)
  grep -E "TF/s|error|not" $out/fp8.txt | cut -c1-160
  k=matmul_fp8_block
  timeout 150 ncu --launch-skip 2 --launch-count 1 -k regex:matmul_fp8 --section WarpStateStats \
    --section SourceCounters -f -o $out/ncu-$k python3 bench/ncu_fp8_once.py -D BM=128 \
    -D PERSISTENT=1 -D TURNS=0 -D CLUSTER=2 -D STAGES=3 -D GROUP=8 > $out/ncu-$k.log 2>&1
  echo "ncu $k: rc=$?"
  ncu -i $out/ncu-$k.ncu-rep --page source --csv --print-source sass > $out/ncu-$k-sass.csv 2>&1
  ncu -i $out/ncu-$k.ncu-rep --section WarpStateStats --section SourceCounters \
    > $out/ncu-$k-stalls.txt 2>&1
  grep -E "Warp Cycles Per Issued|Duration|stall" $out/ncu-$k-stalls.txt | head -6
  sm80_d64
  step 120 sm80d128 python3 bench/bench_attention.py --arch sm_80 --rounds 3 --shape 4x16x4096x128 \
    --num-warps 8 --old build/bin/tilec-check
  grep -E "TF/s|tilec" $out/sm80d128.txt | tail -12
  exit 0
fi
if [ "$mode" = one ]; then
  E2E_FILTER='e2e/(matmul|sanitizer|norm_linear|quantized)' E2E_TIME=150 \
    bash bench/gpu-session51.sh check "$out"
  sm80_d64
  exit 0
fi
exec bash bench/gpu-session51.sh "$mode" "$out"
