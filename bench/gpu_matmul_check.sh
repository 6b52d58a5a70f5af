#!/usr/bin/env bash
# GPU end-to-end checks of the matmul example against the host reference
# (run on the GPU machine with the bundle's binaries on PATH): bf16 and f16,
# edge shapes, 1-row / 1-column problems, column-major operands (the
# non-TMA copy path), and the fused epilogue. Each run has a time limit so
# that a pipeline deadlock shows up as a failure.
set -u
fail=0
run() { timeout 120 tilec-check examples/matmul.tile "$@" || { echo "FAILED: $*"; fail=1; }; }
run --shape 128x128x128 --shape 1000x3000x777 --shape 256x384x512
run -D T=f16 --shape 1000x3000x777 --shape 128x128x128
run --kernel matmul --shape 1x4096x4096 --shape 4096x1x4096
run --kernel matmul --shape 300x200x130 --col-major 1
run --kernel matmul --shape 300x200x130 --col-major 0
run --kernel matmul -D BN=256 --shape 1000x3000x777
run --kernel matmul -D BM=64 -D BN=192 --shape 1000x3000x777
run --kernel matmul -D BK=128 -D STAGES=3 --shape 512x512x1000
run --kernel matmul --shape 1024x1024x4096 --ld-pad 8
exit $fail
