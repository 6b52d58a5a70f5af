#!/usr/bin/env bash
# What session 50 runs on the GPU (after `scripts/device-bundle.sh --slim`; carry .device),
# with docs/perf-logs/s49-copy-by-threads-experiment.patch applied to the compiler bundled.
# Every peer figure comes from the same process and rounds (bench/benchlib.py's interleaved).
#   bash bench/gpu-session50.sh first OUTDIR  on an H200 issue 14's table with the committed
#     compiler's PTX (TILEC_OLDCOPY=1: gpu-session47.sh attn); on any other GPU copy
#   bash bench/gpu-session50.sh copy OUTDIR  rmsnorm_linear 200x300x130 under memcheck with
#     the zero-address copy (twice), the predicated one and the old one; then zero; then the
#     e2e tests that go through the producer's copy by threads with the zero-address copy
#   bash bench/gpu-session50.sh zero OUTDIR  attention at D = 128, 4096 and 16384 keys, causal
#     and not, 3 rounds: the experiment's copy (predicated loads), its TILEC_ZEROADDR spelling
#     (the address selected against a 16-byte zero buffer, plain loads) and the old copy
#   bash bench/gpu-session50.sh ATTN|MM|E2E|... OUTDIR  session 47's modes (gpu-session47.sh)
source bench/session-start.sh "gpu-session50.sh first|zero|<gpu-session47.sh's modes> OUTDIR" "$@"
zero() {
  step 200 zero python3 bench/bench_attention_sweep.py --seqs 4096,16384 --dims 128 \
    --causal 0,1 --rounds 3 --variant old:ENV_OLDCOPY=1+STAGES=0 \
    --variant za:ENV_ZEROADDR=1+STAGES=0
  grep "TF/s" $out/zero.txt
}
if [ "$mode" = first ]; then
  if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    TILEC_OLDCOPY=1 exec bash bench/gpu-session47.sh attn "$out"
  fi
  mode=copy
fi
if [ "$mode" = copy ]; then
  for e in TILEC_ZEROADDR=1 X=1 TILEC_ZEROADDR=1 TILEC_OLDCOPY=1; do
    echo "== $e"
    env $e compute-sanitizer --error-exitcode 1 --print-limit 5 --tool memcheck tilec-check \
      --kernel rmsnorm_linear --shape 200x300x130 --shape 256x128x130 examples/norm_linear.tile 2>&1 |
      grep -E "PASS|FAIL|ERROR|mismatch" | head -5
  done 2>&1 | tee $out/memcheck.txt
  zero
  TILEC_ZEROADDR=1 LIT_OPTS="--max-time 220 --filter e2e/(sanitizer|mlp|norm_linear|matmul|attention|quantized|lora)" \
    step 240 e2e bash .device/gpu-tests.sh
  grep -E "Passed|Failed|FAIL" $out/e2e.txt | head
  exit 0
fi
if [ "$mode" = zero ]; then
  zero
  exit 0
fi
exec bash bench/gpu-session47.sh "$mode" "$out"
