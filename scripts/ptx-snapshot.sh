#!/usr/bin/env bash
# Compiles every example kernel (sm_90a in f32/f16/bf16, sm_80, the matmul
# variants) into one folder of PTX files, so that a refactor can be checked
# byte for byte:  scripts/ptx-snapshot.sh /tmp/before; (change);
#                 scripts/ptx-snapshot.sh /tmp/after; diff -r /tmp/before /tmp/after
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: ptx-snapshot.sh OUTDIR}
tilec=${TILEC:-build/bin/tilec}
rm -rf "$out"; mkdir -p "$out"
for f in examples/*.tile; do
  n=$(basename "$f" .tile)
  for cfg in "sm_90a:" "sm_90a:-D T=f16" "sm_90a:-D T=bf16" "sm_80:" "sm_80:-D T=bf16"; do
    arch=${cfg%%:*}; defs=${cfg#*:}
    tag=$(echo "$arch $defs" | tr -c 'a-zA-Z0-9_\n' '_')
    # shellcheck disable=SC2086
    "$tilec" "$f" --arch=$arch $defs -o "$out/$n.$tag.ptx" 2>"$out/$n.$tag.err" || true
  done
done
# The matmul configurations the tests and benchmarks use.
for defs in "-D BN=256" "-D BM=64 -D BN=64" "-D STAGES=3" "-D T=f32 -D BM=128 -D BN=128 -D BK=32" "-D T=f32 -D BM=64 -D BN=64 -D BK=32" "-D T=f16"; do
  tag=$(echo "$defs" | tr -c 'a-zA-Z0-9_\n' '_')
  for arch in sm_90a sm_80; do
    # shellcheck disable=SC2086
    "$tilec" examples/matmul.tile --arch=$arch $defs -o "$out/matmul.$arch.$tag.ptx" \
      2>"$out/matmul.$arch.$tag.err" || true
  done
done
find "$out" -name '*.err' -empty -delete
echo "ptx-snapshot: $(ls "$out"/*.ptx | wc -l) PTX files in $out"
