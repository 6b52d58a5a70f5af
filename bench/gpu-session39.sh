#!/usr/bin/env bash
# What session 38 left for the GPU, one device call each (after
# scripts/device-bundle.sh; carry .device; remove .device/unit,
# .device/litpkg/lit/__pycache__ and .device/bin/tilec-bench.xz to stay
# under 64 MiB):
#   bash bench/gpu-session39.sh tests OUTDIR   (about 6 minutes)
#   bash bench/gpu-session38.sh tree OUTDIR    (built from branch s38-tree-reduce)
#   bash bench/gpu-session39.sh nothing OUTDIR [REGEX]  (carry .old too: .old/tilec-check.xz,
#     the compiler of 69e903b before the layout work, and .old/examples, its examples)
# tests: python/tests/sequences.tile (two_products_varying is new: loops one
# after the other in a persistent kernel whose lengths change with the tile,
# one run of no iterations; attention_probs_persistent: q loaded before two
# loops of a persistent kernel) against torch on sm_90a and sm_80, then
# under compute-sanitizer racecheck and synccheck; then test/e2e/mlp.test
# and sanitizer.test.
source bench/session-start.sh "gpu-session39.sh tests|nothing OUTDIR [REGEX]" "$@"
if [ "$mode" = nothing ]; then
  xz -dc .old/tilec-check.xz > build/bin/tilec-check-old && chmod +x build/bin/tilec-check-old
  bash bench/nothing-slower.sh build/bin/tilec-check-old .old/examples $out 2 "${3:-.}"
fi
if [ "$mode" = tests ]; then
  step 100 seq-pytest python3 -m pytest -q -x python/tests/test_gpu.py -k "tile_checks and sequences"
  step 150 seq-racecheck compute-sanitizer --tool racecheck --error-exitcode 1 python3 -m pytest -q \
    python/tests/test_gpu.py -k "tile_checks and sequences"
  step 150 seq-synccheck compute-sanitizer --tool synccheck --error-exitcode 1 python3 -m pytest -q \
    python/tests/test_gpu.py -k "tile_checks and sequences"
  LIT_OPTS="--max-time 150 --filter e2e/(mlp|sanitizer)" step 160 e2e bash .device/gpu-tests.sh
fi
