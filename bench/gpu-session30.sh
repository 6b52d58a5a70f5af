#!/usr/bin/env bash
# What session 30 built without a GPU (docs/performance.md, session 30), to
# run in one device call of a later session (after scripts/device-bundle.sh;
# carry .device):  bash bench/gpu-session30.sh OUTDIR
# Correctness first (GPU lit tests of the changed kernels, the GPU pytest
# cases, compute-sanitizer on the new kernels), then the speed of the new
# kernels against torch and of causal attention (its mask and epilogue
# changed) against cuDNN.
set -u
out=${1:?usage: gpu-session30.sh OUTDIR}
mkdir -p "$out"
LIT_OPTS="--filter e2e/(attention|mlp|matmul)\.test" bash .device/gpu-tests.sh > "$out/lit.txt" 2>&1
tail -5 "$out/lit.txt"
# gpu-tests.sh unpacked the binaries and libtilec into build/.
source bench/device-env.sh
python3 -m pytest -q python/tests/test_gpu.py -k "swiglu or matmul_tn or shared_operands or transposed_stores or attention" \
  > "$out/pytest.txt" 2>&1; tail -2 "$out/pytest.txt"
for tool in memcheck racecheck synccheck; do
  compute-sanitizer --tool $tool build/bin/tilec-check examples/mlp.tile --kernel swiglu --shape 200x300x130 > "$out/san-swiglu-$tool.txt" 2>&1
  compute-sanitizer --tool $tool build/bin/tilec-check examples/matmul.tile --kernel matmul_tn --shape 300x200x130 > "$out/san-tn-$tool.txt" 2>&1
  compute-sanitizer --tool $tool build/bin/tilec-check examples/attention.tile -D CAUSAL=1 --shape 2x300x100x64 > "$out/san-att-$tool.txt" 2>&1
  tail -1 "$out"/san-*-$tool.txt
done
cd bench
python3 bench_swiglu.py --rounds 2 --variant "BN128:BN=128" 2>&1 | tee "$out/swiglu.txt"
python3 bench_matmul_tn.py --rounds 2 --variant "BN128:BN=128" 2>&1 | tee "$out/matmul_tn.txt"
python3 bench_attention_sweep.py --rounds 2 --seqs 1024,4096,16384 --dims 64,128 --causal 1 \
  --csv "$out/attention-causal.csv" 2>&1 | tee "$out/attention-causal.txt"
