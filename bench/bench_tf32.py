#!/usr/bin/env python3
"""TF32 matmuls (f32 in and out): tilec's matmul_tf32_nt (W stored N x K,
wgmma m64nNk8 on sm_90a) against cuBLAS's TF32 (torch.mm with
torch.backends.cuda.matmul.allow_tf32 = True) on the same operands, in the
same process and timing loop (CUDA events around --reps back-to-back
calls, medians of --iters, implementations interleaved round by round).
Layouts of the second operand: "nt" (W row-major N x K, torch.mm(A,
W.t()), tilec's matmul_tf32_nt), "nn" (B row-major K x N, torch.mm(A, B),
tilec's matmul_tf32: B^T A^T with B^T in registers) and "nnview" (the same
B given to matmul_tf32_nt as B.t(), a view with inner stride N that TMA
cannot copy: its producer copies it).
Each result is first checked against an f32 product.

usage: bench/bench_tf32.py [--shapes MxNxK,...] [--layouts nt,nn]
                           [--configs BMxBN[:STAGES]|default,...] [--rounds R]
("default": the kernel's own @heuristic choice)
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import interleaved  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--shapes", default="2048x2048x2048,4096x4096x4096")
ap.add_argument("--layouts", default="nt,nn")
ap.add_argument("--configs", default="128x256,128x128")
# matmul_tf32's tiles: BM rows of a are wgmma's N (up to 256), BN columns of
# b its M (64 per consumer warpgroup).
ap.add_argument("--iters", type=int, default=20)
ap.add_argument("--reps", type=int, default=10)
ap.add_argument("--rounds", type=int, default=3)
args = ap.parse_args()

torch.backends.cuda.matmul.allow_tf32 = True
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
mm = tilec.load(os.path.join(root, "examples", "matmul.tile"))
print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}")
for shape in args.shapes.split(","):
    m, n, k = (int(v) for v in shape.split("x"))
    a = torch.rand(m, k, device="cuda") * 4 - 2
    for layout in args.layouts.split(","):
        if layout == "nt":
            w = torch.rand(n, k, device="cuda") * 4 - 2
            second = w.t()
        else:
            b = torch.rand(k, n, device="cuda") * 4 - 2
            w, second = (b.t() if layout == "nnview" else b), b
        kernel = mm.matmul_tf32 if layout == "nn" else mm.matmul_tf32_nt
        torch.backends.cuda.matmul.allow_tf32 = False
        want = torch.mm(a, second)
        torch.backends.cuda.matmul.allow_tf32 = True
        c_ref = torch.empty(m, n, device="cuda")
        impls = {"cuBLAS TF32": lambda: torch.mm(a, second, out=c_ref)}
        for cfg in args.configs.split(","):
            if cfg == "default":  # the kernel's @heuristic
                kern = kernel
            else:
                parts = cfg.split(":")
                bm, bn = (int(v) for v in parts[0].split("x"))
                stages = int(parts[1]) if len(parts) > 1 else 0
                kern = kernel.with_defines(BM=bm, BN=bn, STAGES=stages)
            c = torch.empty(m, n, device="cuda")
            kern(a, w, c)
            err = ((c - want).abs().max() / want.abs().max()).item()
            print(f"{shape:>16} {layout} tilec {cfg}: error {err:.2e} of the range")
            impls[f"tilec {cfg}"] = (lambda kern=kern, c=c: kern(a, w, c))
        torch.mm(a, second, out=c_ref)
        err = ((c_ref - want).abs().max() / want.abs().max()).item()
        print(f"{shape:>16} {layout} cuBLAS TF32: error {err:.2e} of the range")
        times = interleaved(impls, args.rounds, args.iters, args.reps)
        flops = 2.0 * m * n * k
        best = None
        for name, ts in times.items():
            ms = sorted(ts)[len(ts) // 2]
            print(f"{shape:>16} {layout} {name:24} {ms:9.4f} ms {flops / (ms * 1e-3) / 1e12:8.1f} "
                  f"TF/s (rounds: {' '.join(f'{t:.4f}' for t in ts)})")
            if name.startswith("tilec") and (best is None or ms < best[1]):
                best = (name, ms)
        cub = sorted(times["cuBLAS TF32"])[len(times["cuBLAS TF32"]) // 2]
        print(f"SUMMARY {shape} {layout}: best {best[0]} {flops / (best[1] * 1e-3) / 1e12:.1f} "
              f"TF/s, cuBLAS TF32 {flops / (cub * 1e-3) / 1e12:.1f} TF/s: {cub / best[1]:.3f}x")
