#!/usr/bin/env bash
# What session 56 runs on the GPU (after `scripts/device-bundle.sh --slim`;
# carry .device and .runs, where .runs/grouped_cm.tile is examples/matmul.tile
# with grouped_mm's tiles taken column by column within a group).
#   bash bench/gpu-session56.sh grouped OUTDIR  grouped GEMM (64 and 128 groups of
#     128-1024 rows, N = K = 4096): the shipped grouped_mm against the
#     column-major order and the persistent kernel, torch._grouped_mm in the same
#     rotating rounds; Nsight Compute's DRAM bytes and L2 hit rate for each; then
#     FP8 per-tensor at 4096^3 over tiles and schedules. First attention without
#     keys (Sk = 0: the persistent kernel's empty mma loop) from Python
#   bash bench/gpu-session56.sh verify OUTDIR  (also .runs/matmul_old.tile: examples/matmul.tile
#     before grouped_mm's column order) the Python GPU tests of attention without keys and
#     of grouped_mm; test/e2e/attention.test (sm_80 at D = 192 and 256 by default); the
#     landed grouped_mm against the old one and torch._grouped_mm at 64 and 128 groups;
#     FP8 per-tensor at 4096^3, the default against persistent with 4 stages, 5 rounds
#   bash bench/gpu-session56.sh lean OUTDIR  (little device time) the Python tests of attention
#     without keys and grouped_mm, and the sm_80 D = 192 / 256 and FP8 per-tensor row lines
#     of the e2e tests by hand
#   bash bench/gpu-session56.sh walk OUTDIR  grouped_mm with the walk of
#     docs/perf-logs/s56-grouped-walk.patch (no one-by-one tail: the group picked in the chunk
#     of eight that holds the tile) against the shipped one and torch._grouped_mm, 64 and 128
#     groups (bench_grouped.py checks each result against torch's); ran before the patch
#     landed in examples/matmul.tile (it no longer applies there)
#   bash bench/gpu-session56.sh pers OUTDIR  (for the next session) grouped_mm_persistent with
#     docs/perf-logs/s56-grouped-persistent.patch (each tile's group found as grouped_mm's,
#     column by column; the one-by-one walk from group 0 per tile before) against grouped_mm,
#     the unpatched persistent kernel and torch._grouped_mm, 64 and 128 groups; its ping-pong
#     form (BN = 128) too
source bench/session-start.sh "gpu-session56.sh grouped|verify|lean|walk|pers OUTDIR" "$@"
if [ "$mode" = pers ]; then
  mkdir -p .runs && cp examples/matmul.tile .runs/grouped_pers.tile
  patch -s .runs/grouped_pers.tile docs/perf-logs/s56-grouped-persistent.patch || exit 1
  P=../.runs/grouped_pers.tile:grouped_mm_persistent
  for g in 64 128; do
    (cd bench && step 150 pers$g python3 bench_grouped.py --rounds 4 --groups $g --variant pers=$P \
      --variant pp=$P,PINGPONG=1,BN=128 --variant old=../examples/matmul.tile:grouped_mm_persistent)
    grep -E "round|wrong" $out/pers$g.txt | cut -c1-220
  done
  exit 0
fi
if [ "$mode" = walk ]; then
  mkdir -p .runs && cp examples/matmul.tile .runs/grouped_walk.tile
  patch -s .runs/grouped_walk.tile docs/perf-logs/s56-grouped-walk.patch || exit 1
  for g in 64 128; do
    (cd bench && step 100 walk$g python3 bench_grouped.py --rounds 4 --groups $g --variant walk=../.runs/grouped_walk.tile)
    grep -E "round|wrong" $out/walk$g.txt | cut -c1-200
  done
  exit 0
fi
if [ "$mode" = lean ]; then
  step 150 py python3 -m pytest -q -x python/tests/test_gpu.py -k "without_keys or grouped_mm"
  grep -E "passed|failed|rror" $out/py.txt | tail -3
  A=examples/attention.tile
  { tilec-check $A --arch sm_80 -D D=256 --shape 2x300x257x256
    tilec-check $A --arch sm_80 -D D=256 -D CAUSAL=1 --shape 2x300x300x256 --shape 1x200x333x256
    tilec-check $A --arch sm_80 -D D=192 --shape 2x300x257x192 --shape 1x512x512x192
    tilec-check $A --arch sm_80 -D D=192 -D CAUSAL=1 -D T=f16 --shape 2x300x300x192
  } > $out/sm80.txt 2>&1; grep -E "PASS|FAIL|rror" $out/sm80.txt | cut -c1-150
  exit 0
fi
if [ "$mode" = verify ]; then
  step 200 py python3 -m pytest -q python/tests/test_gpu.py -k "without_keys or grouped_mm"
  grep -E "passed|failed|rror" $out/py.txt | tail -3
  LIT_OPTS="--max-time 150 --filter e2e/attention.test" step 160 e2e bash .device/gpu-tests.sh
  grep -E "Passed|Failed|FAIL|Timed" $out/e2e.txt | head
  for g in 64 128; do
    (cd bench && step 100 grouped$g python3 bench_grouped.py --rounds 3 --groups $g --variant old=../.runs/matmul_old.tile)
    grep -E "round|wrong" $out/grouped$g.txt | cut -c1-200
  done
  (cd bench && step 150 fp8t python3 bench_fp8.py --rounds 5 --modes tensor --shapes 4096x4096x4096 \
    --configs default,128x256:4:1:PERSISTENT=1+GROUP=8)
  grep -E "SUMMARY|rounds|wrong|rror" $out/fp8t.txt | cut -c1-200
  exit 0
fi
if [ "$mode" = grouped ]; then
  step 150 sk0 python3 -m pytest -q -x python/tests/test_gpu.py -k "without_keys or attention_against"
  grep -E "passed|failed|rror" $out/sk0.txt | tail -3
  V="--variant cm=../.runs/grouped_cm.tile --variant cm128=../.runs/grouped_cm.tile,BN=128 --variant pers=../examples/matmul.tile:grouped_mm_persistent"
  for g in 64 128; do
    (cd bench && step 150 grouped$g python3 bench_grouped.py --rounds 3 --groups $g $V)
    grep -E "round|wrong|max" $out/grouped$g.txt | cut -c1-260
  done
  (cd bench && step 150 ncu ncu -k 'regex:grouped_mm|Group' -c 3 --metrics \
    dram__bytes_read.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed \
    python3 bench_grouped.py --rounds 0 --groups 64 --variant cm=../.runs/grouped_cm.tile)
  grep -E "grouped_mm|Group|dram__|lts__|gpu__time|hmma" $out/ncu.txt | cut -c1-200
  (cd bench && step 200 fp8t python3 bench_fp8.py --rounds 3 --modes tensor --shapes 4096x4096x4096 \
    --configs default,128x256:4:2:PERSISTENT=1+GROUP=8,128x256:4:1:PERSISTENT=1+GROUP=8,128x256:0:2:GROUP=8,192x256:3:1:GROUP=8,128x256:5:1:GROUP=8)
  grep -E "SUMMARY|wrong|rror" $out/fp8t.txt | cut -c1-200
  exit 0
fi
echo "unknown mode $mode"; exit 2
