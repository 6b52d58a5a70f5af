#!/usr/bin/env bash
# What session 57 runs on the GPU (after `scripts/device-bundle.sh --slim`). For first
# and ab: the bundle of main with docs/perf-logs/s57-idle-warpgroups.patch applied; carry
# .device and (ab only, with .device/bin/tile-opt.xz and tilec.xz removed: 64 MiB) .runs,
# where .runs/old/ holds main's tilec-check and libtilec.so (xz), the compiler without it.
# For a80: the bundle of branch s57-banded-copy; carry .device and .runs/old/tilec-check.xz
# (main's tilec-check, the general copy loop at D = 192).
#   bash bench/gpu-session57.sh first OUTDIR  on an H200: issue 14's table (S 4096 and
#     1024, D 64 / 128, causal and not, burst and 5 s sustained, cuDNN, FA2, Triton) and
#     decode. On any card: the idle warpgroups' checks: test/e2e/matmul.test,
#     test_gpu.py's grouped_mm and matmul tests, compute-sanitizer racecheck / synccheck on
#     matmul with BM = 192 at 200 rows (two idle warpgroups) and on the grouped_mm test
#   bash bench/gpu-session57.sh ab OUTDIR  the idle warpgroups timed: grouped_mm at 64 and
#     128 groups with the new compiler and the old one in alternate processes (new old old
#     new), each against torch._grouped_mm in its own rounds, with the persistent grouped
#     kernel of docs/perf-logs/s56-grouped-persistent.patch as a variant; then
#     bench/nothing-slower.sh over the bf16 matmul cases (old and new tilec-check alternating)
#   bash bench/gpu-session57.sh a80 OUTDIR  sm_80 attention at D = 192 / 256 (0.67x / 0.79x
#     FlashAttention-2 in call 3): tiles by tilec-check --bench, two rounds, D = 128 beside;
#     Nsight Compute of D = 192 and 128 and of FA2 at D = 192 (ROUNDS=1 NCU=0: one round, no ncu
#     nor the tiles' checks); first D = 192 checked and timed against main's compiler (.runs/old)
source bench/session-start.sh "gpu-session57.sh first|ab|a80 OUTDIR" "$@"
old=$PWD/.runs/old
if [ "$mode" = ab ]; then
  mkdir -p $old/lib
  [ -e $old/tilec-check ] || xz -dkc $old/tilec-check.xz > $old/tilec-check
  [ -e $old/lib/libtilec.so ] || xz -dkc $old/libtilec.so.xz > $old/lib/libtilec.so
  chmod +x $old/tilec-check
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
if [ "$mode" = first ]; then
  if echo "$gpu" | grep -q H200; then
    step 300 sweep python3 bench/bench_attention_sweep.py --seqs 4096,1024 --dims 64,128 \
      --causal 0,1 --rounds 2 --sustain 5 --csv $out/sweep.csv
    grep -E "TF/s|sustain" $out/sweep.txt
    step 60 decode python3 bench/bench_decode.py
    tail -8 $out/decode.txt
  fi
  LIT_OPTS="--max-time 200 --filter e2e/matmul.test" step 210 e2e bash .device/gpu-tests.sh
  grep -E "Passed|Failed|FAIL|Timed" $out/e2e.txt | head
  step 150 py python3 -m pytest -q python/tests/test_gpu.py -k "grouped_mm or matmul"
  grep -E "passed|failed|rror" $out/py.txt | tail -3
  for tool in racecheck synccheck memcheck; do
    step 60 san-mm-$tool compute-sanitizer --tool $tool tilec-check examples/matmul.tile \
      --kernel matmul -D BM=192 -D BN=128 -D O=bf16 --shape 200x256x128 --shape 300x520x200
    grep -E "PASS|FAIL|ERROR SUMMARY|rror" $out/san-mm-$tool.txt | head -4
  done
  step 200 san-grouped compute-sanitizer --tool racecheck python3 -m pytest -q -x \
    python/tests/test_gpu.py -k grouped_mm
  grep -E "passed|failed|ERROR SUMMARY|Race|rror" $out/san-grouped.txt | head -5
  exit 0
fi
if [ "$mode" = ab ]; then
  mkdir -p .runs && cp examples/matmul.tile .runs/grouped_pers.tile
  patch -s .runs/grouped_pers.tile docs/perf-logs/s56-grouped-persistent.patch || exit 1
  P=../.runs/grouped_pers.tile:grouped_mm_persistent
  for g in 64 128; do
    for tag in new old old new; do
      lib=$PWD/build/lib/libtilec.so; [ $tag = old ] && lib=$old/lib/libtilec.so
      (cd bench && TILEC_LIBRARY=$lib step 120 g$g-$tag python3 bench_grouped.py --rounds 2 \
        --groups $g --variant pers=$P)
      grep -E "round|wrong" $out/g$g-$tag.txt | sed "s/^/$tag /" | cut -c1-220
    done
  done
  step 300 ns bash bench/nothing-slower.sh $old/tilec-check examples $out 2 '^matmul.tile matmul(_grouped)? '
  tail -12 $out/ns.txt
  exit 0
fi
if [ "$mode" = a80 ]; then
  A=examples/attention.tile
  cases=("192:" "192:-D BN=32" "192:-D BM=64" "192:-D BM=64 -D BN=32" "192:-D BN=48" "192:-D PERSISTENT=1"
         "256:" "256:-D BN=32" "256:-D BM=128 -D BN=32" "128:")
  # The banded copy (D = 192's 24 chunks a row on 256 threads) against main's general copy
  # loop (.runs/old/tilec-check.xz, carried), alternating old new / new old; checked first.
  step 60 a80-check tilec-check $A --kernel attention --arch sm_80 -D D=192 --shape 2x300x257x192 \
    --shape 1x512x512x192 --shape 2x200x333x192
  step 60 a80-check-causal tilec-check $A --kernel attention --arch sm_80 -D D=192 -D CAUSAL=1 \
    --shape 2x300x300x192 --shape 1x200x333x192
  grep -hE "PASS|FAIL|rror" $out/a80-check*.txt | cut -c1-150
  step 120 a80-varlen python3 -m pytest -q -x python/tests/test_gpu.py -k varlen_attention
  if [ -e .runs/old/tilec-check.xz ]; then
    xz -dkc .runs/old/tilec-check.xz > /tmp/old-tilec-check && chmod +x /tmp/old-tilec-check
    for r in $(seq ${ABROUNDS:-2}); do
      order="old new"; [ $r = 2 ] && order="new old"
      for tag in $order; do
        bin=tilec-check; [ $tag = old ] && bin=/tmp/old-tilec-check
        for c in 0 1; do
          timeout 60 $bin $A --kernel attention --arch sm_80 -D D=192 -D CAUSAL=$c --shape 64x4096x4096x192 \
            --no-verify --bench 20 --bench-reps 5 2>&1 | grep -E "^BENCH|rror" | sed "s|^|$tag r$r D192 causal $c |" >> $out/a80-ab.txt
        done
      done
    done
    cut -c1-160 $out/a80-ab.txt
  fi
  for r in $(seq ${ROUNDS:-2}); do
    for c in "${cases[@]}"; do
      d=${c%%:*}; defs=${c#*:}; bh=64; [ $d = 256 ] && bh=32
      # shellcheck disable=SC2086
      timeout 60 tilec-check $A --kernel attention --arch sm_80 -D D=$d $defs --shape ${bh}x4096x4096x$d \
        --no-verify --bench 20 --bench-reps 5 2>&1 | grep -E "^BENCH|rror" | sed "s|^|r$r D$d [$defs] |" >> $out/a80.txt
    done
  done
  cut -c1-160 $out/a80.txt
  [ "${NCU:-1}" = 0 ] && exit 0
  for c in "${cases[@]}"; do
    d=${c%%:*}; defs=${c#*:}
    # shellcheck disable=SC2086
    timeout 60 tilec-check $A --kernel attention --arch sm_80 -D D=$d $defs --shape 2x300x257x$d \
      --shape 1x200x333x$d 2>&1 | grep -E "PASS|FAIL|rror" | sed "s|^|D$d [$defs] |" >> $out/a80-verify.txt
  done
  grep -c PASS $out/a80-verify.txt; grep -vE "PASS" $out/a80-verify.txt | head -5
  M=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed.sum,gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
  for c in "192:tilec" "128:tilec" "192:flash"; do
    d=${c%%:*}; who=${c#*:}; k=regex:attention; be=cudnn
    [ $who = flash ] && k=regex:flash && be=flash
    step 120 ncu-$d-$who ncu --launch-skip 2 --launch-count 1 -k $k --section WarpStateStats --metrics $M \
      python3 bench/ncu_attention_once.py --arch sm_80 --backend $be --shape 4x16x4096x$d
    grep -E "bank_conflicts|wavefronts|inst_executed|gpu__time|hmma|warps_active|registers|Stall|stall|Warp Cycles" $out/ncu-$d-$who.txt | cut -c1-150 | head -30
  done
  exit 0
fi
echo "unknown mode $mode"; exit 2
