#!/usr/bin/env bash
# The main job: build, compile every kernel in examples/ to PTX for sm_90a
# (and assemble it with ptxas when the CUDA toolkit is present), then run each
# kernel that has a host reference on generated inputs and check it: on the
# GPU when one is present, otherwise on the CPU reference interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
scripts/setup.sh
out="$BUILD_DIR/examples"
mkdir -p "$out"
for f in examples/*.tile; do
  name=$(basename "$f" .tile)
  "$BUILD_DIR/bin/tilec" "$f" --arch=sm_90a -o "$out/$name.ptx"
  if [ -x /usr/local/cuda/bin/ptxas ]; then
    /usr/local/cuda/bin/ptxas -arch=sm_90a "$out/$name.ptx" -o "$out/$name.cubin"
    echo "compiled $f -> $out/$name.ptx (ptxas: ok)"
  else
    echo "compiled $f -> $out/$name.ptx"
  fi
done

mode=()
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "== running on the GPU"
  sizes=(--size 1 --size 1000 --size 1000003)
else
  echo "== no GPU: running on the CPU reference interpreter"
  mode=(--cpu)
  sizes=(--size 1 --size 1000 --size 100003)
fi
check="$BUILD_DIR/bin/tilec-check"
status=0
for T in f32 f16 bf16; do
  # Row kernels hold a whole row in one tile: BN must cover the 3000 columns.
  "$check" "${mode[@]}" -D T=$T "${sizes[@]}" examples/vadd.tile examples/saxpy.tile \
    examples/mathmix.tile examples/loops.tile examples/activations.tile || status=1
  "$check" "${mode[@]}" -D T=$T --shape 1000x3000 examples/fused2d.tile || status=1
  "$check" "${mode[@]}" -D T=$T -D BN=4096 --shape 1000x3000 examples/softmax.tile \
    examples/layernorm.tile examples/argmax.tile || status=1
done
"$check" "${mode[@]}" "${sizes[@]}" examples/bits.tile examples/histogram.tile \
  examples/prefix_sum.tile || status=1
"$check" "${mode[@]}" "${sizes[@]}" examples/helpers.tile examples/segment_sum.tile examples/mask.tile || status=1
"$check" "${mode[@]}" "${sizes[@]}" -D BN=4096 -D R=2 --shape 1000x3000 examples/combine.tile || status=1
for T in f32 bf16; do
  "$check" "${mode[@]}" -D T=$T --shape 1000x1000 examples/gate.tile examples/transpose.tile \
    examples/rowstats.tile || status=1
  "$check" "${mode[@]}" -D T=$T --shape 1001x64 examples/fold.tile || status=1
  "$check" "${mode[@]}" -D T=$T --shape 300x1000 --size 1000 examples/gather_scatter.tile || status=1
done
# Tensor-core matmul (sm_90a): the issue's edge shape; the CPU interpreter
# gets a smaller one (it multiplies in a plain loop).
if [ ${#mode[@]} = 0 ]; then mm=(--shape 1000x3000x777 --shape 1x4096x4096); bm=(--shape 4x1000x600x777)
else mm=(--shape 130x300x70); bm=(--shape 2x130x300x70); fi
for T in bf16 f16; do
  "$check" "${mode[@]}" -D T=$T "${mm[@]}" --kernel matmul examples/matmul.tile || status=1
done
"$check" "${mode[@]}" "${mm[@]}" --kernel matmul_bias_gelu examples/matmul.tile || status=1
"$check" "${mode[@]}" "${mm[@]}" --kernel matmul_scaled examples/matmul.tile || status=1
"$check" "${mode[@]}" "${mm[@]}" --kernel matmul_persistent examples/matmul.tile || status=1
"$check" "${mode[@]}" "${bm[@]}" --kernel bmm examples/matmul.tile || status=1
# C = A W^T (W stored N x K, torch.nn.Linear's weight) in bf16 and TF32, and
# a decode step's skinny tile (multiplied as B^T A^T on sm_90a).
"$check" "${mode[@]}" "${mm[@]}" --kernel matmul_nt examples/matmul.tile || status=1
"$check" "${mode[@]}" "${mm[@]}" --kernel matmul_tf32_nt examples/matmul.tile || status=1
# C = A^T B (A stored K x M, a weight gradient): a read MN-major.
"$check" "${mode[@]}" "${mm[@]}" --kernel matmul_tn examples/matmul.tile || status=1
"$check" "${mode[@]}" -D BM=16 -D BN=64 "${mm[@]}" --kernel matmul examples/matmul.tile || status=1
# A softmax epilogue over the accumulator's rows, in registers.
"$check" "${mode[@]}" "${mm[@]}" examples/matmul_softmax.tile || status=1
# FlashAttention forward: two mmas per iteration, the softmax in registers.
if [ ${#mode[@]} = 0 ]; then at=(--shape 4x1000x777x64 --shape 2x2048x2048x64)
else at=(--shape 2x200x300x64); fi
"$check" "${mode[@]}" "${at[@]}" examples/attention.tile || status=1
"$check" "${mode[@]}" "${at[@]}" -D CAUSAL=1 -D T=f16 examples/attention.tile || status=1
# Its backward: Delta, dK and dV, dQ (a staged tile read as loaded and transposed).
"$check" "${mode[@]}" "${at[@]}" examples/attention_backward.tile || status=1
"$check" "${mode[@]}" "${at[@]}" -D CAUSAL=1 examples/attention_backward.tile || status=1
# The fused MLP: the hidden block stays in registers between two mmas.
if [ ${#mode[@]} = 0 ]; then ml=(--shape 1000x100x700x300 --shape 4096x128x1024x512)
else ml=(--shape 200x128x192x128); fi
"$check" "${mode[@]}" "${ml[@]}" --kernel mlp examples/mlp.tile || status=1
# The gated projection: one loaded tile of x feeds two mmas.
"$check" "${mode[@]}" "${mm[@]}" --kernel swiglu examples/mlp.tile || status=1
# Chained products: the MLP for any input width (an mma after an mma loop,
# in the loop over hidden blocks) and a LoRA layer (after the loop over K).
if [ ${#mode[@]} = 0 ]; then mw=(--shape 1000x1024x700x300); lr=(--shape 1000x3000x777x16 --shape 4096x4096x4096x8)
else mw=(--shape 200x300x130x150); lr=(--shape 200x300x130x16 --shape 130x64x100x8); fi
"$check" "${mode[@]}" "${mw[@]}" --kernel mlp_wide examples/mlp.tile || status=1
"$check" "${mode[@]}" "${lr[@]}" examples/lora.tile || status=1
# RMSNorm fused into the linear layer after it: a staged block of X read by
# the threads (its squares) and by the mma.
if [ ${#mode[@]} = 0 ]; then nl=(--shape 1000x3000x777 --shape 4096x4096x4096)
else nl=(--shape 200x300x130 --shape 130x64x100); fi
"$check" "${mode[@]}" "${nl[@]}" examples/norm_linear.tile || status=1
# int8 weights: staged, widened by the threads, the mma's b from shared memory.
"$check" "${mode[@]}" "${nl[@]}" examples/quantized.tile || status=1
# f32 on the CUDA cores (the pipelined fma path on sm_90a).
"$check" "${mode[@]}" -D T=f32 -D BM=128 -D BN=128 -D BK=32 "${mm[@]}" --kernel matmul \
  examples/matmul.tile || status=1
[ $status = 0 ] && echo "all examples matched their host references"
exit $status
