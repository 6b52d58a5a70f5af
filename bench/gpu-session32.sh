#!/usr/bin/env bash
# What sessions 30-32 left unrun on the GPU (docs/performance.md, session
# 32), in two device calls of under 10 minutes each, after
# scripts/device-bundle.sh (carry .device):
#   bash bench/gpu-session32.sh tests OUTDIR   the GPU lit cases of sessions
#       30-31 (the e2e attention, mlp and matmul tests, which lit's 95 s
#       limit cut in session 32, and the backward's at D = 128 with
#       tilec-check's fixed reference), compute-sanitizer on the kernels of
#       sessions 30-31;
#   bash bench/gpu-session32.sh bench OUTDIR   the attention backward against
#       cuDNN and FLASH_ATTENTION, the causal forward sweep, swiglu and
#       matmul_tn against torch, and the D = 128 forward in tilec-check's
#       loop and in the sweep's in the same call (612 against 540-555 TF/s).
# Every step has a time limit, so that one hang cannot take the call.
# (tests: also varlen_check on bad offsets, which must fail with its message.)
set -u
part=${1:?usage: gpu-session32.sh tests|bench OUTDIR}
out=${2:?usage: gpu-session32.sh tests|bench OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd) # absolute: the bench part runs in bench/
LIT_OPTS="--filter xyz_none" bash .device/gpu-tests.sh > /dev/null 2>&1
source bench/device-env.sh
if [ "$part" = tests ]; then
  LIT_OPTS="--max-time 170 --filter e2e/(attention|mlp|matmul|attention-backward)\.test" \
    step 180 lit bash .device/gpu-tests.sh
  # varlen_check on bad offsets must fail its launch (CUDA_ERROR_ASSERT)
  # with the rule's message; expected: rc != 0 and the message in the file.
  step 40 varlen-check-bad python3 -c "import torch, tilec
lib = tilec.load('examples/attention.tile')
cu = torch.tensor([0, 5, 3, 9], dtype=torch.int32, device='cuda')
lib.varlen_check(cu, cu, 9, 9, 10, 10)
torch.cuda.synchronize()"
  small="import sys, torch; sys.path.insert(0, 'python/tests'); import common"
  for tool in memcheck racecheck synccheck; do
    step 45 "san-bwd-$tool" compute-sanitizer --tool $tool build/bin/tilec-check \
      examples/attention_backward.tile -D CAUSAL=1 --shape 2x200x150x64
    step 35 "san-computed-$tool" compute-sanitizer --tool $tool python3 -c \
      "$small; common.computed_operand_check(torch, arch='sm_90a', device='cuda')"
    step 30 "san-swiglu-$tool" compute-sanitizer --tool $tool build/bin/tilec-check \
      examples/mlp.tile --kernel swiglu --shape 200x300x130
  done
else
  cd bench
  step 130 bwd python3 bench_attention_backward.py --rounds 2
  step 100 bwd-causal python3 bench_attention_backward.py --rounds 2 --causal 1 \
    --shapes 4x16x4096x64,4x16x4096x128
  step 120 fwd-causal python3 bench_attention_sweep.py --rounds 2 --seqs 1024,4096,16384 \
    --dims 64,128 --causal 1 --csv "$out/attention-causal.csv"
  step 60 fwd-d128 python3 bench_attention_sweep.py --rounds 2 --seqs 4096 --dims 128 --causal 0 \
    --csv "$out/attention-d128.csv"
  step 30 fwd-d128-tilec-check ../build/bin/tilec-check ../examples/attention.tile \
    --kernel attention -D D=128 --shape 64x4096x4096x128 --no-verify --bench 30
  step 60 swiglu python3 bench_swiglu.py --rounds 2 --variant "BN128:BN=128"
  step 60 matmul_tn python3 bench_matmul_tn.py --rounds 2 --variant "BN128:BN=128"
fi
