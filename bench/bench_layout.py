#!/usr/bin/env python3
"""examples/attention.tile on torch's two layouts from Python: [B, H, S, D]
(viewed [B * H, S, D]) and [B, S, H, D] (LAYOUT = 1, viewed [B, S, H * D]),
the same data, interleaved in one timing loop with cuDNN (torch SDPA);
TF/s count 4 * B * H * S * S * D.

usage: bench/bench_layout.py [--shape BxHxSxD] [--rounds R]
"""
import argparse
import os
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import interleaved  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--shape", default="4x16x4096x128")
ap.add_argument("--rounds", type=int, default=3)
args = ap.parse_args()
B, H, S, D = (int(x) for x in args.shape.split("x"))
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "attention.tile")
q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
qs, ks, vs = (t.transpose(1, 2).contiguous() for t in (q, k, v))   # [B, S, H, D]
o, os_ = torch.empty_like(q), torch.empty_like(qs)
lse = torch.empty(B * H, S, device="cuda")
scale = D ** -0.5
bhsd = tilec.load(root, D=D).attention.bind(q.view(B * H, S, D), k.view(B * H, S, D),
                                            v.view(B * H, S, D), o.view(B * H, S, D), lse, scale)
bshd = tilec.load(root, D=D, LAYOUT=1).attention.bind(qs.view(B, S, H * D), ks.view(B, S, H * D),
                                                      vs.view(B, S, H * D), os_.view(B, S, H * D),
                                                      lse, scale)


def cudnn():
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)


impls = {"tilec [B, H, S, D]": bhsd, "tilec [B, S, H, D] (LAYOUT=1)": bshd, "cuDNN (SDPA)": cudnn}
for f in impls.values():
    f()
torch.testing.assert_close(os_.transpose(1, 2), o, rtol=0, atol=0)
times = interleaved(impls, args.rounds, 20)
flops = 4.0 * B * H * S * S * D
for n, ts in times.items():
    ms = sorted(ts)[len(ts) // 2]
    print(f"LAYOUT {args.shape} {n:32} {ms:8.4f} ms {flops / (ms * 1e-3) / 1e12:7.1f} TF/s")
