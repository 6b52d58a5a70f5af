#!/usr/bin/env bash
# What session 55 runs on the GPU (after `scripts/device-bundle.sh --slim`, with
# examples/attention.tile of 55fc806, whose kernels branch to their masks by hand, copied to
# .device/attention-handif.tile: `git show 55fc806:examples/attention.tile >
# .device/attention-handif.tile`; carry .device). Every peer figure comes from the same
# process and rounds (bench/benchlib.py's interleaved).
#   bash bench/gpu-session55.sh first OUTDIR  the GPU lit tests of attention (forward,
#     backward, varlen, decode, the sanitizer's: their masks now put under a branch by the
#     compiler) and FP8; then attention at 4096 keys, D 64 and 128, causal and not, with the
#     compiler's branch (examples/attention.tile) against the hand-written one (variant
#     handif: the 55fc806 source, same compiler) and cuDNN
#   bash bench/gpu-session55.sh turns OUTDIR  (a bundle with docs/perf-logs/s54-product-turns.patch
#     applied) FP8 block scales at 4096^3 and 8192^3 with each product a turn against no
#     turns; then sm_80 PTX at D = 128 with FTZ = 1 against the default (no flush)
#   bash bench/gpu-session55.sh sustain OUTDIR  attention at 1024 and 4096 keys, D 64 and
#     128, causal and not, 2 burst rounds and 3 s sustained, next to cuDNN, FLASH_ATTENTION
#     and Triton
#   bash bench/gpu-session55.sh ab OUTDIR  the branch condition in the hand-written form
#     (max + 1 <= min): attention at 4096 keys (D 64 causal and not, D 128 causal), the
#     compiler's branch against the hand-written one, each twice per round (order effects);
#     then FP8 block scales at 8192^3 with the new row (BN = 256, 4 stages) against the old
#   bash bench/gpu-session55.sh last OUTDIR  test/e2e/attention.test (with the obvious form,
#     Inputs/attention_obvious.tile), then attention at 4096 keys, D 64 and 128, causal and
#     not, one burst round and 3 s sustained, next to cuDNN, FLASH_ATTENTION and Triton
source bench/session-start.sh "gpu-session55.sh first|turns|sustain|ab|last OUTDIR" "$@"
if [ "$mode" = last ]; then
  LIT_OPTS="--max-time 140 --filter e2e/attention.test" step 150 e2e bash .device/gpu-tests.sh
  grep -E "Passed|Failed|FAIL|Timed" $out/e2e.txt | head
  step 200 attn python3 bench/bench_attention_sweep.py --seqs 4096 --dims 64,128 \
    --causal 0,1 --rounds 1 --sustain 3
  grep -E "TF/s|sustain" $out/attn.txt | cut -c1-150
  exit 0
fi
if [ "$mode" = ab ]; then
  H=SRC=.device/attention-handif.tile
  step 150 ab64 python3 bench/bench_attention_sweep.py --seqs 4096 --dims 64 --causal 0,1 \
    --rounds 3 --no-peers --variant handif:$H --variant new:SRC=examples/attention.tile --variant handif2:$H
  step 100 ab128 python3 bench/bench_attention_sweep.py --seqs 4096 --dims 128 --causal 1 \
    --rounds 3 --no-peers --variant handif:$H --variant new:SRC=examples/attention.tile --variant handif2:$H
  grep -hE "TF/s" $out/ab64.txt $out/ab128.txt | cut -c1-150
  (cd bench && step 120 row8192 python3 bench_fp8.py --rounds 3 --modes block \
    --shapes 8192x8192x8192 --configs default,128x128:3:2:PERSISTENT=1+GROUP=8+TURNS=0)
  grep -E "SUMMARY|not" $out/row8192.txt | cut -c1-170
  exit 0
fi
if [ "$mode" = first ]; then
  LIT_OPTS="--max-time 300 --filter attention|matmul-fp8|sanitizer" step 320 e2e bash .device/gpu-tests.sh
  grep -E "Passed|Failed|FAIL|Timed" $out/e2e.txt | head
  step 240 attn python3 bench/bench_attention_sweep.py --seqs 4096 --dims 64,128 \
    --causal 0,1 --rounds 2 --variant handif:SRC=.device/attention-handif.tile
  grep -iE "TF/s" $out/attn.txt | cut -c1-160
  exit 0
fi
if [ "$mode" = turns ]; then
  P=PERSISTENT=1+GROUP=8
  for sh in 4096x4096x4096 8192x8192x8192; do
    (cd bench && step 190 turns-${sh%%x*} python3 bench_fp8.py --rounds 3 --modes block \
      --shapes $sh --configs default,128x128:4:2:$P+TURNS=0+BN=256,128x128:4:2:$P+TURNS=1+BN=256,128x128:3:1:GROUP=8+TURNS=1+BN=256,128x128:3:1:GROUP=8+TURNS=0+BN=256)
    grep -E "SUMMARY|not" $out/turns-${sh%%x*}.txt | cut -c1-170
  done
  step 180 a80 python3 bench/bench_attention.py --arch sm_80 --rounds 3 --shape 4x16x4096x128 \
    --define FTZ=1 --old $(which tilec-check)
  grep -E "^round|HEURISTIC|tilec|FLASH" $out/a80.txt | tail -8
  exit 0
fi
if [ "$mode" = sustain ]; then
  step 560 attn python3 bench/bench_attention_sweep.py --seqs 1024,4096 --dims 64,128 \
    --causal 0,1 --rounds 2 --sustain 3
  grep -E "TF/s|sustain" $out/attn.txt | cut -c1-150
  exit 0
fi
echo "unknown mode $mode"; exit 2
