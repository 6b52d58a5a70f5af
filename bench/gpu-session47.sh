#!/usr/bin/env bash
# What session 47 runs on the GPU (after `scripts/device-bundle.sh --slim`; carry .device).
# Every peer figure comes from the same process and rounds (bench/benchlib.py's interleaved).
#   bash bench/gpu-session47.sh attn OUTDIR   issue 14's table: D = 64 and 128, causal and
#     not, S = 1024, 4096, 16384, 2 burst rounds and 5 s sustained, with cuDNN,
#     FLASH_ATTENTION and Triton (CSV + plot), then decode
#   bash bench/gpu-session47.sh short OUTDIR  the two weakest attention cases at S = 1024 (D =
#     128 without the mask, D = 64 causal) against the heuristic's other choices (variants),
#     then the sm_80 kernel at D = 128 and 64 (bench_attention.py, tilec-check --heuristic)
#   bash bench/gpu-session47.sh mm OUTDIR     issue 15: the twelve bf16 shapes (burst and 5 s
#     sustained), FP8 per-tensor and block scales, SGEMM, grouped at 64 groups
#   bash bench/gpu-session47.sh tune8 OUTDIR  `tilec tune --table` for matmul_fp8 (per-tensor
#     scales) and matmul_fp8_block at issue 15's FP8 shapes: their @tuned rows
#   bash bench/gpu-session47.sh fp8 OUTDIR    FP8 with the rows (the default launch, nothing
#     fixed) against torch._scaled_mm, 3 rounds and 5 s sustained
#   bash bench/gpu-session47.sh tunefp8 OUTDIR  tune8 and fp8 in one call: the rows found go
#     into a copy of examples/matmul_fp8.tile ($OUT/matmul_fp8.tile), which bench_fp8.py then
#     times (2 rounds, no sustained figure)
#   bash bench/gpu-session47.sh tune8v OUTDIR  tune8 again (call 6 ran it with the tuner timing
#     back-to-back launches: does it agree with bench_fp8.py's figures of call 5 now?)
#   bash bench/gpu-session47.sh retune OUTDIR  examples/matmul.tile's table again with the
#     autotuner's fixed timing (the nine shapes of session 45's tune plus its four later rows),
#     the new table in a copy ($OUT/matmul.tile), then both tables' kernels against cuBLAS in
#     the same rounds (bench_skinny.py matmul:default,matmul2:default --source2 COPY)
#   bash bench/gpu-session47.sh e2e OUTDIR    the GPU lit suite (e2e) and python/tests/test_gpu.py
source bench/session-start.sh "gpu-session47.sh attn|short|mm|tune8|fp8|tunefp8|tune8v|retune|e2e OUTDIR" "$@"
if [ "$mode" = attn ]; then
  step 450 sweep python3 bench/bench_attention_sweep.py --seqs 1024,4096,16384 --dims 64,128 \
    --causal 0,1 --rounds 2 --sustain 5 --csv $out/sweep.csv
  grep -E "TF/s|sustain" $out/sweep.txt
  python3 bench/plot_attention.py $out/sweep.csv $out/attention-tflops.svg \
    "$(nvidia-smi --query-gpu=name --format=csv,noheader | awk '{print $2}')"
  step 60 decode python3 bench/bench_decode.py
  tail -8 $out/decode.txt
fi
if [ "$mode" = short ]; then
  step 150 s1024d128 python3 bench/bench_attention_sweep.py --seqs 1024 --dims 128 --causal 0 \
    --rounds 3 --variant np:PERSISTENT=0 --variant t0:TURN=0 --variant bn64:BN=64
  grep "TF/s" $out/s1024d128.txt
  step 150 s1024d64c python3 bench/bench_attention_sweep.py --seqs 1024 --dims 64 --causal 1 \
    --rounds 3 --variant bn64:BN=64 --variant wg3:WG=3 --variant np:PERSISTENT=0
  grep "TF/s" $out/s1024d64c.txt
  for sh in "4x16x4096x128" "4x32x4096x64"; do
    name=a80-$(echo $sh | tr -d ' -')
    step 150 $name python3 bench/bench_attention.py --arch sm_80 --rounds 3 --shape $sh
    grep -E "^round|HEURISTIC" $out/$name.txt | tail -4
  done
fi
if [ "$mode" = mm ]; then
  (cd bench && step 220 mm python3 bench_skinny.py --rounds 2 --sustain 5 --shapes $twelve \
    --configs matmul:default)
  grep -E "^(SUMMARY|SUSTAINED)" $out/mm.txt
  (cd bench && step 100 fp8 python3 bench_fp8.py --rounds 2 --modes tensor \
    --shapes 8192x8192x8192,4096x4096x4096)
  (cd bench && step 100 fp8b python3 bench_fp8.py --rounds 2 --modes block \
    --shapes 8192x8192x8192,4096x4096x4096 --configs 192x128:0:1:GROUP=8)
  grep "SUMMARY" $out/fp8.txt $out/fp8b.txt
  step 80 sgemm python3 bench/bench_matmul.py --tilec-check $(which tilec-check) --iters 20 \
    --reps 5 --shapes 2048x2048x2048,4096x4096x4096 --f32 matmul:128x128x32
  grep -iE "sgemm|f32|TF/s" $out/sgemm.txt | tail -6
  (cd bench && step 100 grouped64 python3 bench_grouped.py --rounds 2 --groups 64)
  tail -4 $out/grouped64.txt
fi
if [ "$mode" = e2e ]; then
  LIT_OPTS="--max-time 230 --filter e2e/" step 250 e2e bash .device/gpu-tests.sh
  grep -E "Passed|Failed|FAIL" $out/e2e.txt | head
  step 200 pytest-gpu python3 -m pytest -q python/tests/test_gpu.py
  tail -3 $out/pytest-gpu.txt
fi
# tilec tune --table for one kernel of examples/matmul_fp8.tile at issue 15's FP8 shapes:
# tune_fp8 NAME KERNEL SECONDS (the log in $out/NAME.txt, its tuning database beside it)
tune_fp8() {
  step "$3" "$1" tilec tune examples/matmul_fp8.tile --kernel "$2" --shape 8192x8192x8192 \
    --shape 4096x4096x4096 --no-verify --table --tuning-db "$out/$1.db"
  grep -E "^TUNE|^TABLE|^ +\(" "$out/$1.txt" | cut -c1-250
}
# tilec-check --heuristic with two problems that choose the same values (one compile)
heuristic_check() {
  step "$1" heur tilec-check examples/matmul.tile --kernel matmul --heuristic \
    --shape 512x512x512 --shape 520x512x512 --shape 1000x3000x777
  grep -E "HEURISTIC|PASS|FAIL" $out/heur.txt | head
}
if [ "$mode" = tune8 ] || [ "$mode" = tune8v ]; then
  tune_fp8 tune8b matmul_fp8_block 100
  tune_fp8 tune8 matmul_fp8 150
fi
if [ "$mode" = fp8 ]; then
  (cd bench && step 200 fp8 python3 bench_fp8.py --rounds 3 --sustain 5 --modes tensor,block \
    --shapes 8192x8192x8192,4096x4096x4096 --configs default)
  grep -E "SUMMARY|SUSTAINED" $out/fp8.txt
  heuristic_check 100
fi
if [ "$mode" = tunefp8 ]; then
  tune_fp8 tune8 matmul_fp8 150
  tune_fp8 tune8b matmul_fp8_block 100
  python3 bench/tuned_table.py examples/matmul_fp8.tile $out/matmul_fp8.tile \
    matmul_fp8=$out/tune8.txt matmul_fp8_block=$out/tune8b.txt
  (cd bench && step 120 fp8 python3 bench_fp8.py --rounds 2 --modes tensor,block \
    --shapes 8192x8192x8192,4096x4096x4096 --configs default --source $out/matmul_fp8.tile)
  grep -E "SUMMARY" $out/fp8.txt
  heuristic_check 40
fi
if [ "$mode" = retune ]; then
  rows=8192x8192x8192,6144x6144x6144,4096x4096x4096,2048x2048x2048,3000x3000x3000,1000x3000x777,4096x4096x512,8192x8192x1024,4096x16384x1024,8192x12288x4096,1024x1024x1024,5000x5000x5000,1536x1536x1536
  python3 bench/tuned_table.py examples/matmul.tile $out/matmul-heuristic.tile matmul=-
  step 400 retune tilec tune $out/matmul-heuristic.tile --kernel matmul -D O=bf16 \
    $(echo $rows | sed 's/^/--shape /; s/,/ --shape /g') --no-verify --table --tuning-db $out/retune.db
  grep -E "^TUNE|^TABLE|^ +\(" $out/retune.txt | cut -c1-250
  python3 bench/tuned_table.py examples/matmul.tile $out/matmul.tile matmul=$out/retune.txt
  (cd bench && step 180 rows python3 bench_skinny.py --rounds 3 --shapes $rows \
    --configs matmul:default,matmul2:default --source2 $out/matmul.tile)
  grep -E "TF/s$|SUMMARY" $out/rows.txt | grep -v "^ *[0-9x]* cuBLAS" | cut -c1-200
fi
