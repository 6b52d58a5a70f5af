#!/usr/bin/env bash
# What session 49 runs on the GPU (after `scripts/device-bundle.sh --slim`; carry .device).
# Every peer figure comes from the same process and rounds (bench/benchlib.py's interleaved).
#   bash bench/gpu-session49.sh first OUTDIR  on an H200 issue 14's table (gpu-session47.sh
#     attn); on any other GPU the GPU e2e lit suite and python/tests/test_gpu.py (e2e), which
#     session 48's changes (turns, bits, the f32 heuristic) have not run
#   bash bench/gpu-session49.sh regs OUTDIR  attention at D = 128 with the producer's copy by
#     threads as predicated loads along a pointer (the tilec under test) against the old form
#     (TILEC_OLDCOPY=1: PTX identical to the old compiler's) and with the consumer warpgroups
#     given more registers (TILEC_REGS_EXP=P gives the producer P and each consumer (504 - P)
#     / 2; the split is 72 / 216; TILEC_LAUNDER=5: the copy's strides and origins through an
#     opaque move), D = 64 at 4096 keys (WG = 3) against the old form; FP8 block scales with
#     the new copy and 216 registers for the consumers (TILEC_NOBUSY)
#   bash bench/gpu-session49.sh final OUTDIR  the memcheck failure of the experiment's copy by
#     threads (the knobs of docs/perf-logs/s49-copy-by-threads-experiment.patch: TILEC_OLDCOPY,
#     TILEC_ZEROADDR, TILEC_NOPLOAD, TILEC_PLOAD2); then the f32
#     matmul with nothing fixed
#     against cuBLAS SGEMM (bench_sgemm_default.py) and matmul_fp8_block at 4096^3 over five
#     rounds, both with TILEC_OLDCOPY=1 (the committed compiler's PTX)
#   bash bench/gpu-session49.sh ATTN|MM|E2E|... OUTDIR  session 47's modes (gpu-session47.sh)
source bench/session-start.sh "gpu-session49.sh first|<gpu-session47.sh's modes> OUTDIR" "$@"
if [ "$mode" = first ]; then
  if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    exec bash bench/gpu-session47.sh attn "$out"
  fi
  exec bash bench/gpu-session47.sh e2e "$out"
fi
if [ "$mode" = regs ]; then
  step 330 regs python3 bench/bench_attention_sweep.py --seqs 1024,4096,16384 --dims 128 \
    --causal 0,1 --rounds 2 --variant old:ENV_OLDCOPY=1+STAGES=0 \
    --variant r56:ENV_REGS_EXP=56+STAGES=0 --variant r40:ENV_REGS_EXP=40+ENV_LAUNDER=5+STAGES=0
  grep "TF/s" $out/regs.txt
  step 120 d64 python3 bench/bench_attention_sweep.py --seqs 4096 --dims 64 --causal 0,1 \
    --rounds 3 --variant old:ENV_OLDCOPY=1+STAGES=0
  grep "TF/s" $out/d64.txt
  # FP8 block scales: session 48's 8192^3 row (old copy / new / new with the producer's 72
  # registers and 216 for each consumer: TILEC_NOBUSY), the hand-pipelined kernel likewise
  r=128x128:3:2:PERSISTENT=1+GROUP=8+TURNS=0
  q=128x128:3:9:PERSISTENT=1+GROUP=8+CLUSTER=2+TURNS=0
  (cd bench && step 150 fp8 python3 bench_fp8.py --rounds 3 --modes block \
    --shapes 8192x8192x8192,4096x4096x4096 --configs \
$r+ENV_OLDCOPY=1,$r,$r+ENV_NOBUSY=1,$q+ENV_OLDCOPY=1,$q+ENV_NOBUSY=1)
  grep -E "SUMMARY|not compiled|Error" $out/fp8.txt
  exit 0
fi
if [ "$mode" = final ]; then
  for e in X=1 TILEC_ZEROADDR=1 TILEC_PLOAD2=1 TILEC_NOPLOAD=1 TILEC_OLDCOPY=1 X=1 TILEC_ZEROADDR=1; do
    echo "== $e"
    env $e compute-sanitizer --error-exitcode 1 --print-limit 5 --tool memcheck tilec-check \
      --kernel rmsnorm_linear --shape 200x300x130 --shape 256x128x130 examples/norm_linear.tile 2>&1 |
      grep -E "PASS|FAIL|ERROR|mismatch" | head -5
  done 2>&1 | tee $out/memcheck.txt
  export TILEC_OLDCOPY=1
  step 90 sgemm python3 bench/bench_sgemm_default.py --rounds 5
  grep -E "SUMMARY|TF/s" $out/sgemm.txt
  (cd bench && step 120 fp8b python3 bench_fp8.py --rounds 5 --modes block \
    --shapes 4096x4096x4096 --configs default,128x128:4:1:PERSISTENT=1+TURNS=0)
  grep -E "SUMMARY" $out/fp8b.txt
  exit 0
fi
exec bash bench/gpu-session47.sh "$mode" "$out"
