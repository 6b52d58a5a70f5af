#!/usr/bin/env bash
# Ablation of the segmented sum (2^28 f32, BLOCK=2048 ITERS=16): the seg_*
# variants leave out one stage of the version of examples/segment_sum.tile
# measured in run 2 (with an x prefetch, before the offsets window); see
# docs/performance.md. layernorm1p.tile is the unshifted one-pass LayerNorm.
# Run on the GPU machine from the repository root.
export PATH=$PWD/build/bin:$PATH LD_LIBRARY_PATH=$PWD/build/lib:$LD_LIBRARY_PATH
for f in examples/segment_sum.tile bench/ablation/seg_notake.tile bench/ablation/seg_noscan.tile bench/ablation/seg_searchonly.tile bench/ablation/seg_streamscan.tile bench/ablation/seg_streamsum.tile; do
  echo "== $f"
  tilec-check $f -D BLOCK=2048 -D ITERS=16 --size 268435456 --bench 20 --no-verify | grep BENCH
done
echo "== ncu"
timeout 150 ncu --clock-control none --kernel-name regex:segment --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats tilec-check examples/segment_sum.tile -D BLOCK=2048 -D ITERS=16 --size 67108864 --no-verify 2>&1 | grep -v "^==PROF==" | tail -60
