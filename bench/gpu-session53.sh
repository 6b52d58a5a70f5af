#!/usr/bin/env bash
# What session 53 runs on the GPU (carry .device: HEAD's bundle from scripts/device-bundle.sh
# --slim, plus .device/za: docs/perf-logs/s50-zero-address-copy.patch applied to HEAD (8fb6fe7),
# its tilec-check and libtilec.so stripped and xz'd; tile-opt.xz left out to fit 64 MiB).
# Every peer figure comes from the same process and rounds (bench/benchlib.py's interleaved).
#   bash bench/gpu-session53.sh first OUTDIR  the e2e suite with the patch's compiler, then
#     attention at D = 128 (S4096, causal and not) compiled by the patch's compiler against
#     HEAD's in the same rounds (tilec-check A/B) next to cuDNN, then gpu-session52.sh's sm_80
#     step at D = 64 (BN = 128 on 8 warps against the default tile)
#   bash bench/gpu-session53.sh ab OUTDIR  (a bundle with docs/perf-logs/s53-ring-and-warpgroup.patch
#     applied: its knobs TILEC_OLDWG / TILEC_OLDRING give 8fb6fe7's warpgroup index and ring) the
#     FP8 block kernel's SASS new and old; its speed with HEAD's source and compiler against
#     the new source with the knobs one by one, next to torch._scaled_mm (5 rounds, the tuned
#     rows at 8192^3 and 4096^3); attention D 64/128, causal and not, new against old; the
#     e2e suite
#   bash bench/gpu-session53.sh sweep OUTDIR  FP8 per-tensor configurations at 8192^3 and 4096^3
#     against torch._scaled_mm, and bf16 4096x16384x1024's against cuBLAS
#   bash bench/gpu-session53.sh causal OUTDIR  causal attention at S4096, D 128 and 64: the
#     heuristic's tile against other parameters, next to cuDNN
#   bash bench/gpu-session53.sh causal64 OUTDIR  causal D = 64 at 2048-16384 keys: WG = 2 with
#     BN = 256 against the heuristic's tile, next to cuDNN
#   bash bench/gpu-session53.sh check OUTDIR  attention at S 1024 and 4096, D 64 and 128, causal
#     and not, by default (the new causal tile), next to cuDNN; FP8 block scales with BM = 192
#     and turns, persistent
#   bash bench/gpu-session53.sh table OUTDIR  issue 15's bf16 table by default, burst and
#     sustained, against cuBLAS; FP8 block and per-tensor scales by default
#   bash bench/gpu-session53.sh short OUTDIR  causal attention at 512 and 1024 keys: D = 64 with
#     the default tile against the heuristic's, D = 128 with one program per tile
#   bash bench/gpu-session53.sh light OUTDIR  the hand-pipelined FP8 block kernel with the
#     producer's 72 / 216 register split (knob TILEC_LIGHT_PRODUCER: a bundle with
#     docs/perf-logs/s53-light-producer.patch applied) against the default
#   bash bench/gpu-session53.sh wide OUTDIR  (for the next session: a bundle with
#     docs/perf-logs/s53-wide-block.patch applied) the 128 x 256 FP8 block kernel in two
#     halves: its loop's SASS, then its speed against the shipped rows and torch._scaled_mm
#   bash bench/gpu-session53.sh exp|one|za|ATTN|MM|... OUTDIR  gpu-session52.sh's modes (its
#     'check' is this script's own)
source bench/session-start.sh "gpu-session53.sh first|ab|sweep|causal|causal64|check|table|short|light|wide|<gpu-session52.sh's modes> OUTDIR" "$@"
if [ "$mode" = first ]; then
  mkdir -p /tmp/head && cp build/bin/tilec-check /tmp/head/
  cp .device/za/tilec-check.xz .device/bin/ && cp .device/za/libtilec.so.xz .device/lib/
  rm -f /tmp/tilec-llvm/libtilec.so
  LIT_OPTS="--max-time 240 --filter e2e/" step 250 e2e bash .device/gpu-tests.sh
  grep -E "Passed|Failed|FAIL" $out/e2e.txt | head
  for c in "" --causal; do
    step 90 attn${c#--} python3 bench/bench_attention.py --rounds 3 --shape 4x16x4096x128 $c \
      --old /tmp/head/tilec-check
    grep -E "TF/s|tilec" $out/attn${c#--}.txt | tail -8
  done
  step 120 sm80 python3 bench/bench_attention.py --arch sm_80 --rounds 3 --shape 4x32x4096x64 \
    --define BN=128 --num-warps 8 --old build/bin/tilec-check --old-define BN=256
  grep -E "TF/s|tilec" $out/sm80.txt | tail -12
  exit 0
fi
if [ "$mode" = sweep ]; then
  # FP8 per-tensor (matmul_fp8 has no @tuned row): tiles, stages, clusters, persistence at
  # 8192^3 and 4096^3 next to torch._scaled_mm; bf16 4096x16384x1024 (0.918x in session 48).
  P=PERSISTENT=1+GROUP=8
  for shape in 4096x4096x4096 8192x8192x8192; do
    (cd bench && step 150 tensor-${shape%%x*} python3 bench_fp8.py --rounds 3 --modes tensor \
      --shapes $shape --configs default,128x256:0:1:$P,128x256:0:2:$P,128x256:3:2:$P,128x256:4:1:$P,128x256:0:2:GROUP=8,128x192:0:1:$P,128x192:0:2:$P,192x192:0:2:$P,128x208:0:2:$P,256x128:0:2:$P)
    grep -E "SUMMARY|not" $out/tensor-${shape%%x*}.txt | cut -c1-170
  done
  (cd bench && step 150 skinny python3 bench_skinny.py --rounds 3 --shapes 4096x16384x1024 \
    --configs matmul:default,matmul:128x256:0:1,matmul:128x192:0:1,persistent:128x256,persistent:128x192,k:matmul:BN=256+PERSISTENT=1+CLUSTER=2,k:matmul:BN=208+PERSISTENT=1)
  grep -E "TF/s|not" $out/skinny.txt | cut -c1-170
  exit 0
fi
if [ "$mode" = causal ]; then
  # Causal attention at 4096 keys (0.97x cuDNN at D = 64 and 128): the heuristic's tile against
  # the parameters it could choose otherwise, next to cuDNN.
  step 200 c128 python3 bench/bench_attention_sweep.py --seqs 4096 --dims 128 --causal 1 \
    --rounds 3 --variant turn:TURN=1 --variant bn64:BN=64 --variant np:PERSISTENT=0
  grep "TF/s" $out/c128.txt
  step 200 c64 python3 bench/bench_attention_sweep.py --seqs 4096 --dims 64 --causal 1 \
    --rounds 3 --variant wg2:WG=2 --variant st3:STAGES=3 --variant turn:TURN=1 --variant wg2bn256:WG=2+BN=256
  grep "TF/s" $out/c64.txt
  exit 0
fi
if [ "$mode" = causal64 ]; then
  # Causal D = 64: two consumer warpgroups with BN = 256 against the heuristic's three with
  # BN = 128 (from 3072 keys), over the sequence lengths, next to cuDNN.
  step 300 c64s python3 bench/bench_attention_sweep.py --seqs 2048,4096,8192,16384 --dims 64 \
    --causal 1 --rounds 3 --variant wg2bn256:WG=2+BN=256
  grep "TF/s" $out/c64s.txt
  exit 0
fi
if [ "$mode" = check ]; then
  # The new causal D <= 64 tile as the default launch, with the issue's attention cases (S 1024
  # and 4096, D 64 and 128, causal and not), next to cuDNN; FP8 block scales with three
  # consumer warpgroups (BM = 192) and with turns, persistent, against the tuned rows.
  step 240 attn python3 bench/bench_attention_sweep.py --seqs 1024,4096 --dims 64,128 \
    --causal 0,1 --rounds 3
  grep "TF/s" $out/attn.txt | grep -v "FLASH\|Triton"
  P=PERSISTENT=1+GROUP=8
  for sh in 8192x8192x8192 4096x4096x4096; do
    (cd bench && step 150 blk-${sh%%x*} python3 bench_fp8.py --rounds 3 --modes block --shapes $sh \
      --configs default,128x128:3:2:$P+TURNS=0,128x128:3:2:$P+TURNS=1,192x128:3:2:$P+TURNS=0,192x128:3:2:$P+TURNS=1,192x128:0:1:$P+TURNS=0,192x128:4:1:$P+TURNS=1)
    grep -E "SUMMARY|not" $out/blk-${sh%%x*}.txt | cut -c1-170
  done
  exit 0
fi
if [ "$mode" = table ]; then
  # Issue 15's bf16 table by default (burst and 5 s sustained) against cuBLAS; FP8 block and
  # per-tensor scales by default (the 4096^3 block row changed) against torch._scaled_mm.
  (cd bench && step 260 mm python3 bench_skinny.py --rounds 2 --sustain 5 --shapes $twelve \
    --configs matmul:default)
  grep -E "^(SUMMARY|SUSTAINED)|geometric" $out/mm.txt
  (cd bench && step 120 fp8 python3 bench_fp8.py --rounds 3 --modes block,tensor \
    --shapes 8192x8192x8192,4096x4096x4096 --configs default)
  grep "SUMMARY" $out/fp8.txt | cut -c1-200
  exit 0
fi
if [ "$mode" = short ]; then
  # Causal attention below 2048 keys: D = 64 with the default 128 x 256 tile (WG = 2, BN = 256)
  # against the heuristic's BN = 128; D = 128 with one program per tile, next to cuDNN.
  step 150 s64 python3 bench/bench_attention_sweep.py --seqs 512,1024 --dims 64 --causal 1 \
    --rounds 3 --variant wg2bn256:WG=2+BN=256
  grep "TF/s" $out/s64.txt | grep -v "FLASH\|Triton"
  step 150 s128 python3 bench/bench_attention_sweep.py --seqs 512,1024 --dims 128 --causal 1 \
    --rounds 3 --variant np:PERSISTENT=0
  grep "TF/s" $out/s128.txt | grep -v "FLASH\|Triton"
  exit 0
fi
if [ "$mode" = light ]; then
  # (The bundle's compiler has the knob TILEC_LIGHT_PRODUCER: the 72 / 216 register split for
  # every pipeline.) The hand-pipelined FP8 block kernel (configuration field 9), persistent
  # without pairs: 28 bytes of ptxas spills with 104 / 200, none with 72 / 216.
  P=PERSISTENT=1+GROUP=8
  for sh in 8192x8192x8192 4096x4096x4096; do
    (cd bench && step 150 light-${sh%%x*} python3 bench_fp8.py --rounds 3 --modes block --shapes $sh \
      --configs default,128x128:3:9:$P+TURNS=0,128x128:3:9:$P+TURNS=0+ENV_LIGHT_PRODUCER=1,128x128:3:9:$P+TURNS=1+ENV_LIGHT_PRODUCER=1,128x128:4:9:$P+TURNS=0+ENV_LIGHT_PRODUCER=1)
    grep -E "SUMMARY|not" $out/light-${sh%%x*}.txt | cut -c1-170
  done
  exit 0
fi
if [ "$mode" = wide ]; then
  # (A bundle with docs/perf-logs/s53-wide-block.patch applied.) The 128 x 256 FP8 block
  # kernel in two halves (docs/perf-logs/s53-matmul_fp8-wide.tile, S2=1) against the shipped
  # 128 x 128 rows and torch._scaled_mm; its SASS (spills in the loop?) first.
  W=docs/perf-logs/s53-matmul_fp8-wide.tile
  for c in "-D STAGES=3" "-D PERSISTENT=1 -D STAGES=3 -D GROUP=8"; do
    TILEC_LIGHT_PRODUCER=1 tilec $W --kernel matmul_fp8_block $c --emit=cubin -o $out/w.cubin &&
      nvdisasm -c $out/w.cubin > $out/w.sass &&
      echo "wide $c: $(grep -c 'LDL\|STL' $out/w.sass) local loads/stores, $(grep -c QGMMA $out/w.sass) QGMMA"
  done
  rm -f $out/w.cubin $out/w.sass
  P=PERSISTENT=1+GROUP=8+TURNS=0
  L=S2=1+ENV_LIGHT_PRODUCER=1
  for sh in 8192x8192x8192 4096x4096x4096; do
    (cd bench && step 200 wide-${sh%%x*} python3 bench_fp8.py --rounds 3 --modes block --shapes $sh \
      --source2 ../$W --configs default,128x128:3:1:$L,128x128:4:1:$L,128x128:3:1:$P+$L,128x128:4:2:$P+$L)
    grep -E "SUMMARY|not" $out/wide-${sh%%x*}.txt | cut -c1-170
  done
  exit 0
fi
if [ "$mode" = ab ]; then
  # SASS of the FP8 block kernel's 8192^3 row, new and old (nvdisasm; the loop read offline).
  A="--kernel matmul_fp8_block -D BM=128 -D PERSISTENT=1 -D TURNS=0 -D CLUSTER=2 -D STAGES=3 -D GROUP=8"
  tilec $A --emit=cubin examples/matmul_fp8.tile -o $out/new.cubin && nvdisasm -c $out/new.cubin > $out/new.sass
  TILEC_OLDWG=1 TILEC_OLDRING=1 tilec $A --emit=cubin docs/perf-logs/s53-matmul_fp8-head.tile \
    -o $out/old.cubin && nvdisasm -c $out/old.cubin > $out/old.sass
  rm -f $out/*.cubin; xz -9 $out/*.sass; ls -la $out
  # FP8 block scales: HEAD's source and compiler (S2=1 + both knobs) against the new source
  # with the knobs one by one, at each shape's tuned row, next to torch._scaled_mm.
  old=ENV_OLDWG=1+ENV_OLDRING=1
  for sh in 8192x8192x8192:2:GROUP=8+TURNS=0 4096x4096x4096:1:GROUP=8; do
    IFS=: read shape cl more <<< "$sh"
    c=128x128:3:$cl:PERSISTENT=1+$more
    (cd bench && step 150 fp8-${shape%%x*} python3 bench_fp8.py --rounds 5 --modes block \
      --shapes $shape --source2 ../docs/perf-logs/s53-matmul_fp8-head.tile \
      --configs $c+S2=1+$old,$c+$old,$c+ENV_OLDRING=1,$c,default)
    grep -E "SUMMARY|error [0-9.e+-]+ of|not" $out/fp8-${shape%%x*}.txt | cut -c1-170
  done
  # Attention (ring of 2: only the warpgroup index moves): new against old.
  step 200 attn python3 bench/bench_attention_sweep.py --seqs 4096 --dims 64,128 --causal 0,1 \
    --rounds 3 --variant old:ENV_OLDWG=1+ENV_OLDRING=1
  grep "TF/s" $out/attn.txt
  LIT_OPTS="--max-time 230 --filter e2e/" step 240 e2e bash .device/gpu-tests.sh
  grep -E "Passed|Failed|FAIL" $out/e2e.txt | head
  exit 0
fi
exec bash bench/gpu-session52.sh "$mode" "$out"
