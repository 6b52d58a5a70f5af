#!/usr/bin/env bash
# A/B of two compilers on the GPU, interleaved (A B A B ...) in one call
# because the H200's clock drifts (in alternating order): bench/ab.sh OLD_TILEC_CHECK NEW_TILEC_CHECK
# ROUNDS ITERS TILEC_CHECK_ARGS... prints each BENCH line tagged old/new.
set -u
old=$1 new=$2 rounds=$3 iters=$4; shift 4
# The order alternates (old new, then new old) so that a clock drifting
# through the call biases neither side.
for r in $(seq "$rounds"); do
  order="old new"; [ $((r % 2)) = 0 ] && order="new old"
  for tag in $order; do
    bin=$old; [ $tag = new ] && bin=$new
    "$bin" "$@" --bench "$iters" | grep '^BENCH' | sed "s/^/$tag r$r /"
  done
done
