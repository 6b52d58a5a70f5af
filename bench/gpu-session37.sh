#!/usr/bin/env bash
# Session 37 on the GPU (after scripts/device-bundle.sh; carry .device):
#   bash bench/gpu-session37.sh race OUTDIR   (about 4 minutes)
#   bash bench/gpu-session37.sh verify OUTDIR (about 9 minutes; carry .old too:
#     .old/tilec-check.xz, the compiler before the change, for the A/B)
# race: compute-sanitizer racecheck on examples/norm_linear.tile and
# examples/quantized.tile with every hazard printed, on a shape whose rows
# are not 16-byte aligned (the producer copies by threads: st.shared) and on
# one that is (TMA), with the PTX kept and its SASS (ptxas + cuobjdump) so
# that the offsets racecheck names can be read; then the block-sparse
# kernels (block_sparse_persistent is new) against torch and under racecheck.
source bench/session-start.sh "gpu-session37.sh race|verify|exp|final|store OUTDIR" "$@"
if [ "$mode" = race ]; then
  rc="compute-sanitizer --tool racecheck --racecheck-report all --print-limit 12"
  for f in norm_linear:rmsnorm_linear_folded quantized:linear_w8a16; do
    file=examples/${f%%:*}.tile k=${f#*:}
    mkdir -p $out/ptx-$k
    build/bin/tilec-check $file --kernel $k --shape 200x300x130 --ptx-dir $out/ptx-$k > /dev/null 2>&1
    for p in $out/ptx-$k/*.ptx; do
      ptxas -arch=sm_90a "$p" -o "${p%.ptx}.cubin" && cuobjdump -sass "${p%.ptx}.cubin" > "${p%.ptx}.sass"
      rm -f "${p%.ptx}.cubin"
    done
    step 60 race-$k-unaligned $rc build/bin/tilec-check $file --kernel $k --shape 200x300x130
    step 60 race-$k-aligned $rc build/bin/tilec-check $file --kernel $k --shape 256x256x128
  done
  step 150 bs-pytest python3 -m pytest -q -x python/tests/test_gpu.py -k "tile_checks and block_sparse"
  step 200 bs-racecheck compute-sanitizer --tool racecheck --error-exitcode 1 python3 -m pytest -q \
    python/tests/test_gpu.py -k "tile_checks and block_sparse"
  cd $out && tar czf race.tgz ptx-* && rm -rf ptx-*
fi
# verify: the producer's arrivals (every producer thread on the full
# barrier, no named barrier): racecheck of the kernels that raced, the GPU
# tests, then old against new in the same rounds (matmul, attention).
if [ "$mode" = verify ]; then
  rc="compute-sanitizer --tool racecheck --print-limit 4"
  step 60 race-norm $rc build/bin/tilec-check examples/norm_linear.tile --shape 200x300x130 --shape 256x256x128
  step 60 race-w8 $rc build/bin/tilec-check examples/quantized.tile --shape 200x300x130 --shape 256x256x128
  step 60 race-matmul $rc build/bin/tilec-check examples/matmul.tile --kernel matmul --shape 200x300x130 --shape 256x256x136
  step 60 race-attn $rc build/bin/tilec-check examples/attention.tile --kernel attention -D D=128 --shape 2x300x333x128
  {
    cat $out/race-*.txt | grep -E "RACECHECK SUMMARY|hazard detected|Thread"
    LIT_OPTS="--max-time 200 --filter e2e/" timeout 230 bash .device/gpu-tests.sh 2>&1 | tail -n 30
  } > $out/tests.txt 2>&1
  echo "tests: $(grep -c 'RACECHECK SUMMARY: 0 hazards' $out/tests.txt) clean racechecks; $(tail -n 3 $out/tests.txt | tr '\n' ' ')"
  rm -f $out/race-*.txt
  step 150 pytest python3 -m pytest -q python/tests/test_gpu.py
  xz -dc .old/tilec-check.xz > build/bin/tilec-check-old && chmod +x build/bin/tilec-check-old
  m="examples/matmul.tile --no-verify --bench-reps 5"
  {
    for s in 8192x8192x8192 4096x4096x4096 4096x4096x512 3000x3000x3000; do
      bash bench/ab.sh build/bin/tilec-check-old build/bin/tilec-check 3 20 $m --kernel matmul -D O=bf16 --shape $s
    done
    bash bench/ab.sh build/bin/tilec-check-old build/bin/tilec-check 3 20 $m --kernel matmul_persistent -D O=bf16 --shape 8192x8192x1024
  } > $out/ab-matmul.txt 2>&1
  echo "ab-matmul: $(wc -l < $out/ab-matmul.txt) lines"
  step 100 ab-attn-d128 python3 bench/bench_attention.py --old build/bin/tilec-check-old --shape 4x16x4096x128 --rounds 3
  step 100 ab-attn-d128c python3 bench/bench_attention.py --old build/bin/tilec-check-old --shape 4x16x4096x128 --causal --rounds 3
fi
# exp: which accesses racecheck pairs in norm_linear after the producer's
# per-thread arrivals, and whether the consumers' per-thread releases
# (TILEC_EXP_ALLARRIVE=1, an experiment) remove them.
if [ "$mode" = exp ]; then
  rc="compute-sanitizer --tool racecheck --racecheck-report all --print-limit 6"
  f="examples/norm_linear.tile --kernel rmsnorm_linear_folded --shape 200x300x130"
  mkdir -p $out/ptx
  build/bin/tilec-check $f --ptx-dir $out/ptx > /dev/null 2>&1
  for p in $out/ptx/*.ptx; do ptxas -arch=sm_90a "$p" -o "${p%.ptx}.cubin" && cuobjdump -sass "${p%.ptx}.cubin" > "${p%.ptx}.sass"; rm -f "${p%.ptx}.cubin"; done
  step 60 exp-base $rc build/bin/tilec-check $f
  TILEC_EXP_ALLARRIVE=1 step 60 exp-all $rc build/bin/tilec-check $f
  TILEC_EXP_ALLARRIVE=1 step 60 exp-all-q compute-sanitizer --tool racecheck build/bin/tilec-check examples/quantized.tile --shape 200x300x130
  cd $out && tar czf ptx.tgz ptx && rm -rf ptx
fi
# final: the releases as landed (every producer thread where threads copy;
# every consumer thread where the threads read a stage): racecheck, the e2e
# tests of the kernels it touches, and old against new in 5 rounds.
if [ "$mode" = final ]; then
  rc="compute-sanitizer --tool racecheck --print-limit 4"
  {
    for a in "examples/norm_linear.tile --shape 200x300x130 --shape 256x256x128" \
             "examples/quantized.tile --shape 200x300x130" \
             "examples/matmul.tile --kernel matmul --shape 200x300x130"; do
      echo "== racecheck $a"; timeout 60 $rc build/bin/tilec-check $a 2>&1 | grep -E "PASS|FAIL|error|SUMMARY|access at"
    done
    LIT_OPTS="--max-time 170 --filter e2e/(norm_linear|quantized|sanitizer|matmul)\.test" timeout 190 bash .device/gpu-tests.sh 2>&1 | tail -n 12
  } > $out/final-tests.txt 2>&1
  grep -E "SUMMARY|Passed|Failed" $out/final-tests.txt
  xz -dc .old/tilec-check.xz > build/bin/tilec-check-old && chmod +x build/bin/tilec-check-old
  ab="bash bench/ab.sh build/bin/tilec-check-old build/bin/tilec-check"
  {
    $ab 5 20 examples/matmul.tile --no-verify --bench-reps 5 --kernel matmul_persistent -D O=bf16 --shape 8192x8192x1024
    $ab 5 20 examples/matmul.tile --no-verify --bench-reps 5 --kernel matmul -D O=bf16 --shape 4096x4096x512
    $ab 4 20 examples/norm_linear.tile --no-verify --bench-reps 5 --kernel rmsnorm_linear_folded --shape 4096x4096x4096
    $ab 4 20 examples/quantized.tile --no-verify --bench-reps 5 --shape 4096x4096x4096
  } > $out/final-ab.txt 2>&1
  echo "ab: $(grep -c BENCH $out/final-ab.txt) lines"
fi
# store: the TMA store's copy by threads once after the last box (ring
# epilogues), the CUDA-core consumers' per-thread releases: correctness on
# shapes whose output rows are not 16-byte aligned, racecheck of the f32
# path, old against new in 3 rounds (about 2 minutes).
if [ "$mode" = store ]; then
  m=examples/matmul.tile
  f32="-D T=f32 -D BM=128 -D BN=128 -D BK=32"
  {
    for o in "-D O=bf16" ""; do
      timeout 60 build/bin/tilec-check $m --kernel matmul $o --shape 200x300x130 --shape 333x777x100 --shape 1000x3000x777 --shape 1x17x9 2>&1 | grep -E "PASS|FAIL|rror"
    done
    timeout 60 build/bin/tilec-check $m --kernel matmul $f32 --shape 200x300x130 --shape 333x777x100 2>&1 | grep -E "PASS|FAIL|rror"
    timeout 60 compute-sanitizer --tool racecheck --print-limit 4 build/bin/tilec-check $m --kernel matmul $f32 --shape 200x300x130 2>&1 | grep -E "PASS|FAIL|rror|SUMMARY|access at"
  } > $out/store-tests.txt 2>&1
  grep -cE "PASS" $out/store-tests.txt; grep -E "FAIL|SUMMARY" $out/store-tests.txt
  xz -dc .old/tilec-check.xz > build/bin/tilec-check-old && chmod +x build/bin/tilec-check-old
  ab="bash bench/ab.sh build/bin/tilec-check-old build/bin/tilec-check"
  {
    $ab 3 20 $m --no-verify --bench-reps 5 --kernel matmul -D O=bf16 --shape 8192x8192x8192
    $ab 3 20 $m --no-verify --bench-reps 5 --kernel matmul -D O=bf16 --shape 4096x4096x4096
    $ab 3 20 $m --no-verify --bench-reps 5 --kernel matmul $f32 --shape 4096x4096x4096
  } > $out/store-ab.txt 2>&1
  echo "ab: $(grep -c BENCH $out/store-ab.txt) lines"
fi
