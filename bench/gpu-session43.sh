#!/usr/bin/env bash
# What session 43 runs on the GPU (after `scripts/device-bundle.sh --slim`, which
# builds and leaves out what the 64 MiB carry has no room for; carry .device and
# .old):
#   bash bench/gpu-session43.sh regs OUTDIR   attention at D = 128 with other divisions of the
#     registers between the producer and the two consumer warpgroups (TILEC_X_REGS=P,C, an
#     experiment's knob of the working tree, not committed), persistent and one program per
#     tile (the intra-warpgroup overlap), each against the default in the same rounds with
#     cuDNN; first their results against the CPU interpreter; then 8758a4a's TF32 pair
#   bash bench/gpu-session43.sh tests OUTDIR  the whole e2e lit suite
#   bash bench/gpu-session43.sh pytests OUTDIR  python/tests/test_gpu.py (the Python package's
#     kernels against torch, python/tests/*.tile included: several mma kernels whose PTX the
#     descriptor change touched)
#   bash bench/gpu-session43.sh ftz OUTDIR    attention at D = 128 with only exp2 flushing
#     subnormals (TILEC_X_EX2FTZ=1, an experiment's knob) and with the whole kernel flushing
#     (FTZ = 1), each against the default in the same rounds with cuDNN; the SASS of the
#     three (cuobjdump); Nsight Compute on one launch of each and of cuDNN
#   bash bench/gpu-session43.sh desc OUTDIR   wgmma descriptors as one per operand plus a
#     constant per step: results against the CPU interpreter, then attention and matmul
#     against .old/tilec-check-base.xz (21a50d1) in the same rounds, with cuDNN; the SASS
#   bash bench/gpu-session43.sh ftz2 OUTDIR   exp2 flushing (TILEC_X_EX2FTZ=1, the working
#     tree's knob) against the default in the same rounds; Nsight Compute (warp states at
#     the base clock) on FTZ = 0 and FTZ = 1; the SASS of the FTZ = 1 kernel
#   bash bench/gpu-session43.sh turn OUTDIR   the ping-pong wait computed from P (ptxas keeps it
#     after the exponentials) against .old/tilec-check-head.xz (8a996f2) in the same rounds,
#     FTZ = 0 and 1 at D = 128, D = 64 and causal D = 128, with cuDNN; the SASS
#   bash bench/gpu-session43.sh ftzd OUTDIR   FTZ = 1 with the wait after P (this tree's
#     default at D = 128) against 8a996f2's default (FTZ = 0) in the same rounds, with cuDNN
#   bash bench/gpu-session43.sh turnab OUTDIR  for the next session, after `git apply
#     bench/experiments/s43-turn-after-p.patch`, `ninja -C build` and the bundle, with HEAD's
#     tilec-check as .old/tilec-check-head.xz: the patch's defaults (FTZ = 1 and the wait after
#     all of P at D = 128) against HEAD's (FTZ = 0 at D = 128 without the mask) over the
#     lengths, the mask and D = 64, and the patch's knob TILEC_X_TURN=2 against =3 (the wait
#     after either half of P's registers) at S = 4096, with and without the mask
#   bash bench/gpu-session43.sh turnsweep OUTDIR  then the sweep (D = 128, causal and not, S =
#     1024, 4096, 16384), burst and 5 s sustained, against cuDNN, FA2 and Triton
source bench/session-start.sh "gpu-session43.sh regs|ftz|ftz2|desc|turn|ftzd|turnab|turnc|turnsweep|tests|pytests OUTDIR" "$@"
# HEAD's tilec-check unpacked, then attention at D = 64 and 128, causal and not,
# against the CPU interpreter.
head_and_checks() {
  xz -dc .old/tilec-check-head.xz > build/bin/tilec-check-head && chmod +x build/bin/tilec-check-head
  for d in 64 128; do
    for c in 0 1; do
      tilec-check examples/attention.tile --kernel attention -D D=$d -D CAUSAL=$c --shape 6x333x517x$d 2>&1 \
        | grep -E "PASS|FAIL|rror"
    done
  done
}
if [ "$mode" = turnab ]; then
  head_and_checks
  for t in 2 3; do
    printf '#!/bin/sh\nTILEC_X_TURN=%s exec %s/build/bin/tilec-check "$@"\n' $t "$PWD" > $out/tc-turn$t
    chmod +x $out/tc-turn$t
  done
  for a in "16x16x1024x128" "4x16x4096x128" "1x16x16384x128"; do
    step 120 ab-$a python3 bench/bench_attention.py --old build/bin/tilec-check-head --old-define FTZ=0 \
      --rounds 3 --shape $a
    grep "^round" $out/ab-$a.txt
  done
  for a in "4x16x4096x128 --causal" "1x16x16384x128 --causal" "4x32x4096x64" "4x32x4096x64 --causal"; do
    n=$(echo $a | tr -d ' -')
    step 120 ab-$n python3 bench/bench_attention.py --old build/bin/tilec-check-head --rounds 3 --shape $a
    grep "^round" $out/ab-$n.txt
  done
  for a in "4x16x4096x128" "4x16x4096x128 --causal"; do
    n=$(echo $a | tr -d ' -')
    step 120 halves-$n python3 bench/bench_attention.py --tilec-check $out/tc-turn2 --old $out/tc-turn3 \
      --rounds 3 --shape $a
    grep "^round" $out/halves-$n.txt | sed "s/^/halves (tilec: first, old: second): /"
  done
  (cd $out && tar cJf all.tar.xz *.txt && rm -f *.txt)
fi
if [ "$mode" = turnc ]; then
  # (session 44) causal D = 128: the wait after either half of P (TILEC_X_TURN=2, 3) against
  # HEAD (FTZ = 1 there too, no wait computed from P) in the same rounds
  xz -dc .old/tilec-check-head.xz > build/bin/tilec-check-head && chmod +x build/bin/tilec-check-head
  for t in 2 3; do
    printf '#!/bin/sh\nTILEC_X_TURN=%s exec %s/build/bin/tilec-check "$@"\n' $t "$PWD" > build/bin/tc-turn$t
    chmod +x build/bin/tc-turn$t
    step 100 halfc-$t python3 bench/bench_attention.py --tilec-check build/bin/tc-turn$t \
      --old build/bin/tilec-check-head --rounds 2 --shape 4x16x4096x128 --causal
    grep "^round" $out/halfc-$t.txt | sed "s/^/TURN=$t: /"
  done
fi
if [ "$mode" = turnsweep ]; then
  step 300 sweep python3 bench/bench_attention_sweep.py --seqs 1024,4096,16384 --dims 128 --causal 0,1 \
    --rounds 2 --sustain 5 --csv $out/sweep.csv
  grep "TF/s" $out/sweep.txt
fi
if [ "$mode" = ftzd ]; then
  xz -dc .old/tilec-check-head.xz > build/bin/tilec-check-head && chmod +x build/bin/tilec-check-head
  for sh in 1x16x16384x128 4x16x4096x128; do
    step 100 f-$sh python3 bench/bench_attention.py --old build/bin/tilec-check-head --old-define FTZ=0 \
      --rounds 2 --shape $sh
    grep "^round" $out/f-$sh.txt
  done
fi
if [ "$mode" = turn ]; then
  head_and_checks
  for a in "--shape 4x16x4096x128 --define FTZ=0" "--shape 4x16x4096x128 --define FTZ=1" \
           "--shape 4x32x4096x64" "--shape 4x16x4096x128 --causal" "--shape 1x16x16384x128"; do
    n=$(echo $a | tr -d ' -' | tr '=' '_')
    step 100 t-$n python3 bench/bench_attention.py --old build/bin/tilec-check-head --rounds 3 $a
    grep "^round" $out/t-$n.txt | sed "s/^/$a: /"
  done
  tilec examples/attention.tile --kernel attention -D D=128 --emit=cubin -o $out/t0.cubin
  tilec examples/attention.tile --kernel attention -D D=128 -D FTZ=1 --emit=cubin -o $out/t1.cubin
  cuobjdump -sass $out/t0.cubin > $out/sass-t0.txt
  cuobjdump -sass $out/t1.cubin > $out/sass-t1.txt
  (cd $out && tar cJf all.tar.xz *.txt && rm -f *.txt *.cubin)
fi
if [ "$mode" = ftz2 ]; then
  printf '#!/bin/sh\nTILEC_X_EX2FTZ=1 exec %s/build/bin/tilec-check "$@"\n' "$PWD" > $out/tcex2
  chmod +x $out/tcex2
  $out/tcex2 examples/attention.tile --kernel attention -D D=128 --shape 6x333x517x128 2>&1 | grep -E "PASS|FAIL|rror"
  step 100 ex2-d128 python3 bench/bench_attention.py --tilec-check $out/tcex2 --old build/bin/tilec-check \
    --rounds 3 --shape 4x16x4096x128
  grep "^round" $out/ex2-d128.txt | sed "s/^/ex2 vs default: /"
  for f in 0 1; do
    sed "s/CAUSAL=0)/CAUSAL=0, FTZ=$f)/" bench/ncu_attention_once.py > $out/ncu_once_$f.py
    timeout 120 ncu --launch-skip 2 --launch-count 1 -k regex:attention --section SpeedOfLight \
      --section WarpStateStats --section InstructionStats --section SchedulerStats \
      --metrics sm__cycles_elapsed.avg,smsp__inst_executed.sum,sm__inst_executed_pipe_xu.sum \
      python3 $out/ncu_once_$f.py > $out/ncu-ftz$f.txt 2>&1
    grep -E "Duration|SM Frequency|Executed Instructions |Issue Slots Busy|Warp Cycles Per Issued|sm__cycles|Stall|No Eligible|Active Warps" $out/ncu-ftz$f.txt | head -16 | sed "s/^/FTZ=$f /"
  done
  cuobjdump -sass .old/attn128-ftz-old.cubin > $out/sass-ftz.txt
  tilec examples/attention.tile --kernel attention -D D=128 -D FTZ=1 --emit=cubin -o $out/ftz-new.cubin
  cuobjdump -sass $out/ftz-new.cubin > $out/sass-ftz-new.txt
  (cd $out && tar cJf all.tar.xz *.txt && rm -f *.txt *.cubin)
fi
if [ "$mode" = desc ]; then
  xz -dc .old/tilec-check-base.xz > build/bin/tilec-check-base && chmod +x build/bin/tilec-check-base
  for d in 64 128 256; do
    for c in 0 1; do
      tilec-check examples/attention.tile --kernel attention -D D=$d -D CAUSAL=$c --shape 6x333x517x$d 2>&1 \
        | grep -E "PASS|FAIL|rror"
    done
  done
  for sh in 300x200x1000 1300x700x600 1000x3000x777; do
    tilec-check examples/matmul.tile --kernel matmul --shape $sh 2>&1 | grep -E "PASS|FAIL|rror"
  done
  tilec-check examples/mlp.tile 2>&1 | grep -E "PASS|FAIL|rror" | head -5
  for sh in "4x16x4096x128" "4x16x4096x128 --causal" "4x32x4096x64" "1x16x16384x128"; do
    step 100 attn-${sh// /} python3 bench/bench_attention.py --old build/bin/tilec-check-base --rounds 3 --shape $sh
    grep "^round" $out/attn-${sh// /}.txt
  done
  for sh in 8192x8192x8192 4096x4096x4096; do
    step 100 mm-$sh bash bench/ab.sh build/bin/tilec-check-base build/bin/tilec-check 3 20 \
      examples/matmul.tile --kernel matmul --shape $sh --no-verify
    grep "BENCH tilec" $out/mm-$sh.txt
  done
  tilec examples/attention.tile --kernel attention -D D=128 --emit=cubin -o $out/new.cubin
  cuobjdump -sass $out/new.cubin > $out/sass-new.txt
  cuobjdump -sass .old/attn128-old.cubin > $out/sass-old.txt
  (cd $out && tar cJf all.tar.xz *.txt && rm -f *.txt *.cubin)
fi
if [ "$mode" = ftz ]; then
  printf '#!/bin/sh\nTILEC_X_EX2FTZ=1 exec %s/build/bin/tilec-check "$@"\n' "$PWD" > $out/tcex2
  chmod +x $out/tcex2
  for c in 0 1; do
    $out/tcex2 examples/attention.tile --kernel attention -D D=128 -D CAUSAL=$c --shape 6x333x517x128 2>&1 \
      | grep -E "PASS|FAIL|rror" | sed "s/^/ex2ftz C=$c: /"
  done
  step 100 ex2-d128 python3 bench/bench_attention.py --tilec-check $out/tcex2 --old build/bin/tilec-check \
    --rounds 3 --shape 4x16x4096x128
  grep "^round" $out/ex2-d128.txt | sed "s/^/ex2 vs default: /"
  step 100 ftz-d128 python3 bench/bench_attention.py --define FTZ=1 --old build/bin/tilec-check \
    --old-define FTZ=0 --rounds 3 --shape 4x16x4096x128
  grep "^round" $out/ftz-d128.txt | sed "s/^/FTZ=1 vs FTZ=0: /"
  step 100 ex2-d128c python3 bench/bench_attention.py --tilec-check $out/tcex2 --old build/bin/tilec-check \
    --define FTZ=0 --old-define FTZ=1 --rounds 2 --shape 4x16x4096x128 --causal
  grep "^round" $out/ex2-d128c.txt | sed "s/^/causal ex2 (FTZ=0) vs FTZ=1: /"
  for v in default ftz ex2; do
    a="-D D=128"; e=""
    [ $v = ftz ] && a="$a -D FTZ=1"
    [ $v = ex2 ] && e="TILEC_X_EX2FTZ=1"
    env $e tilec examples/attention.tile --kernel attention $a --emit=cubin -o $out/$v.cubin
    cuobjdump -sass $out/$v.cubin > $out/sass-$v.txt
    echo "$v: $(grep -cE '^\s+/\*[0-9a-f]+\*/' $out/sass-$v.txt) SASS instructions"
    grep -oE '^\s+/\*[0-9a-f]+\*/\s+(@!?U?P[0-9T] )?[A-Z0-9_.]+' $out/sass-$v.txt | awk '{print $NF}' \
      | sed 's/\..*//' | sort | uniq -c | sort -rn | head -14 | tr '\n' ' '; echo
  done
  for v in default ex2; do
    e=""; [ $v = ex2 ] && e="TILEC_X_EX2FTZ=1"
    env $e timeout 120 ncu --launch-skip 2 --launch-count 1 -k regex:attention --section SpeedOfLight \
      --section WarpStateStats --section InstructionStats --section ComputeWorkloadAnalysis \
      python3 bench/ncu_attention_once.py > $out/ncu-$v.txt 2>&1
    grep -E "Duration|Executed Instructions |Issue Slots Busy|SM Busy|Stall|Warp Cycles Per Issued" $out/ncu-$v.txt | head -12 | sed "s/^/$v /"
  done
  timeout 120 ncu --launch-skip 2 --launch-count 1 -k regex:"cudnn|sm90|fmha|flash" --section SpeedOfLight \
    --section WarpStateStats --section InstructionStats --section ComputeWorkloadAnalysis \
    python3 bench/ncu_attention_once.py > $out/ncu-cudnn.txt 2>&1
  grep -E "Duration|Executed Instructions |Issue Slots Busy|SM Busy|Stall|Warp Cycles Per Issued" $out/ncu-cudnn.txt | head -12 | sed "s/^/cudnn /"
fi
if [ "$mode" = regs ]; then
  for v in 40,232 24,240; do
    printf '#!/bin/sh\nTILEC_X_REGS=%s exec %s/build/bin/tilec-check "$@"\n' $v "$PWD" > $out/tc-$v
    chmod +x $out/tc-$v
  done
  for v in 40,232 24,240; do
    for p in 1 0; do
      for c in 0 1; do
        $out/tc-$v examples/attention.tile --kernel attention -D D=128 -D CAUSAL=$c -D PERSISTENT=$p \
          --shape 6x333x517x128 2>&1 | grep -E "PASS|FAIL|rror" | sed "s/^/$v P=$p C=$c: /"
      done
    done
  done
  for p in 1 0; do
    for v in 40,232 24,240; do
      step 100 attn-$v-p$p python3 bench/bench_attention.py --tilec-check $out/tc-$v \
        --old build/bin/tilec-check --rounds 3 --shape 4x16x4096x128 --define PERSISTENT=$p
      grep "^round" $out/attn-$v-p$p.txt | sed "s/^/$v P=$p /"
    done
  done
  step 100 attn-16k-40 python3 bench/bench_attention.py --tilec-check $out/tc-40,232 \
    --old build/bin/tilec-check --rounds 2 --shape 1x16x16384x128
  grep "^round" $out/attn-16k-40.txt | sed "s/^/16k 40,232 /"
  for args in "--shape 300x200x1000" "--shape 1300x700x600"; do
    tilec-check test/Target/Inputs/tf32-cluster.tile $args 2>&1 | grep -E "PASS|FAIL|rror"
  done
  step 100 tf32pair-racecheck compute-sanitizer --tool racecheck --error-exitcode 1 \
    tilec-check test/Target/Inputs/tf32-cluster.tile --shape 300x200x1000
fi
if [ "$mode" = tests ]; then
  LIT_OPTS="--max-time 380 --filter e2e/" step 400 e2e bash .device/gpu-tests.sh
  grep -E "^(FAIL|TIMEOUT):|Passed|Failed|Timed" $out/e2e.txt | head -20
fi
if [ "$mode" = pytests ]; then
  step 500 pytest-gpu python3 -m pytest -q python/tests/test_gpu.py
  tail -5 $out/pytest-gpu.txt
fi
