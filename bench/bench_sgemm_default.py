#!/usr/bin/env python3
"""f32 operands on the CUDA cores by default: examples/matmul.tile's matmul
called from Python with f32 tensors and nothing fixed (T inferred, the
@heuristic choosing the tile), next to cuBLAS SGEMM (torch.mm, TF32 off) in
the same process and rounds (A B A B), each result checked first.

usage: bench/bench_sgemm_default.py [--shapes MxNxK,...] [--rounds R] [--iters N] [--reps R]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
sys.path.insert(0, os.path.dirname(__file__))
import tilec  # noqa: E402
from benchlib import interleaved  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--shapes", default="2048x2048x2048,4096x4096x4096")
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--iters", type=int, default=20)
ap.add_argument("--reps", type=int, default=5)
args = ap.parse_args()
torch.backends.cuda.matmul.allow_tf32 = False
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
prog = tilec.load(os.path.join(root, "examples", "matmul.tile"), O="f32")
print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}  f32, TF32 off")
for shape in args.shapes.split(","):
    m, n, k = (int(v) for v in shape.split("x"))
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(k, n, device="cuda")
    c = torch.empty(m, n, device="cuda")
    c2 = torch.empty(m, n, device="cuda")
    prog.matmul(a, b, c)
    want = torch.mm(a.double(), b.double()).float()
    err = ((c - want).abs().max() / want.abs().max()).item()
    assert err < 1e-4, f"{shape}: max error {err:.3g} of the range"
    chosen = prog.matmul.choose(a, b, c)
    impls = {"tilec default": lambda: prog.matmul(a, b, c),
             "cuBLAS SGEMM": lambda: torch.mm(a, b, out=c2)}
    times = interleaved(impls, args.rounds, args.iters, args.reps)
    flops = 2.0 * m * n * k
    med = {name: sorted(ts)[len(ts) // 2] for name, ts in times.items()}
    for name, ts in times.items():
        print(f"{shape:>16} {name:14} {med[name]:8.4f} ms {flops / med[name] / 1e9:7.1f} TF/s "
              f"(rounds: {' '.join(f'{flops / t / 1e9:.1f}' for t in ts)})"
              + (f" {chosen}" if name.startswith("tilec") else ""))
    print(f"SUMMARY {shape} f32 default: {flops / med['tilec default'] / 1e9:.1f} TF/s, "
          f"cuBLAS SGEMM {flops / med['cuBLAS SGEMM'] / 1e9:.1f}: "
          f"{med['cuBLAS SGEMM'] / med['tilec default']:.3f}x")
