#!/usr/bin/env bash
# A/B of two compilers on the GPU, interleaved (A B A B ...) in one call
# because the H200's clock drifts: bench/ab.sh OLD_TILEC_CHECK NEW_TILEC_CHECK
# ROUNDS ITERS TILEC_CHECK_ARGS... prints each BENCH line tagged old/new.
set -u
old=$1 new=$2 rounds=$3 iters=$4; shift 4
for r in $(seq "$rounds"); do
  for tag in old new; do
    bin=$old; [ $tag = new ] && bin=$new
    "$bin" "$@" --bench "$iters" | grep '^BENCH' | sed "s/^/$tag r$r /"
  done
done
