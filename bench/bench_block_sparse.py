#!/usr/bin/env python3
"""Block-sparse C = A B (python/tests/block_sparse.tile's block_sparse: the
mma in `if load(Mask, [m, k]) != 0 { ... }`, skipped for the blocks of A
whose flag is 0) next to the dense products a user has instead: torch.mm
(cuBLAS) and tilec's own dense matmul (examples/matmul.tile), at
densities 1, 0.5, 0.25 and 0.1 of A's 128 x 64 blocks (random, each row
of blocks the same count). bf16 in, f32 out (the dense peers bf16 out).
One process, one CUDA-event loop, interleaved round by round. Printed:
ms per call and TF/s of the work done (2 M N K times the density; the
dense peers count 2 M N K). The sparse output is checked against torch
on the masked A.

usage: bench/bench_block_sparse.py [--shapes MxKxN,...] [--rounds R] [--iters N]
"""
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "python"))
import tilec  # noqa: E402
from benchlib import bench_args, example_path, interleaved  # noqa: E402

args = bench_args("4096x4096x4096,8192x8192x8192")
print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}")
sparse = tilec.load(os.path.join(here, "..", "python", "tests", "block_sparse.tile"))
dense = tilec.load(example_path("matmul.tile"))
for shape in args.shapes.split(","):
    M, K, N = (int(v) for v in shape.split("x"))
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16) / K ** 0.5
    rows, kb = M // 128, K // 64
    impls, flops = {}, {}
    c_dense = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    impls["torch.mm dense"] = lambda: torch.mm(a, b)
    flops["torch.mm dense"] = 2.0 * M * N * K
    impls["tilec dense"] = lambda: dense.matmul(a, b, c_dense)
    flops["tilec dense"] = 2.0 * M * N * K
    for density in (1.0, 0.5, 0.25, 0.1):
        keep = max(1, round(kb * density))
        mask = torch.zeros(rows, kb, dtype=torch.int32)
        for i in range(rows):
            mask[i, torch.randperm(kb)[:keep]] = 1
        mask = mask.cuda()
        c = torch.empty(M, N, device="cuda")
        name = f"tilec sparse {density:g}"
        impls[name] = lambda mask=mask, c=c: sparse.block_sparse(a, b, mask, c)
        flops[name] = 2.0 * M * N * K * keep / kb
        impls[name]()
        torch.cuda.synchronize()
        full = mask.bool().repeat_interleave(128, 0).repeat_interleave(64, 1)
        want = (a * full).float() @ b.float()
        err = ((c - want).abs().max() / want.abs().max()).item()
        assert err < 2e-2, f"{name} {shape}: relative error {err}"
    times = interleaved(impls, args.rounds, args.iters, args.reps)
    for name, ts in times.items():
        print(f"{shape:16} {name:18} " + "  ".join(f"{t:7.3f} ms" for t in ts) + "   "
              + "  ".join(f"{flops[name] / (t * 1e-3) / 1e12:6.1f}" for t in ts) + " TF/s",
              flush=True)
