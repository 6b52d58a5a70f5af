#!/usr/bin/env bash
# What the next GPU session runs (after `scripts/device-bundle.sh --slim`; carry .device).
# Every peer figure comes from the same process and rounds; `interleaved` settles the GPU
# first (bench/benchlib.py, session 44).
#   bash bench/gpu-session45.sh attn OUTDIR   bench_attention.py once (its new "tilec here"
#     timing against SDPA's tensors, the fair ratio), then issue 14's table in the sweep:
#     D = 64 and 128, causal and not, S = 1024, 4096, 16384, burst and 5 s sustained, with
#     cuDNN, FLASH_ATTENTION and Triton (CSV for bench/plot_attention.py), then decode
#   bash bench/gpu-session45.sh mm OUTDIR     issue 15: the twelve shapes (burst and
#     sustained), then other configurations at the K = 1024 shapes and 3000^3
#   bash bench/gpu-session45.sh causal OUTDIR  why late_turn costs with the mask: the causal
#     kernel at D = 128 with late_turn forced (a copy of examples/attention.tile) against the
#     default in the sweep, then the SASS of both (cuobjdump)
#   bash bench/gpu-session45.sh turnacc OUTDIR  after `git apply
#     bench/experiments/s44-turn-acc.patch` and the bundle: the late wait also after O's
#     rescale (every element, or every 8th: TILEC_X_TURNACC) against the landed kernel, D = 128
#     without the mask, in the sweep (one process, with cuDNN)
#   bash bench/gpu-session45.sh tune OUTDIR   `tilec tune --table` over issue 15's shapes
#     above 128 rows (bf16 in and out): the @tuned rows for examples/matmul.tile
#   bash bench/gpu-session45.sh validate OUTDIR  the twelve shapes with the @tuned rows (mm's
#     first step), then issue 14's table at S = 1024 and 4096 (burst, CSV and plot)
#   bash bench/gpu-session45.sh turn2 OUTDIR  late_turn = 2 from 8192 keys (the default) against
#     TURN = 1 at D = 128 without the mask, S = 4096 / 8192 / 16384, with cuDNN, burst and 5 s
#     sustained
source bench/session-start.sh "gpu-session45.sh attn|mm|causal|turnacc|tune|validate|turn2 OUTDIR" "$@"
if [ "$mode" = turn2 ]; then
  export TILEC_CACHE=0
  step 400 turn2 python3 bench/bench_attention_sweep.py --seqs 4096,8192,16384 --dims 128 \
    --causal 0 --rounds 3 --sustain 5 --variant "t1:TURN=1" --csv $out/turn2.csv
  grep -E "TF/s|sustained" $out/turn2.txt
  # More rows for examples/matmul.tile's table: LLM projections and other sizes
  shapes=""
  for s in 8192x4096x4096 8192x12288x4096 8192x14336x4096 8192x4096x14336 1024x1024x1024 \
           4096x1024x4096 5000x5000x5000 1536x1536x1536 2048x8192x2048 16384x16384x512; do
    shapes="$shapes --shape $s"
  done
  step 300 tune2 tilec tune examples/matmul.tile --kernel matmul -D O=bf16 $shapes --no-verify \
    --table --tuning-db $out/tuning2.db
  grep -E "^(TABLE|@tuned| +\()|no row" $out/tune2.txt | cut -c1-300
  grep -o "^TUNE matmul [0-9x]*: [^(]*([0-9.]* us)\|the plain launch.*us$" $out/tune2.txt
fi
if [ "$mode" = validate ]; then
  (cd bench && step 200 mm python3 bench_skinny.py --rounds 2 --sustain 5 --shapes \
    $twelve \
    --configs matmul:default)
  grep -E "^(SUMMARY|SUSTAINED)" $out/mm.txt
  step 300 sweep python3 bench/bench_attention_sweep.py --seqs 1024,4096 --dims 64,128 \
    --causal 0,1 --rounds 2 --csv $out/sweep.csv
  grep "TF/s" $out/sweep.txt
  python3 bench/plot_attention.py $out/sweep.csv $out/attention-tflops.svg
fi
if [ "$mode" = tune ]; then
  shapes=""
  for s in 8192x8192x8192 6144x6144x6144 4096x4096x4096 2048x2048x2048 3000x3000x3000 \
           1000x3000x777 4096x4096x512 8192x8192x1024 4096x16384x1024; do
    shapes="$shapes --shape $s"
  done
  step 500 tune tilec tune examples/matmul.tile --kernel matmul -D O=bf16 $shapes --no-verify \
    --table --tuning-db $out/tuning.db
  grep -E "^(TUNE|TABLE|@tuned| +\()" $out/tune.txt | cut -c1-400
fi
if [ "$mode" = attn ]; then
  step 120 here python3 bench/bench_attention.py --rounds 2 --shape 4x16x4096x128
  grep "^round" $out/here.txt
  step 420 sweep python3 bench/bench_attention_sweep.py --seqs 1024,4096,16384 --dims 64,128 \
    --causal 0,1 --rounds 2 --sustain 5 --csv $out/sweep.csv
  grep "TF/s" $out/sweep.txt
  python3 bench/plot_attention.py $out/sweep.csv $out/attention-tflops.svg
  step 60 decode python3 bench/bench_decode.py
  tail -12 $out/decode.txt
fi
if [ "$mode" = mm ]; then
  (cd bench && step 200 mm python3 bench_skinny.py --rounds 2 --sustain 5 --shapes \
    $twelve \
    --configs matmul:default)
  grep -E "^(SUMMARY|SUSTAINED)" $out/mm.txt
  (cd bench && step 120 mmk python3 bench_skinny.py --rounds 2 \
    --shapes 8192x8192x1024,4096x16384x1024,4096x4096x512,3000x3000x3000 \
    --configs matmul:default,pingpong:128x128,persistent:128x256,matmul:128x256:0:2)
  grep -E "TF/s" $out/mmk.txt
  # 3000^3 (0.85x): where tilec's 128x192 cluster kernel and cuBLAS's differ
  step 150 ncu3000 ncu --kernel-name regex:'^(matmul|nvjet|sm90|cutlass)' --section SpeedOfLight \
    --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section LaunchStats \
    --section Occupancy python3 bench/probe_mm_once.py 3000x3000x3000 matmul:128x192
  grep -E "^  [a-z_]|Duration|SM Frequency|Compute \(SM\) Th|Memory Th|L2 Cache Th|DRAM Th|L1/TEX Hit|L2 Hit|Grid Size|Block Size|Cluster|Registers Per|Shared Memory Config|Waves Per SM|Stall|Warp Cycles Per Issued" \
    $out/ncu3000.txt | head -80
fi
if [ "$mode" = causal ]; then
  sed 's/late_turn = where(FTZ == 1 \&\& D == 128 \&\& CAUSAL == 0, 1, 0)/late_turn = 1/' \
    examples/attention.tile > $out/att-lt.tile
  grep -q "late_turn = 1)" $out/att-lt.tile || echo "att-lt.tile: the substitution failed"
  step 150 lt python3 bench/bench_attention_sweep.py --seqs 4096,16384 --dims 128 --causal 1 \
    --rounds 3 --variant "lt:SRC=$out/att-lt.tile"
  grep "TF/s" $out/lt.txt
  tilec examples/attention.tile --kernel attention -D D=128 -D CAUSAL=1 --emit=cubin -o $out/c0.cubin
  tilec $out/att-lt.tile --kernel attention -D D=128 -D CAUSAL=1 --emit=cubin -o $out/c1.cubin
  cuobjdump -sass $out/c0.cubin > $out/sass-c0.txt
  cuobjdump -sass $out/c1.cubin > $out/sass-c1.txt
  xz $out/sass-c0.txt $out/sass-c1.txt && rm -f $out/*.cubin
fi
if [ "$mode" = turnacc ]; then
  export TILEC_CACHE=0
  step 200 turnacc python3 bench/bench_attention_sweep.py --seqs 1024,4096,16384 \
    --dims 128 --causal 0 --rounds 3 --variant "acc1:STAGES=0+ENV_X_TURNACC=1" \
    --variant "acc8:LSE=1+ENV_X_TURNACC=8" --variant "bn160:BN=160"
  grep "TF/s" $out/turnacc.txt
fi
