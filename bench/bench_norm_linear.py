#!/usr/bin/env python3
"""RMSNorm fused into the linear layer after it (examples/norm_linear.tile:
Y = rms_norm(X, g) W^T in one kernel, the blocks of X staged with W's and
read from the stage by the threads for their squares), next to torch:
eager (F.rms_norm, then cuBLAS), torch.compile of the same (with
--compile: Inductor's fused norm, then its GEMM choice), and the GEMM
alone (x @ W^T, cuBLAS: what the norm costs on top). Also the kernel with g
folded into W (rmsnorm_linear_folded). bf16, in one process and one
CUDA-event loop, interleaved round by round; TF/s count 2*M*N*K. Every
output is checked against eager's.

usage: bench/bench_norm_linear.py [--shapes MxKxN,...] [--rounds R] [--iters N]
                                  [--variant NAME:K=V+K=V ...] [--sustain SECONDS]
                                  [--compile]
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import compare_and_report, compare_setup, with_compile  # noqa: E402

args, libs = compare_setup(tilec, "norm_linear.tile", "8192x4096x6144,8192x4096x14336,4096x8192x8192",
                           extra=with_compile)
eps = 1e-5


def rms_linear(x, g, w):
    return F.linear(F.rms_norm(x, (x.shape[1],), g, eps), w)


compiled = torch.compile(rms_linear) if args.compile else None
for shape in args.shapes.split(","):
    M, K, N = (int(s) for s in shape.split("x"))
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    g = (1 + 0.1 * torch.randn(K, device="cuda")).bfloat16()
    w = (torch.randn(N, K, device="cuda") / K ** 0.5).bfloat16()
    wg = (w.float() * g.float()).bfloat16()
    outs = {name: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for name in libs}
    folded = {name: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for name in libs}

    impls = {name: (lambda n=name: libs[n].rmsnorm_linear(x, g, w, outs[n], eps)) for name in libs}
    impls.update({f"{name} folded": (lambda n=name: libs[n].rmsnorm_linear_folded(
        x, wg, folded[n], eps)) for name in libs})
    impls["torch eager"] = lambda: rms_linear(x, g, w)
    if compiled:
        impls["torch.compile"] = lambda: compiled(x, g, w)
    impls["cuBLAS GEMM alone"] = lambda: x @ w.t()
    outs.update({f"{name} folded": folded[name] for name in libs})
    compare_and_report(shape, impls, outs, rms_linear(x, g, w).float(), 2.0 * M * N * K, args)
