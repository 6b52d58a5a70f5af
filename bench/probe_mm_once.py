#!/usr/bin/env python3
"""One call of tilec's matmul and one of torch.mm on the same operands, for
Nsight Compute (`ncu --kernel-name regex:... python3 bench/probe_mm_once.py
MxNxK CONFIG`). CONFIG is KERNEL:BMxBN with KERNEL matmul or
matmul_persistent (randn bf16 operands) or matmul_tf32 (f32 operands
uniform in [-2, 2), B row-major K x N, torch.mm with allow_tf32)."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402

m, n, k = (int(v) for v in sys.argv[1].split("x"))
kind, tile = (sys.argv[2] if len(sys.argv) > 2 else "matmul:128x256").split(":")
bm, bn = (int(v) for v in tile.split("x"))
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
if kind == "matmul_tf32":
    torch.backends.cuda.matmul.allow_tf32 = True
    kern = tilec.load(os.path.join(root, "examples", "matmul.tile")).matmul_tf32.with_defines(
        BM=bm, BN=bn)
    a = torch.rand(m, k, device="cuda") * 4 - 2
    b = torch.rand(k, n, device="cuda") * 4 - 2
    c = torch.empty(m, n, device="cuda")
else:
    prog = tilec.load(os.path.join(root, "examples", "matmul.tile"), O="bf16").with_defines(
        BM=bm, BN=bn)
    kern = prog.matmul if kind == "matmul" else prog.matmul_persistent
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
kern(a, b, c)
torch.mm(a, b)
torch.cuda.synchronize()
