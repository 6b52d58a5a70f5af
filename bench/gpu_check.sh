#!/usr/bin/env bash
# GPU end-to-end checks of the examples (run on the GPU machine with the
# bundle's binaries on PATH): f32, f16 and bf16, 1-D sizes 1, 1000,
# 1_000_003 and 2^28, 2-D 1000x3000 (dense and with padded rows).
set -u
fail=0
for T in f32 f16 bf16; do
  tilec-check examples/vadd.tile examples/saxpy.tile examples/mathmix.tile -D T=$T \
    --size 1 --size 1000 --size 1000003 --size 268435456 || fail=1
  tilec-check examples/fused2d.tile -D T=$T --shape 1000x3000 --shape 1x1 --shape 17x129 || fail=1
  tilec-check examples/fused2d.tile -D T=$T --shape 1000x3000 --ld-pad 3 || fail=1
done
exit $fail
