#!/usr/bin/env bash
# What session 58 runs on the GPU (carry .device and .runs/old/tilec-check.xz, main's
# compiler before the banded copy):
#   bash bench/gpu-session58.sh a80 OUTDIR  the banded sm_80 copy (branch s57-banded-copy):
#     session 57's a80 checks and tile sweep in one round without ncu, then FlashAttention-2
#     in the same process as tilec (bench_attention.py --arch sm_80): D = 192 new against
#     old (causal and not), D = 256 at the default tiles against BN = 32 and BM = 128 BN = 32
#   bash bench/gpu-session58.sh t80 OUTDIR  sm_80's new tiles above D = 128 (BM = 64, BN = 32):
#     checked (attention ragged and causal at D = 192 / 256, pytest's varlen test), timed
#     against the old default tiles and FlashAttention-2 in one process (D = 192 / 256, causal
#     and not), and D = 128's tiles swept by tilec-check
#   bash bench/gpu-session58.sh n80 OUTDIR  issue 14's sm_80 bar (D = 128, B4 H16 S4096 against
#     FlashAttention-2 in one process, three rounds; 8 warps beside) and Nsight Compute of
#     tilec's sm_80 kernel and FA2 at D = 128 and 192 (instructions, stalls, tensor pipe)
#   bash bench/gpu-session58.sh h200 OUTDIR  on an H200: issue 14's table (S 4096 and 1024, D 64
#     and 128, causal and not, two burst rounds and 5 s sustained, with cuDNN, FA2 and Triton),
#     then the sm_80 bar (D = 128 against FA2, three rounds); on another card: n80
#   bash bench/gpu-session58.sh b80 OUTDIR  sm_80's copies in narrow bands (D = 144, 160, 224 on
#     4 warps; the general per-chunk loop before): checks, pytest's varlen test, old (.runs/old,
#     carried) and new alternating, FA2 in the same process at D = 160, two other tiles there
#     (QUICK=1: without the causal case, one FA2 round, no tiles nor pytest); with branch
#     s58-split-stages (on s58-bands) also STAGES = 1 at 128 x 64 on 8 warps: checked at D = 192
#     and 256 and timed against the default tiles and FA2 in one process, and at D = 128
#     (FA2's tile) against the default ring
source bench/session-start.sh "gpu-session58.sh a80|t80|n80|h200|b80 OUTDIR" "$@"
A=examples/attention.tile
# check80 D [TAG DEFS...]: the sm_80 attention at head dim D (with -D DEFS) checked on ragged
# and causal shapes.
check80() {
  local d=$1 tag=${2:-} defs=() v; shift; shift || true
  for v in "$@"; do defs+=(-D "$v"); done
  step 60 check-$d$tag tilec-check $A --kernel attention --arch sm_80 -D D=$d "${defs[@]}" \
    --shape 2x300x257x$d --shape 1x512x512x$d --shape 2x200x333x$d
  step 60 check-$d$tag-causal tilec-check $A --kernel attention --arch sm_80 -D D=$d -D CAUSAL=1 \
    "${defs[@]}" --shape 2x300x300x$d --shape 1x200x333x$d --shape 1x333x200x$d
}
# tiles80 D FILE DEFS...: the sm_80 attention at head dim D timed by tilec-check (64 heads of
# 4096, causal and not) with each DEFS, into $out/FILE.
tiles80() {
  local d=$1 file=$2 c defs; shift 2
  for c in 0 1; do
    for defs in "$@"; do
      # shellcheck disable=SC2086
      timeout 60 tilec-check $A --kernel attention --arch sm_80 -D D=$d -D CAUSAL=$c $defs \
        --shape 64x4096x4096x$d --no-verify --bench 20 --bench-reps 5 2>&1 | grep -E "^BENCH tilec|rror" \
        | sed "s|^|D$d causal $c [$defs] |" >> $out/$file
    done
  done
  cut -c1-170 $out/$file
}
if [ "$mode" = b80 ]; then
  # The most telling steps first (a call cut short keeps them): STAGES = 1 (branch
  # s58-split-stages, on top of s58-bands), FA2's 128 x 64 on 8 warps at D = 192 and 256,
  # checked, then timed against the default tiles and FA2 in one process.
  check80 192 -s1 BM=128 BN=64 STAGES=1; check80 256 -s1 BM=128 BN=64 STAGES=1
  grep -hE "PASS|FAIL|rror" $out/check-*.txt | cut -c1-150
  for sh in 4x16x4096x192 4x8x4096x256; do
    step 120 s1-$sh python3 bench/bench_attention.py --arch sm_80 --rounds 2 --iters 20 --shape $sh \
      --define BM=128 --define BN=64 --define STAGES=1 --old "$(which tilec-check)" \
      --old-define BM=64 --old-define BN=32 --old-define STAGES=0
    grep -E "round" $out/s1-$sh.txt | cut -c1-200
  done
  # The bands (s58-bands; since session 59 only where the copies' positions are computed in
  # the loop, 4 warps: D = 144 bands of 2, 160 and 224 of 4) and STAGES = 1 at D = 128.
  # (check80 160 -b names the 64 x 32 tile, the default since session 58, explicitly.)
  check80 144; check80 160; check80 224; check80 128 -s1 STAGES=1; check80 160 -b BM=64 BN=32
  grep -hE "PASS|FAIL|rror" $out/check-{144,160,224,128}*.txt | cut -c1-150
  xz -dkc .runs/old/tilec-check.xz > /tmp/old-tilec-check && chmod +x /tmp/old-tilec-check
  # Old and new alternating (bench/ab.sh); D = 160 at the new default tile for both.
  cases=("160 0" "160 1" "144 0"); [ "${QUICK:-0}" = 1 ] && cases=("160 0" "144 0")
  for c in "${cases[@]}"; do
    set -- $c
    # shellcheck disable=SC2046
    timeout 120 bash bench/ab.sh /tmp/old-tilec-check "$(which tilec-check)" 2 20 $A --kernel attention \
      --arch sm_80 -D D=$1 -D CAUSAL=$2 -D BM=64 -D BN=32 \
      --shape 64x4096x4096x$1 --no-verify --bench-reps 5 2>&1 | grep -E "BENCH tilec|rror" \
      | sed "s|^|D$1 causal $2 |" >> $out/ab.txt
  done
  cut -c1-150 $out/ab.txt
  # STAGES = 1 at D = 128 (FA2's tile, the default): no spill in ptxas (250 registers; the
  # default ring 104 bytes), causal 168 bytes (236).
  for c in "" "--causal"; do
    step 120 s1-128$c python3 bench/bench_attention.py --arch sm_80 --rounds 2 --iters 20 \
      --shape 4x16x4096x128 $c --define STAGES=1 --old "$(which tilec-check)"
    grep -E "round" $out/s1-128$c.txt | cut -c1-200
  done
  step 120 fa2-160 python3 bench/bench_attention.py --arch sm_80 --rounds "$(( 2 - ${QUICK:-0} ))" \
    --iters 20 --shape 4x16x4096x160 --old /tmp/old-tilec-check --old-define BM=64 --old-define BN=32
  grep -E "round" $out/fa2-160.txt | cut -c1-200
  [ "${QUICK:-0}" = 1 ] && exit 0
  tiles80 160 t160.txt "-D BN=64" "-D BM=128 -D BN=64 -D STAGES=1"
  step 180 varlen python3 -m pytest -q -x python/tests/test_gpu.py -k varlen_attention
  exit 0
fi
if [ "$mode" = h200 ]; then
  if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    step 330 sweep python3 bench/bench_attention_sweep.py --seqs 4096,1024 --dims 64,128 \
      --causal 0,1 --rounds 2 --sustain 5 --csv $out/sweep.csv
    grep -E "TF/s|sustain" $out/sweep.txt
    step 120 bar python3 bench/bench_attention.py --arch sm_80 --rounds 3 --shape 4x16x4096x128
    grep -E "round" $out/bar.txt | cut -c1-200
    exit 0
  fi
  mode=n80
fi
if [ "$mode" = n80 ]; then
  step 200 bar python3 bench/bench_attention.py --arch sm_80 --rounds 3 --shape 4x16x4096x128 \
    --old $(which tilec-check) --num-warps 8
  grep -E "round" $out/bar.txt | cut -c1-200
  M=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__inst_executed.sum,gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,smsp__issue_active.avg.pct_of_peak_sustained_active
  # tilec-s1: FA2's own tile at D = 192 (128 x 64, 8 warps, STAGES = 1), 217-221 TF/s against
  # the default 64 x 32's 260-262 and FA2's 291-298 (session 60): the like-for-like profile.
  for c in 128:tilec 128:flash 192:tilec 192:tilec-s1 192:flash; do
    d=${c%%:*}; who=${c#*:}; k=regex:attention; be=cudnn; defs=()
    [ $who = flash ] && k=regex:flash && be=flash
    [ $who = tilec-s1 ] && defs=(--define BM=128 --define BN=64 --define STAGES=1)
    step 120 ncu-$d-$who ncu --launch-skip 2 --launch-count 1 -k $k --section WarpStateStats --metrics $M \
      python3 bench/ncu_attention_once.py --arch sm_80 --backend $be --shape 4x16x4096x$d "${defs[@]}"
    grep -E "bank_conflicts|inst_executed|gpu__time|hmma|warps_active|registers|occupancy_limit|issue_active|Stall|stall|Warp Cycles" \
      $out/ncu-$d-$who.txt | cut -c1-150 | head -24
  done
  exit 0
fi
if [ "$mode" = t80 ]; then
  check80 192; check80 256
  grep -hE "PASS|FAIL|rror" $out/check-*.txt | cut -c1-150
  for c in "" "--causal"; do
    step 150 fa2-192$c python3 bench/bench_attention.py --arch sm_80 --rounds 2 \
      --shape 4x16x4096x192 --old $(which tilec-check) --old-define BM=128 --old-define BN=64 $c
    grep -E "round" $out/fa2-192$c.txt | cut -c1-200
    step 150 fa2-256$c python3 bench/bench_attention.py --arch sm_80 --rounds 2 \
      --shape 4x8x4096x256 --old $(which tilec-check) --old-define BN=64 $c
    grep -E "round" $out/fa2-256$c.txt | cut -c1-200
  done
  tiles80 128 t128.txt "" "-D BM=64 -D BN=64" "-D BM=64 -D BN=32" "-D BM=128 -D BN=32" \
    "-D BM=128 -D BN=64 -D PERSISTENT=0"
  step 150 varlen python3 -m pytest -q -x python/tests/test_gpu.py -k varlen_attention
  exit 0
fi
if [ "$mode" = a80 ]; then
  ROUNDS=1 NCU=0 ABROUNDS=2 bash bench/gpu-session57.sh a80 $out > $out/a80-script.txt 2>&1
  grep -vE "^r1 " $out/a80-script.txt | cut -c1-170
  grep -E "^r1 " $out/a80-script.txt | sed -E 's/(BENCH[^ ]* ).*(ms=[^ ]*).*(tflops=[^ ]*|TF[^ ]*).*/\1\2 \3/' | cut -c1-170
  old=/tmp/old-tilec-check
  for c in "" "--causal"; do
    step 200 fa2-192$c python3 bench/bench_attention.py --arch sm_80 --rounds 3 \
      --shape 4x16x4096x192 --old $old $c
    grep -E "round|tilec|FLASH|flash|old" $out/fa2-192$c.txt | tail -8 | cut -c1-170
  done
  for v in "--old-define BN=32" "--old-define BM=128 --old-define BN=32"; do
    n=fa2-256$(echo $v | sed 's/--old-define /-/g; s/=//g; s/ //g')
    # shellcheck disable=SC2086
    step 200 $n python3 bench/bench_attention.py --arch sm_80 --rounds 3 \
      --shape 4x8x4096x256 --old $(which tilec-check) $v
    grep -E "round|tilec|FLASH|flash|old" $out/$n.txt | tail -8 | cut -c1-170
  done
  exit 0
fi
echo "unknown mode $mode"; exit 2
