"""Launches examples/attention.tile's `attention` and torch SDPA's cuDNN
backend three times each at B4 H16 S4096 D128 (bf16), for Nsight Compute:
    ncu --launch-skip 2 --launch-count 1 -k regex:attention --section ... \
        python3 bench/ncu_attention_once.py
(docs/performance.md, session 29, run 4)."""
import os
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import attention_bhsd  # noqa: E402

B, H, S, D = 4, 16, 4096, 128
lib = tilec.load(os.path.join(os.path.dirname(__file__), "..", "examples", "attention.tile"),
                 D=D, CAUSAL=0)
q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
o = torch.empty_like(q)
lse = torch.empty(B * H, S, device="cuda")
for _ in range(3):
    attention_bhsd(lib, q, k, v, o, lse, D ** -0.5)
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
    for _ in range(3):
        torch.nn.functional.scaled_dot_product_attention(q, k, v)
torch.cuda.synchronize()
