#!/usr/bin/env python3
"""CPU cost of one launch from Python (host enqueue, no sync, steady state)
of a 3-argument kernel on torch CUDA tensors: tilec's plain call
lib.saxpy(a, x, y), its prepared launcher (bind), and Triton's JIT launch of
the same saxpy, interleaved over rounds in one process. Each figure is the
median over rounds of (wall time of BATCH launches) / BATCH, with a
synchronize between batches outside the timing.

usage: bench/bench_launch_python.py [--rounds R] [--batch N]
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=30)
ap.add_argument("--batch", type=int, default=200)
args = ap.parse_args()

n = 4096
x = torch.randn(n, device="cuda")
y = torch.randn(n, device="cuda")
lib = tilec.load(os.path.join(os.path.dirname(__file__), "..", "examples", "saxpy.tile"))
saxpy = lib.saxpy
run = saxpy.bind(2.0, x, y)

impls = {"tilec call": lambda: saxpy(2.0, x, y), "tilec bind": run}
try:
    import triton
    import triton.language as tl

    @triton.jit
    def triton_saxpy(a, x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(y_ptr + i, a * tl.load(x_ptr + i, mask=m) + tl.load(y_ptr + i, mask=m), mask=m)

    grid = (triton.cdiv(n, 1024),)
    impls["triton"] = lambda: triton_saxpy[grid](2.0, x, y, n, BLOCK=1024)
except ImportError:
    pass
impls["torch y.add_(x, alpha=2)"] = lambda: y.add_(x, alpha=2.0)

for f in impls.values():  # warm-up (compiles, loads)
    for _ in range(50):
        f()
torch.cuda.synchronize()
times = {k: [] for k in impls}
for _ in range(args.rounds):
    for name, f in impls.items():
        t0 = time.perf_counter()
        for _ in range(args.batch):
            f()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        times[name].append((t1 - t0) / args.batch * 1e6)
for name, ts in times.items():
    ts.sort()
    print(f"LAUNCH {name}: median {ts[len(ts) // 2]:.2f} us, min {ts[0]:.2f} us "
          f"({args.rounds} rounds of {args.batch})")
