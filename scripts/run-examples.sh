#!/usr/bin/env bash
# The main job: build, compile every kernel in examples/ to PTX for sm_90a
# (and assemble it with ptxas when the CUDA toolkit is present), and, when a
# GPU is present, run each kernel on generated inputs against its host
# reference in f32, f16 and bf16.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
scripts/setup.sh
out="$BUILD_DIR/examples"
mkdir -p "$out"
examples=(examples/*.tile)
for f in "${examples[@]}"; do
  name=$(basename "$f" .tile)
  "$BUILD_DIR/bin/tilec" "$f" --arch=sm_90a -o "$out/$name.ptx"
  if [ -x /usr/local/cuda/bin/ptxas ]; then
    /usr/local/cuda/bin/ptxas -arch=sm_90a "$out/$name.ptx" -o "$out/$name.cubin"
    echo "compiled $f -> $out/$name.ptx (ptxas: ok)"
  else
    echo "compiled $f -> $out/$name.ptx"
  fi
done
status=0
for T in f32 f16 bf16; do
  "$BUILD_DIR/bin/tilec-check" "${examples[@]}" -D T=$T || status=1
done
exit $status
