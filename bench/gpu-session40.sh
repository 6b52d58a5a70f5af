#!/usr/bin/env bash
# What session 39 left for the GPU (after scripts/device-bundle.sh; carry
# .device and .old; remove .device/unit, .device/litpkg/lit/__pycache__ and
# .device/bin/tilec-bench.xz to stay under 64 MiB):
#   bash bench/gpu-session40.sh tests OUTDIR   python/tests/accumulator_argmax.tile against
#     torch, then the whole e2e lit suite (gate.test's register-local broadcast and
#     fold.test's shuffles for the first time on a GPU)
#   bash bench/gpu-session39.sh nothing OUTDIR [REGEX]   the "nothing slower" rerun
#   bash bench/gpu-session40.sh tree OUTDIR    the row-reduction experiment at the
#     other shapes: .old/tilec-check-tree.xz is tilec-check built with
#     bench/experiments/s38-tree-reduce.patch (TILEC_XTREE=0 is main's PTX)
#   bash bench/gpu-session40.sh both OUTDIR    tests (in 250 s), then tree with
#     TREE_MODES=1 (the row maximum as a tree: branch s40-tree-max's PTX)
#   bash bench/gpu-session40.sh short OUTDIR   as both, with fold/gate/irregular and two shapes
source bench/session-start.sh "gpu-session40.sh tests|tree|both|short OUTDIR" "$@"
if [ "$mode" = short ]; then
  mode=both
  export TREE_MODES=1 E2E_TIME=100 E2E_FILTER="e2e/(fold|gate|irregular)"
  export TREE_SHAPES="4x16x4096x128,4x32x4096x64"
elif [ "$mode" = both ]; then
  # The e2e tests this session's changes touch (the warp relayouts of fold
  # and gate, the embedding's row slice in irregular.test, the sanitizers),
  # then the tree at four shapes.
  export TREE_MODES=${TREE_MODES:-1} E2E_TIME=150 E2E_FILTER="e2e/(fold|gate|irregular|sanitizer)"
  export TREE_SHAPES="4x16x4096x128,4x16x4096x128 --causal,4x32x4096x64,16x16x1024x64"
fi
if [ "$mode" = tests ] || [ "$mode" = both ]; then
  step 120 argmax-pytest python3 -m pytest -q -x python/tests/test_gpu.py -k "tile_checks and accumulator_argmax"
  LIT_OPTS="--max-time ${E2E_TIME:-290} --filter ${E2E_FILTER:-e2e/}" step 300 e2e bash .device/gpu-tests.sh
  grep -E "^(FAIL|PASS|UNSUPPORTED|TIMEOUT):|Passed|Failed|Unsupported" $out/e2e.txt | grep -v "^PASS" | head -40
fi
if [ "$mode" = tree ] || [ "$mode" = both ]; then
  xz -dc .old/tilec-check-tree.xz > build/bin/tilec-check-tree && chmod +x build/bin/tilec-check-tree
  for m in 0 1 3 4; do
    printf '#!/bin/sh\nTILEC_XTREE=%s exec %s/build/bin/tilec-check-tree "$@"\n' $m "$PWD" > $out/tc$m
    chmod +x $out/tc$m
  done
  for m in ${TREE_MODES:-1 3}; do
    for d in 64 128; do
      for c in 0 1; do
        $out/tc$m examples/attention.tile --kernel attention -D D=$d -D CAUSAL=$c --shape 6x333x517x$d 2>&1 | grep -E "PASS|FAIL" | sed "s/^/mode $m: /"
      done
    done
  done
  echo "${TREE_SHAPES:-4x16x4096x128,16x16x1024x128,4x16x4096x128 --causal,4x32x4096x64,16x16x1024x64,4x32x4096x64 --causal}" |
    tr ',' '\n' | while read -r sh; do
    for m in ${TREE_MODES:-1 3}; do
      step 60 tree$m-${sh// /} python3 bench/bench_attention.py --tilec-check $out/tc$m --old $out/tc0 \
        --rounds 2 --shape $sh
      grep "^round" $out/tree$m-${sh// /}.txt | head -12
    done
  done
  rm -f $out/tc0 $out/tc1 $out/tc3 $out/tc4
fi
