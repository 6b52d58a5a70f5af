#!/usr/bin/env bash
# Issue 13's "nothing slower": every kernel the compiler before the layout
# work (69e903b, the parent of 2404223) could build, timed by its tilec-check
# on its own examples and by the new tilec-check on today's examples,
# alternating old new / new old over ROUNDS rounds in one call (the H200's
# clock drifts), at the sizes of the benchmarks in docs/performance.md.
#   bash bench/nothing-slower.sh OLD_TILEC_CHECK OLD_EXAMPLES_DIR OUT [ROUNDS [REGEX]]
# REGEX (grep -E) keeps the cases whose line matches ('^matmul' or
# '^[a-l]'), so that the list can be split over calls; the log accumulates.
# The row kernels run at 1024 columns, their BN: wider rows are an error of
# the new compiler (@require), which the old one did not check.
# Writes OUT/nothing-slower.txt (every BENCH line, tagged) and prints the
# summary of bench/nothing_slower_summary.py (median ms old / new per case).
set -u
old=$1 oldex=$2 out=$3 rounds=${4:-3} only=${5:-.}
new=build/bin/tilec-check
mkdir -p "$out"
log=$out/nothing-slower.txt
touch "$log"
big=16777216
cases=(
  "vadd.tile vadd --size $big"
  "saxpy.tile saxpy --size $big"
  "activations.tile activations --size $big"
  "activations.tile gelu_erf --size $big"
  "bits.tile bits --size $big"
  "mathmix.tile mathmix --size $big"
  "helpers.tile helpers --size $big"
  "gate.tile gate --shape 16384x1024"
  "mask.tile masked_fill --size $big"
  "histogram.tile histogram --size $big"
  "loops.tile powsum --size $big"
  "fused2d.tile fused2d --shape 8192x4096"
  "softmax.tile softmax --shape 32768x1024"
  "layernorm.tile layernorm --shape 32768x1024"
  "layernorm.tile rmsnorm --shape 32768x1024"
  "rowstats.tile rowstats --shape 32768x1024"
  "argmax.tile rowargmax --shape 32768x1024"
  "combine.tile rowmax_abs --shape 32768x1024"
  "combine.tile rowargmax2 --shape 32768x1024"
  "combine.tile block_or --size $big"
  "combine.tile running_max --size $big"
  "fold.tile fold --shape 262144x64"
  "transpose.tile transpose --shape 8192x8192"
  "gather_scatter.tile embedding --shape 8192x4096"
  "gather_scatter.tile reverse --size $big"
  "prefix_sum.tile block_sums --size $big"
  "prefix_sum.tile scan_offsets --size $big"
  "prefix_sum.tile add_offsets --size $big"
  "segment_sum.tile segment_sum --size $big"
  "matmul.tile matmul -D O=bf16 --shape 8192x8192x8192"
  "matmul.tile matmul -D O=bf16 --shape 4096x4096x4096"
  "matmul.tile matmul -D O=bf16 --shape 3000x3000x3000"
  "matmul.tile matmul -D O=bf16 --shape 4096x4096x512"
  "matmul.tile matmul -D O=bf16 --shape 16x8192x8192"
  "matmul.tile matmul --shape 4096x4096x4096"
  "matmul.tile matmul_grouped --shape 4096x4096x4096"
  "matmul.tile matmul_tf32 --shape 4096x4096x4096"
  "matmul.tile matmul_bias_gelu --shape 4096x4096x4096"
  "matmul.tile bmm --shape 8x2048x2048x2048"
  "matmul.tile matmul_scaled --shape 4096x4096x4096"
  "matmul.tile matmul_add --shape 4096x4096x4096"
)
for c in "${cases[@]}"; do
  echo "$c" | grep -qE -- "$only" || continue
  read -r file kernel args <<< "$c"
  for r in $(seq "$rounds"); do
    order="old new"; [ $((r % 2)) = 0 ] && order="new old"
    for tag in $order; do
      if [ $tag = old ]; then bin=$old; src=$oldex/$file; else bin=$new; src=examples/$file; fi
      # shellcheck disable=SC2086
      timeout 60 "$bin" "$src" --kernel $kernel $args --no-verify --bench 20 --bench-reps 5 2>&1 \
        | grep '^BENCH tilec' | sed "s|^|$tag r$r $file:$kernel $args :: |" >> "$log"
    done
  done
done
python3 bench/nothing_slower_summary.py "$log"
