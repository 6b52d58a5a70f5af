#!/usr/bin/env bash
# What session 42 runs on the GPU (after scripts/device-bundle.sh; carry
# .device; remove .device/unit, .device/litpkg/lit/__pycache__ and
# .device/bin/tilec-bench.xz to stay under 64 MiB):
#   bash bench/gpu-session42.sh tf32 OUTDIR   matmul_tf32 (B K x N) over tile shapes against
#     cuBLAS's TF32 in the same rounds (2048^3, 4096^3, 8192^3), then Nsight Compute on
#     one launch of the 128 x 256 and 256 x 128 tiles and of cuBLAS's TF32 at 4096^3
#   bash bench/gpu-session42.sh tf32ab OUTDIR  the TF32 product's fragments in two batches per
#     stage against the previous compiler (.old/tilec-check-base.xz, 21a50d1) in the same
#     rounds, the TF32 e2e tests, the table against cuBLAS again, and Nsight Compute
#   bash bench/gpu-session42.sh group OUTDIR  matmul_tf32 in grouped order (GROUP = 8) and in the
#     launch order, this compiler against .old/tilec-check-base.xz in the same rounds, then the
#     kernel's own choice (@heuristic) against cuBLAS's TF32
#   bash bench/gpu-session42.sh final OUTDIR  the TF32 e2e tests with the @heuristic, other group
#     sizes at 8192^3 against the previous compiler, and the kernel's own choice against cuBLAS
#   bash bench/gpu-session42.sh check OUTDIR  the committed TF32 change: its e2e tests, compute-sanitizer
#     racecheck and memcheck on matmul_tf32, and the table against cuBLAS's TF32 (burst, 3 rounds)
#   bash bench/gpu-session42.sh release OUTDIR  every consumer thread releasing a TF32 stage:
#     racecheck where the producer copies b by threads, the TF32 e2e tests, and the previous
#     compiler (.old/tilec-check-base.xz) against this one at 2048^3 and 4096^3
#   bash bench/gpu-session42.sh tests OUTDIR  the whole e2e lit suite
source bench/session-start.sh "gpu-session42.sh tf32|tf32ab|group|final|check|release|tests OUTDIR" "$@"
if [ "$mode" = release ]; then
  for a in "" "-D BM=256 -D BN=64"; do
    compute-sanitizer --tool racecheck build/bin/tilec-check examples/matmul.tile --kernel matmul_tf32 $a \
      --shape 260x130x333 2>&1 | tail -2
  done
  LIT_OPTS="--max-time 150 --filter e2e/matmul-f32" step 160 e2e bash .device/gpu-tests.sh
  grep -E "^(FAIL|TIMEOUT):|Passed|Failed|Timed" $out/e2e.txt | head -20
  xz -dc .old/tilec-check-base.xz > build/bin/tilec-check-base && chmod +x build/bin/tilec-check-base
  for sh in 2048x2048x2048 4096x4096x4096; do
    timeout 60 bash bench/ab.sh build/bin/tilec-check-base build/bin/tilec-check 2 20 examples/matmul.tile \
      --kernel matmul_tf32 -D BM=256 -D BN=128 --shape $sh --no-verify | grep "BENCH tilec"
  done
fi
if [ "$mode" = check ]; then
  LIT_OPTS="--max-time 150 --filter e2e/matmul-f32" step 160 e2e bash .device/gpu-tests.sh
  grep -E "^(FAIL|TIMEOUT):|Passed|Failed|Timed" $out/e2e.txt | head -20
  for args in "--shape 300x200x1000" "-D BM=256 -D GROUP=8 --shape 1300x700x600" "-D BM=256 -D BN=64 --shape 260x130x999"; do
    for tool in racecheck memcheck; do
      step 150 san-$tool-${args// /} compute-sanitizer --tool $tool --error-exitcode 1 \
        build/bin/tilec-check examples/matmul.tile --kernel matmul_tf32 $args
    done
  done
  step 200 tf32-table python3 bench/bench_tf32.py --rounds 3 --layouts nn,nt \
    --shapes 2048x2048x2048,4096x4096x4096,8192x8192x8192 --configs default
  grep -E "SUMMARY" $out/tf32-table.txt | head -40
fi
if [ "$mode" = final ]; then
  xz -dc .old/tilec-check-base.xz > build/bin/tilec-check-base && chmod +x build/bin/tilec-check-base
  LIT_OPTS="--max-time 100 --filter e2e/matmul-f32" step 110 e2e bash .device/gpu-tests.sh
  grep -E "^(FAIL|TIMEOUT):|Passed|Failed|Timed" $out/e2e.txt | head -20
  for g in 4 16; do
    step 100 ab-g$g-8192 bash bench/ab.sh build/bin/tilec-check-base build/bin/tilec-check 3 10 \
      examples/matmul.tile --kernel matmul_tf32 -D BM=256 -D BN=128 -D GROUP=$g --shape 8192x8192x8192 --no-verify
    grep -E "BENCH tilec" $out/ab-g$g-8192.txt | head -12
  done
  step 100 ab-2048 bash bench/ab.sh build/bin/tilec-check-base build/bin/tilec-check 3 20 \
    examples/matmul.tile --kernel matmul_tf32 -D BM=256 -D BN=128 --shape 2048x2048x2048 --no-verify
  grep -E "BENCH tilec" $out/ab-2048.txt | head -12
  step 200 tf32-default python3 bench/bench_tf32.py --rounds 3 --layouts nn,nt \
    --shapes 2048x2048x2048,4096x4096x4096,8192x8192x8192 --configs default
  grep -E "SUMMARY" $out/tf32-default.txt | head -40
fi
if [ "$mode" = group ]; then
  xz -dc .old/tilec-check-base.xz > build/bin/tilec-check-base && chmod +x build/bin/tilec-check-base
  for sh in 8192x8192x8192 4096x4096x4096 6144x6144x6144; do
    for g in 8 0; do
      step 100 ab-g$g-$sh bash bench/ab.sh build/bin/tilec-check-base build/bin/tilec-check 3 10 \
        examples/matmul.tile --kernel matmul_tf32 -D BM=256 -D BN=128 -D GROUP=$g --shape $sh --no-verify
      grep -E "BENCH tilec" $out/ab-g$g-$sh.txt | head -12
    done
  done
  step 250 tf32-default python3 bench/bench_tf32.py --rounds 2 --layouts nn \
    --shapes 8192x8192x8192,6144x6144x6144,4096x4096x4096,2048x2048x2048,1024x1024x1024 --configs default,128x128
  grep -E "SUMMARY|TF/s" $out/tf32-default.txt | head -40
fi
if [ "$mode" = tf32ab ]; then
  xz -dc .old/tilec-check-base.xz > build/bin/tilec-check-base && chmod +x build/bin/tilec-check-base
  LIT_OPTS="--max-time 100 --filter e2e/matmul-f32" step 110 e2e bash .device/gpu-tests.sh
  grep -E "^(FAIL|TIMEOUT):|Passed|Failed|Timed" $out/e2e.txt | head -20
  for cfg in "256 128" "128 256"; do
    set -- $cfg
    for sh in 4096x4096x4096 8192x8192x8192; do
      step 100 ab-$1x$2-$sh bash bench/ab.sh build/bin/tilec-check-base build/bin/tilec-check 3 20 \
        examples/matmul.tile --kernel matmul_tf32 -D BM=$1 -D BN=$2 --shape $sh
      grep -E "BENCH" $out/ab-$1x$2-$sh.txt | head -12
    done
  done
  TF32_CONFIGS=256x128,128x256,128x128 NCU_CONFIGS=256x128 mode=tf32
  step 200 tf32-mid python3 bench/bench_tf32.py --rounds 2 --layouts nn \
    --shapes 1024x1024x1024,1000x3000x777,16x4096x4096,128x4096x4096 --configs 256x128,128x128,16x128
  grep -E "SUMMARY|TF/s" $out/tf32-mid.txt | head -40
fi
if [ "$mode" = tf32 ]; then
  step 200 tf32 python3 bench/bench_tf32.py --rounds 2 --layouts nn \
    --shapes 2048x2048x2048,4096x4096x4096,8192x8192x8192 --configs ${TF32_CONFIGS:-128x256,256x128,128x128,256x64}
  grep -E "SUMMARY|TF/s" $out/tf32.txt | head -40
  for cfg in ${NCU_CONFIGS:-128x256 256x128}; do
    step 120 ncu-tf32-$cfg ncu --kernel-name regex:'^(matmul|nvjet|sm90|cutlass|ampere)' --section SpeedOfLight \
      --section WarpStateStats --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis_Tables \
      python3 bench/probe_mm_once.py 4096x4096x4096 matmul_tf32:$cfg
    grep -E "^  [a-z_]|Duration|SM Frequency|Compute \(SM\) Th|Memory Th|Issue Slots Busy|Warp Cycles Per Issued|Stall|Executed Instructions  |Bank" \
      $out/ncu-tf32-$cfg.txt | head -60
  done
fi
if [ "$mode" = tests ]; then
  LIT_OPTS="--max-time ${E2E_TIME:-280} --filter ${E2E_FILTER:-e2e/}" step 300 e2e bash .device/gpu-tests.sh
  grep -E "^(FAIL|PASS|UNSUPPORTED|TIMEOUT):|Passed|Failed|Unsupported|Timed" $out/e2e.txt | grep -v "^PASS" | head -40
fi
