#!/usr/bin/env python3
"""The gated projection of a LLaMA MLP, H = silu(X Wg^T) * (X Wu^T)
(examples/mlp.tile's swiglu: X staged once for both mmas, the products meet
in registers), next to torch: eager (two cuBLAS GEMMs, silu, multiply) and
one cuBLAS GEMM over the concatenated weights [Wg; Wu] followed by the
elementwise part (how fused gate/up layers are usually run). bf16, in one
process and one CUDA-event loop, interleaved round by round (A B C A B C);
TF/s count 4*M*N*K. Every output is checked against eager's first.

usage: bench/bench_swiglu.py [--shapes MxKxN,...] [--rounds R] [--iters N]
                             [--variant NAME:K=V+K=V ...] [--sustain SECONDS]
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import compare_and_report, compare_setup  # noqa: E402

args, libs = compare_setup(tilec, "mlp.tile", "8192x4096x14336,4096x4096x11008,2048x8192x28672")
for shape in args.shapes.split(","):
    M, K, N = (int(s) for s in shape.split("x"))
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    wg, wu = (torch.randn(N, K, device="cuda", dtype=torch.bfloat16) / K ** 0.5 for _ in range(2))
    wgu = torch.cat([wg, wu])
    outs = {name: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for name in libs}

    def eager():
        return F.silu(x @ wg.t()) * (x @ wu.t())

    def concatenated():
        gu = x @ wgu.t()
        return F.silu(gu[:, :N]) * gu[:, N:]

    impls = {name: (lambda n=name: libs[n].swiglu(x, wg, wu, outs[n])) for name in libs}
    impls.update({"torch eager": eager, "torch one GEMM": concatenated})
    compare_and_report(shape, impls, outs, eager().float(), 4.0 * M * N * K, args)
