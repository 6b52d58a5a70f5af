#!/usr/bin/env bash
# What session 51 runs on the GPU (carry .device). The bundle it expects (session 51 built it;
# .device is not in git), under the 64 MiB a call carries:
#   1. the knob: in GeneralPipelineToNVVM.cpp, `deferred = onlyAccumulates(forOp) &&
#      (readsOnlyLoadedOperands(forOp) || getenv("TILEC_DEFER_COMPUTED"))`; ninja -C build;
#      scripts/device-bundle.sh --slim; revert the line;
#   2. git apply docs/perf-logs/s50-zero-address-copy.patch; ninja -C build; `strip -o` and
#      `xz -9` build/bin/tilec-check and build/lib/libtilec.so into .device/za/ (NAME.xz);
#      git apply -R the patch; ninja -C build;
#   3. rm .device/bin/tile-opt.xz (no e2e test runs it; without it the bundle fits).
# Every peer figure comes from the same process and rounds (bench/benchlib.py's interleaved).
#   bash bench/gpu-session51.sh check OUTDIR  session 50's fix (a loop whose wgmma operand is
#     computed in the loop waits for its group every iteration): memcheck over rmsnorm_linear
#     and linear_w8a16 at the shapes that failed, then the two kernels' speed with the fix
#     and without it (ENV_DEFER_COMPUTED: a knob of the bundled compiler,
#     not committed, that keeps the group in flight as before) against torch in the same
#     rounds, then the e2e suite (E2E_FILTER, E2E_TIME: lit's --filter and --max-time)
#   bash bench/gpu-session51.sh za OUTDIR  the e2e suite with docs/perf-logs/s50-zero-address-copy.patch
#     on top (.device/za: its tilec-check and libtilec.so; tests that run `tilec` or `tile-opt`
#     keep HEAD's), then its attention speed at D = 128 against cuDNN (the figures of session 50)
#   bash bench/gpu-session51.sh ATTN|MM|E2E|... OUTDIR  session 47's modes (gpu-session47.sh)
source bench/session-start.sh "gpu-session51.sh check|za|<gpu-session47.sh's modes> OUTDIR" "$@"
if [ "$mode" = check ]; then
  for f in norm_linear:rmsnorm_linear quantized:linear_w8a16; do
    timeout 90 compute-sanitizer --error-exitcode 1 --print-limit 5 --tool memcheck tilec-check \
      --kernel ${f#*:} --shape 256x128x192 --shape 200x300x130 --shape 256x128x130 \
      --shape 256x128x200 examples/${f%:*}.tile 2>&1 | grep -E "PASS|FAIL|ERROR|mismatch" | head -8
  done 2>&1 | tee $out/memcheck.txt
  export TILEC_CACHE=0
  (cd bench && step 70 norm python3 bench_norm_linear.py --rounds 3 \
    --shapes 8192x4096x6144 --variant old:ENV_DEFER_COMPUTED=1)
  grep -E "TF/s|SUMMARY" $out/norm.txt | cut -c1-200
  (cd bench && step 70 w8 python3 bench_w8a16.py --rounds 3 \
    --shapes 4096x4096x4096 --variant old:ENV_DEFER_COMPUTED=1)
  grep -E "TF/s|SUMMARY" $out/w8.txt | cut -c1-200
  LIT_OPTS="--max-time ${E2E_TIME:-230} --filter ${E2E_FILTER:-e2e/}" step 250 e2e \
    bash .device/gpu-tests.sh
  grep -E "Passed|Failed|FAIL" $out/e2e.txt | head
  exit 0
fi
if [ "$mode" = za ]; then
  # The patch's binaries in the bundle's places: gpu-tests.sh unpacks them into build/ (and
  # .device/env.sh libtilec.so into /tmp/tilec-llvm, where it is missing).
  cp .device/za/tilec-check.xz .device/bin/ && cp .device/za/libtilec.so.xz .device/lib/
  rm -f /tmp/tilec-llvm/libtilec.so
  LIT_OPTS="--max-time 230 --filter e2e/" step 250 e2e bash .device/gpu-tests.sh
  grep -E "Passed|Failed|FAIL" $out/e2e.txt | head
  step 200 attn python3 bench/bench_attention_sweep.py --seqs 4096,16384 --dims 128 --causal 0,1 \
    --rounds 3
  grep "TF/s" $out/attn.txt
  exit 0
fi
exec bash bench/gpu-session47.sh "$mode" "$out"
