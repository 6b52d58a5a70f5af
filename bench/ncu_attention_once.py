"""Launches examples/attention.tile's `attention` and one torch SDPA backend
three times each (bf16, B H S D below), for Nsight Compute:
    ncu --launch-skip 2 --launch-count 1 -k regex:attention --section ... \
        python3 bench/ncu_attention_once.py [--arch sm_80] [--backend flash] [--shape 4x16x4096x128]
(docs/performance.md, session 29, run 4; --arch and --backend since session 46:
the sm_80 kernel against FlashAttention-2, torch's FLASH_ATTENTION backend;
--define NAME=VALUE since session 60: tilec's kernel at other tiles, e.g.
FA2's own 128 x 64 with STAGES = 1 at D = 192)."""
import argparse
import os
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import attention_bhsd  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--arch", default="sm_90a")
ap.add_argument("--backend", default="cudnn", choices=["cudnn", "flash"])
ap.add_argument("--shape", default="4x16x4096x128", help="BxHxSxD")
ap.add_argument("--define", action="append", default=[], help="NAME=VALUE for tilec's kernel")
args = ap.parse_args()
B, H, S, D = (int(v) for v in args.shape.split("x"))
lib = tilec.load(os.path.join(os.path.dirname(__file__), "..", "examples", "attention.tile"),
                 arch=args.arch, D=D, CAUSAL=0,
                 **{d.split("=")[0]: int(d.split("=")[1]) for d in args.define})
q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
o = torch.empty_like(q)
lse = torch.empty(B * H, S, device="cuda")
for _ in range(3):
    attention_bhsd(lib, q, k, v, o, lse, D ** -0.5)
backend = SDPBackend.CUDNN_ATTENTION if args.backend == "cudnn" else SDPBackend.FLASH_ATTENTION
with sdpa_kernel(backend):
    for _ in range(3):
        torch.nn.functional.scaled_dot_product_attention(q, k, v)
torch.cuda.synchronize()
