#!/usr/bin/env bash
# What session 53 runs on the GPU (carry .device: HEAD's bundle from scripts/device-bundle.sh
# --slim, plus .device/za: docs/perf-logs/s50-zero-address-copy.patch applied to HEAD (8fb6fe7),
# its tilec-check and libtilec.so stripped and xz'd; tile-opt.xz left out to fit 64 MiB).
# Every peer figure comes from the same process and rounds (bench/benchlib.py's interleaved).
#   bash bench/gpu-session53.sh first OUTDIR  the e2e suite with the patch's compiler, then
#     attention at D = 128 (S4096, causal and not) compiled by the patch's compiler against
#     HEAD's in the same rounds (tilec-check A/B) next to cuDNN, then gpu-session52.sh's sm_80
#     step at D = 64 (BN = 128 on 8 warps against the default tile)
#   bash bench/gpu-session53.sh exp|one|check|za|ATTN|MM|... OUTDIR  gpu-session52.sh's modes
source bench/session-start.sh "gpu-session53.sh first|<gpu-session52.sh's modes> OUTDIR" "$@"
if [ "$mode" = first ]; then
  mkdir -p /tmp/head && cp build/bin/tilec-check /tmp/head/
  cp .device/za/tilec-check.xz .device/bin/ && cp .device/za/libtilec.so.xz .device/lib/
  rm -f /tmp/tilec-llvm/libtilec.so
  LIT_OPTS="--max-time 240 --filter e2e/" step 250 e2e bash .device/gpu-tests.sh
  grep -E "Passed|Failed|FAIL" $out/e2e.txt | head
  for c in "" --causal; do
    step 90 attn${c#--} python3 bench/bench_attention.py --rounds 3 --shape 4x16x4096x128 $c \
      --old /tmp/head/tilec-check
    grep -E "TF/s|tilec" $out/attn${c#--}.txt | tail -8
  done
  step 120 sm80 python3 bench/bench_attention.py --arch sm_80 --rounds 3 --shape 4x32x4096x64 \
    --define BN=128 --num-warps 8 --old build/bin/tilec-check --old-define BN=256
  grep -E "TF/s|tilec" $out/sm80.txt | tail -12
  exit 0
fi
exec bash bench/gpu-session52.sh "$mode" "$out"
