#!/usr/bin/env bash
# What session 44's last GPU call runs (after `scripts/device-bundle.sh --slim`; carry .device):
#   bash bench/gpu-session44.sh check OUTDIR  the landed attention kernels (late_turn at D = 128
#     without the mask) against the CPU interpreter at 6x333x517xD, D = 64, 96, 128, causal and
#     not; then bench/bench_attention_data.py at B4 H16 S4096 D128, causal and not: tilec and
#     cuDNN on N(0, 1) inputs with scale 1/sqrt(D) and on tilec-check's (uniform in [-2, 2),
#     scale 1), interleaved in one process
source bench/session-start.sh "gpu-session44.sh check OUTDIR" "$@"
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
