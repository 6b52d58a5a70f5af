#!/usr/bin/env python3
"""C = A^T B with A stored K x M (a weight gradient dW = X^T dY from the
activations as they are): examples/matmul.tile's matmul_tn (a read MN-major
from where TMA staged it) next to torch's x.t() @ dy (cuBLAS, which takes
the transpose as a layout flag), bf16 in, bf16 out, in one process and one
CUDA-event loop, interleaved round by round; TF/s count 2*M*N*K. Every
output is checked against torch's first.

usage: bench/bench_matmul_tn.py [--shapes MxNxK,...] [--rounds R]
                                [--variant NAME:K=V+K=V ...] [--sustain SECONDS]
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import compare_and_report, compare_setup  # noqa: E402

args, libs = compare_setup(tilec, "matmul.tile",
                           "4096x4096x4096,8192x8192x8192,4096x14336x8192,1024x4096x16384",
                           O="bf16")
for shape in args.shapes.split(","):
    M, N, K = (int(s) for s in shape.split("x"))
    x = torch.randn(K, M, device="cuda", dtype=torch.bfloat16)
    dy = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    outs = {name: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for name in libs}
    impls = {name: (lambda n=name: libs[n].matmul_tn(x, dy, outs[n])) for name in libs}
    impls["torch (cuBLAS)"] = lambda: x.t() @ dy
    compare_and_report(shape, impls, outs, (x.t() @ dy).float(), 2.0 * M * N * K, args)
