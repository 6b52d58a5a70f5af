#!/usr/bin/env python3
"""Column statistics in a matmul's epilogue (examples/matmul_stats.tile:
Y = A * B in bf16 with the sum and the sum of squares of each column over
each block of 128 rows, BatchNorm-style) next to the same work in torch
(cuBLAS bf16 matmul, then the two reductions of Y in f32) and next to
tilec's and cuBLAS's plain bf16 matmul (what the statistics cost), and
matmul_quant_cols (f8e4m3 output with 128x1 block scales) next to torch's
mm + amax + scale + cast. Interleaved (A B A B) in one process, CUDA-event
medians; TF/s counts 2*M*N*K. Each result is checked against torch first.

usage: bench/bench_colstats.py [--shapes MxNxK,...] [--rounds R] [--iters I] [--reps P]
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import bench_args, example_path, interleaved  # noqa: E402

args = bench_args("8192x8192x8192,4096x4096x4096,8192x8192x1024", rounds=3, reps=5)

stats = tilec.load(example_path("matmul_stats.tile"))
mm = tilec.load(example_path("matmul.tile"), O="bf16")
print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}")
for shape in args.shapes.split(","):
    m, n, k = (int(v) for v in shape.split("x"))
    blocks = (m + 127) // 128
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    s = torch.empty(blocks, n, device="cuda")
    q = torch.empty(blocks, n, device="cuda")
    y8 = torch.empty(m, n, device="cuda", dtype=torch.float8_e4m3fn)
    sy = torch.empty(blocks, n, device="cuda")
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)

    def torch_stats():
        # cuBLAS's bf16 result, then the statistics of it in f32 (the kernel
        # takes them from its f32 products before rounding).
        yt = torch.mm(a, b)
        yf = torch.nn.functional.pad(yt.float(), (0, 0, 0, blocks * 128 - m)).view(blocks, 128, n)
        return yt, yf.sum(1), (yf * yf).sum(1)

    def torch_quant():
        acc = torch.nn.functional.pad(torch.mm(a, b).float(), (0, 0, 0, blocks * 128 - m))
        amax = acc.view(blocks, 128, n).abs().amax(1)
        scale = torch.where(amax > 0, amax / 448.0, torch.ones_like(amax))
        rows = torch.arange(m, device="cuda") // 128
        return (acc[:m] / scale[rows]).to(torch.float8_e4m3fn), scale

    stats.matmul_colstats(a, b, y, s, q)
    prod = torch.nn.functional.pad(a.float() @ b.float(), (0, 0, 0, blocks * 128 - m))
    pf = prod.view(blocks, 128, n)
    torch.testing.assert_close(y.float(), prod[:m], rtol=2e-2, atol=2e-1)
    torch.testing.assert_close(s, pf.sum(1), rtol=1e-3, atol=1e-3 * k ** 0.5 * 16)
    torch.testing.assert_close(q, (pf * pf).sum(1), rtol=1e-3, atol=1e-3 * k * 128)
    del prod, pf
    stats.matmul_quant_cols(a, b, y8, sy)
    t8, tsy = torch_quant()
    torch.testing.assert_close(sy, tsy, rtol=1e-2, atol=0)
    impls = {
        "cuBLAS torch.mm": lambda: torch.mm(a, b),
        "tilec matmul": lambda: mm.matmul(a, b, c),
        "torch mm + stats": torch_stats,
        "tilec matmul_colstats": lambda: stats.matmul_colstats(a, b, y, s, q),
        "torch mm + quant": torch_quant,
        "tilec matmul_quant_cols": lambda: stats.matmul_quant_cols(a, b, y8, sy),
    }
    times = interleaved(impls, args.rounds, args.iters, args.reps)
    flops = 2.0 * m * n * k
    med = {}
    for name, t in times.items():
        ms = sorted(t)[len(t) // 2]
        med[name] = ms
        print(f"{shape:>16} {name:26} {ms:9.4f} ms {flops / (ms * 1e-3) / 1e12:8.1f} TF/s")
    print(f"SUMMARY {shape}: colstats {med['torch mm + stats'] / med['tilec matmul_colstats']:.2f}x "
          f"torch, {med['tilec matmul'] / med['tilec matmul_colstats']:.3f} of tilec's plain matmul; "
          f"quant_cols {med['torch mm + quant'] / med['tilec matmul_quant_cols']:.2f}x torch")
