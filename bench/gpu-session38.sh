#!/usr/bin/env bash
# What session 37 left for the GPU, in order of need, for one device call
# each (after scripts/device-bundle.sh; carry .device):
#   bash bench/gpu-session38.sh tests OUTDIR   (under 8 minutes)
#   bash bench/gpu-session38.sh h200 OUTDIR    (on an H200, under 10 minutes)
#   bash bench/gpu-session38.sh tree OUTDIR    (session 38's experiment on the
#     softmax's row reductions, TILEC_XTREE=1..4 (below) against 0 in the
#     same rounds; the toggle is on branch s38-tree-reduce only, also kept
#     as bench/experiments/s38-tree-reduce.patch (git apply it, build,
#     bundle; never land the environment variable itself))
# tests: the block-sparse kernels (block_sparse_attention is new) against
# torch on sm_90a and sm_80 and under racecheck; the e2e lit suite with
# time enough (sanitizer.test's norm_linear racecheck, failing until
# session 37's releases). h200: the attention sweep against cuDNN,
# FLASH_ATTENTION and Triton, and the matmul table against cuBLAS, burst
# and sustained.
source bench/session-start.sh "gpu-session38.sh tests|h200|tree OUTDIR" "$@"
if [ "$mode" = tree ]; then
  # Modes (branch s38-tree-reduce): 1 row max / min as a tree, 2 every
  # built-in row reduction as a tree, 3 as 1 plus the deferred row sums
  # (the lanes keep partial sums of l = l * alpha + sum(p, axis = 1); one
  # quad sum after the loop), 4 the deferred sums alone. First their
  # results (attention at ragged shapes, causal and not, persistent and
  # not), then their speed against mode 0 in the same rounds.
  for m in 0 1 2 3 4; do
    printf '#!/bin/sh\nTILEC_XTREE=%s exec %s/build/bin/tilec-check "$@"\n' $m "$PWD" > $out/tc$m
    chmod +x $out/tc$m
  done
  for m in 3 4; do
    for d in 64 128; do
      for c in 0 1; do
        $out/tc$m examples/attention.tile --kernel attention -D D=$d -D CAUSAL=$c --shape 6x333x517x$d --shape 4x1000x1000x$d 2>&1 | grep -E "PASS|FAIL" | sed "s/^/mode $m: /"
      done
    done
    $out/tc$m examples/attention.tile --kernel attention -D D=128 -D PERSISTENT=0 --shape 6x333x517x128 2>&1 | grep -E "PASS|FAIL" | sed "s/^/mode $m: /"
    $out/tc$m examples/matmul_softmax.tile --shape 300x200x130 2>&1 | grep -E "PASS|FAIL" | sed "s/^/mode $m: /"
  done
  for sh in "4x16x4096x128" "16x16x1024x128" "4x16x4096x128 --causal" "4x32x4096x64" "4x32x4096x64 --causal"; do
    for m in ${TREE_MODES:-1 3 4}; do
      case "$sh:$m" in *x64*:1|*x64*:4) continue;; esac
      step 60 tree$m-${sh// /} python3 bench/bench_attention.py --tilec-check $out/tc$m --old $out/tc0 \
        --rounds 2 --shape $sh
      cat $out/tree$m-${sh// /}.txt
    done
  done
  rm -f $out/tc0 $out/tc1 $out/tc2 $out/tc3 $out/tc4
fi
if [ "$mode" = tests ]; then
  step 100 bs-pytest python3 -m pytest -q -x python/tests/test_gpu.py -k "tile_checks and (block_sparse or sequences)"
  step 170 bs-racecheck compute-sanitizer --tool racecheck --error-exitcode 1 python3 -m pytest -q \
    python/tests/test_gpu.py -k "tile_checks and (block_sparse or sequences)"
  LIT_OPTS="--max-time 270 --filter e2e/" step 280 e2e bash .device/gpu-tests.sh
fi
if [ "$mode" = h200 ]; then
  step 330 attention-sweep python3 bench/bench_attention_sweep.py --seqs 1024,4096,16384 --rounds 2 \
    --csv $out/attention-sweep.csv
  shapes=8192x8192x8192,6144x6144x6144,4096x4096x4096,2048x2048x2048,3000x3000x3000,1000x3000x777,4096x4096x512,8192x8192x1024,16x8192x8192,64x8192x8192,128x16384x4096,4096x16384x1024
  (cd bench && step 250 matmul-table python3 bench_skinny.py --rounds 2 --sustain 5 --shapes $shapes --configs matmul:default)
fi
