#!/usr/bin/env bash
# What session 41 runs on the GPU (after scripts/device-bundle.sh; carry
# .device and .old; remove .device/unit, .device/litpkg/lit/__pycache__ and
# .device/bin/tilec-bench.xz to stay under 64 MiB):
#   bash bench/gpu-session41.sh tests OUTDIR      python/tests/accumulator_argmax.tile
#     against torch (sm_90a, sm_80), the same under compute-sanitizer racecheck,
#     then the whole e2e lit suite
#   bash bench/gpu-session41.sh sustained OUTDIR  issue 14's attention shapes, burst
#     and 5 s sustained, against cuDNN, FLASH_ATTENTION and Triton
#   bash bench/gpu-session39.sh nothing OUTDIR    the "nothing slower" rerun
#   bash bench/gpu-session41.sh coords OUTDIR     after 57035a4 (slot coordinates): the
#     e2e suite, then attention against .old/tilec-check-prev.xz (1b62f81's
#     tilec-check) in the same rounds (sm_90a D128, D64, causal D128; sm_80 D128)
#   bash bench/gpu-session41.sh prev OUTDIR [REGEX]  bench/nothing-slower.sh against
#     1b62f81's tilec-check on the same examples
#   bash bench/gpu-session41.sh fix OUTDIR        the kernels whose PTX the per-block thread
#     coordinates (blocked tiles in loops) changed against 57035a4: the prefix sums and the
#     segmented sum against 1b62f81, and SGEMM (T = f32) at 2048^3 and 4096^3
#   bash bench/gpu-session41.sh mix OUTDIR        the slot coordinates for every encoding but
#     blocked tiles: fused2d and transpose (the two benchmarks whose PTX is neither 1b62f81's
#     nor 57035a4's) against 1b62f81
source bench/session-start.sh "gpu-session41.sh tests|sustained|coords|prev|fix|mix OUTDIR" "$@"
if [ "$mode" = coords ] || [ "$mode" = prev ] || [ "$mode" = fix ] || [ "$mode" = mix ]; then
  xz -dc .old/tilec-check-prev.xz > build/bin/tilec-check-prev && chmod +x build/bin/tilec-check-prev
fi
if [ "$mode" = coords ]; then
  LIT_OPTS="--max-time 240 --filter e2e/" step 260 e2e bash .device/gpu-tests.sh
  grep -E "^(FAIL|TIMEOUT):|Passed|Failed|Timed" $out/e2e.txt | head -20
  for sh in "4x16x4096x128" "4x32x4096x64" "4x16x4096x128 --causal" "4x16x4096x128 --arch sm_80"; do
    step 80 attn-${sh// /} python3 bench/bench_attention.py --old build/bin/tilec-check-prev --rounds 2 --shape $sh
    grep "^round" $out/attn-${sh// /}.txt | head -8
  done
fi
if [ "$mode" = prev ]; then
  bash bench/nothing-slower.sh build/bin/tilec-check-prev examples $out 2 "${3:-.}"
fi
if [ "$mode" = tests ]; then
  step 100 argmax-pytest python3 -m pytest -q -x python/tests/test_gpu.py -k "tile_checks and accumulator_argmax"
  step 150 argmax-racecheck compute-sanitizer --tool racecheck --error-exitcode 1 python3 -m pytest -q \
    python/tests/test_gpu.py -k "tile_checks and accumulator_argmax"
  LIT_OPTS="--max-time ${E2E_TIME:-280} --filter ${E2E_FILTER:-e2e/}" step 300 e2e bash .device/gpu-tests.sh
  grep -E "^(FAIL|PASS|UNSUPPORTED|TIMEOUT):|Passed|Failed|Unsupported|Timed" $out/e2e.txt | grep -v "^PASS" | head -40
fi
if [ "$mode" = sustained ]; then
  step 250 sweep-4096 python3 bench/bench_attention_sweep.py --seqs 4096 --rounds 2 --sustain 5 \
    --csv $out/attention-4096.csv
  step 120 sweep-1024 python3 bench/bench_attention_sweep.py --seqs 1024 --dims 64 --causal 0 --rounds 2 \
    --sustain 5 --csv $out/attention-1024.csv
  grep -h "D=" $out/sweep-4096.txt $out/sweep-1024.txt
fi
if [ "$mode" = fix ]; then
  LIT_OPTS="--max-time 100 --filter e2e/(matmul-f32|matmul-fp8|prefix_sum|segment_sum)" \
    step 110 e2e bash .device/gpu-tests.sh
  grep -E "^(FAIL|TIMEOUT):|Passed|Failed|Timed" $out/e2e.txt | head -20
  bash bench/nothing-slower.sh build/bin/tilec-check-prev examples $out 2 "^(prefix_sum|segment_sum)"
  for sh in 2048x2048x2048 4096x4096x4096; do
    step 100 sgemm-$sh bash bench/ab.sh build/bin/tilec-check-prev build/bin/tilec-check 3 20 \
      examples/matmul.tile --kernel matmul -D T=f32 -D BM=128 -D BN=128 -D BK=32 --shape $sh
    grep -E "BENCH" $out/sgemm-$sh.txt | head -12
  done
fi
if [ "$mode" = mix ]; then
  bash bench/nothing-slower.sh build/bin/tilec-check-prev examples $out 3 "^(fused2d|transpose)"
fi
