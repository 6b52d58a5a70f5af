#!/usr/bin/env bash
# What session 44's last GPU call runs (after `scripts/device-bundle.sh --slim`; carry .device):
#   bash bench/gpu-session44.sh check OUTDIR  the landed attention kernels (late_turn at D = 128
#     without the mask) against the CPU interpreter at 6x333x517xD, D = 64, 96, 128, causal and
#     not; then bench/bench_attention_data.py at B4 H16 S4096 D128, causal and not: tilec and
#     cuDNN on N(0, 1) inputs with scale 1/sqrt(D) and on tilec-check's (uniform in [-2, 2),
#     scale 1), interleaved in one process
#   bash bench/gpu-session44.sh mm OUTDIR  the twelve matmul shapes against cuBLAS
#     (bench_skinny.py, burst and 5 s sustained), then other tiles at 3000^3
source bench/session-start.sh "gpu-session44.sh check|mm OUTDIR" "$@"
if [ "$mode" = check ]; then
  for dc in "128 0" "128 1" "64 0" "64 1" "96 0"; do
    set -- $dc
    tilec-check examples/attention.tile --kernel attention -D D=$1 -D CAUSAL=$2 \
      --shape 6x333x517x$1 2>&1 | grep -E "PASS|FAIL|rror" | sed "s/^/D=$1 CAUSAL=$2: /"
  done
  step 100 data python3 bench/bench_attention_data.py --shape 4x16x4096x128 --rounds 3
  grep "TF/s" $out/data.txt
  step 100 datac python3 bench/bench_attention_data.py --shape 4x16x4096x128 --causal --rounds 3
  grep "TF/s" $out/datac.txt
fi
if [ "$mode" = mm ]; then
  (cd bench && step 170 mm python3 bench_skinny.py --rounds 2 --sustain 5 --shapes \
    8192x8192x8192,6144x6144x6144,4096x4096x4096,2048x2048x2048,3000x3000x3000,1000x3000x777,4096x4096x512,8192x8192x1024,16x8192x8192,64x8192x8192,128x16384x4096,4096x16384x1024 \
    --configs matmul:default)
  grep -E "TF/s|geo" $out/mm.txt
  (cd bench && step 45 mm3000 python3 bench_skinny.py --rounds 2 --shapes 3000x3000x3000 \
    --configs matmul:default,matmul:128x256:0:1,matmul:128x192:0:1,matmul:128x128:0:2,persistent:128x192,pingpong:128x128)
  grep -E "TF/s" $out/mm3000.txt
fi
