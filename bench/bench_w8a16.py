#!/usr/bin/env python3
"""A linear layer with int8 weights (examples/quantized.tile's linear_w8a16:
Y = X (Wq * s)^T, the int8 blocks staged by TMA and widened in the kernel)
next to torch: eager (widen the weight, scale it, cuBLAS), its
torch._weight_int8pack_mm where this torch has it on CUDA, torch.compile
of the eager form (with --compile), and the bf16 GEMM alone with an
unquantized weight (cuBLAS: the bar for a kernel that reads half the
weight bytes). bf16, one process, one CUDA-event loop, interleaved round
by round; TF/s count 2*M*N*K. Every output is checked against eager's.

usage: bench/bench_w8a16.py [--shapes MxKxN,...] [--rounds R] [--iters N]
                            [--variant NAME:K=V+K=V ...] [--sustain SECONDS]
                            [--compile]
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import compare_and_report, compare_setup, with_compile  # noqa: E402

args, libs = compare_setup(tilec, "quantized.tile", "16x4096x4096,256x4096x14336,4096x4096x4096",
                           extra=with_compile)


def dequant_linear(x, wq, s):
    return x @ (wq.to(x.dtype) * s[:, None].to(x.dtype)).t()


compiled = torch.compile(dequant_linear) if args.compile else None
for shape in args.shapes.split(","):
    M, K, N = (int(v) for v in shape.split("x"))
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    wq = torch.randint(-127, 128, (N, K), device="cuda", dtype=torch.int8)
    s = torch.rand(N, device="cuda") / 64
    w = (wq.float() * s[:, None]).bfloat16()
    outs = {name: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for name in libs}
    impls = {name: (lambda n=name: libs[n].linear_w8a16(x, wq, s, outs[n])) for name in libs}
    impls["torch eager"] = lambda: dequant_linear(x, wq, s)
    try:
        sb = s.bfloat16()
        torch._weight_int8pack_mm(x, wq, sb)
        impls["torch int8pack_mm"] = lambda: torch._weight_int8pack_mm(x, wq, sb)
    except (RuntimeError, AttributeError) as e:
        print(f"torch._weight_int8pack_mm: not available here ({str(e).splitlines()[0][:80]})")
    if compiled:
        impls["torch.compile"] = lambda: compiled(x, wq, s)
    impls["cuBLAS bf16 GEMM"] = lambda: x @ w.t()
    compare_and_report(shape, impls, outs, dequant_linear(x, wq, s).float(), 2.0 * M * N * K, args)
