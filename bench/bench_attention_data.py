#!/usr/bin/env python3
"""Whether attention's speed depends on its inputs: tilec (examples/attention.tile
through the Python package) and torch SDPA's cuDNN backend on the same tensors,
interleaved round by round, for two kinds of input:
  randn    q, k, v ~ N(0, 1), scale 1/sqrt(D) (what bench_attention_sweep.py
           and a model's attention see: a spread-out softmax)
  check    q, k, v uniform in [-2, 2), scale 1.0 (what tilec-check, and so
           bench_attention.py's tilec figure, uses: most probabilities of a
           row underflow to 0)
bf16 [B, H, S, D]; TF/s count 4*B*H*S*S*D (half with --causal).

usage: bench/bench_attention_data.py [--shape BxHxSxD] [--causal] [--rounds R] [--iters N]
"""
import argparse
import os
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import attention_bhsd, example_path, interleaved  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--shape", default="4x16x4096x128")
ap.add_argument("--causal", action="store_true")
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--iters", type=int, default=20)
args = ap.parse_args()
B, H, S, D = (int(v) for v in args.shape.split("x"))
flops = 4.0 * B * H * S * S * D * (0.5 if args.causal else 1.0)
lib = tilec.load(example_path("attention.tile"), D=D, CAUSAL=int(args.causal))
lse = torch.empty(B * H, S, device="cuda", dtype=torch.float32)
impls = {}
for kind in ("randn", "check"):
    if kind == "randn":
        q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        scale = D ** -0.5
    else:
        q, k, v = (torch.rand(B, H, S, D, device="cuda").mul(4).sub(2).to(torch.bfloat16)
                   for _ in range(3))
        scale = 1.0
    out = torch.empty_like(q)

    def run_tilec(q=q, k=k, v=v, out=out, scale=scale):
        return attention_bhsd(lib, q, k, v, out, lse, scale)

    def run_cudnn(q=q, k=k, v=v, scale=scale):
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            return torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=args.causal, scale=scale)
    run_tilec()
    want = run_cudnn().float()
    err = (out.float() - want).abs().max().item()
    assert err < 3e-2, f"{kind}: tilec differs from cuDNN by {err}"
    impls[f"tilec {kind}"] = run_tilec
    impls[f"cuDNN {kind}"] = run_cudnn
print(f"GPU: {torch.cuda.get_device_name()}  {args.shape}{' causal' if args.causal else ''}")
for name, ts in interleaved(impls, args.rounds, args.iters, 3).items():
    print(f"{name:14} " + "  ".join(f"{flops / (t * 1e-3) / 1e12:7.1f}" for t in ts) + " TF/s",
          flush=True)
