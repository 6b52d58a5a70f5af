#!/usr/bin/env python3
"""CPU cost of one launch from Python (host enqueue, no sync, steady state)
of a 3-argument kernel on torch CUDA tensors: tilec's plain call
lib.saxpy(a, x, y), its prepared launcher (bind), and Triton's JIT launch of
the same saxpy, interleaved over rounds in one process. Each figure is the
median over rounds of (wall time of BATCH launches) / BATCH, with a
synchronize between batches outside the timing.

Then the parts of the plain call (packing the arguments in Python, the C
launch of packed bytes) and a training-style loop: --loop iterations of
three dependent small launches (y = 2x + y, x = 0.5y + x, y = 2x + y) and a
synchronize, wall time per loop for tilec (call and bind), Triton and torch
eager, interleaved over rounds.

usage: bench/bench_launch_python.py [--rounds R] [--batch N] [--loop N]
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
ap.add_argument("--loop", type=int, default=1000)
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


def per_call_us(fns):
    """Per name: sorted CPU microseconds per call, one figure per round
    (a batch of back-to-back calls, synchronized after, outside the time)."""
    times = {k: [] for k in fns}
    for _ in range(args.rounds):
        for name, f in fns.items():
            t0 = time.perf_counter()
            for _ in range(args.batch):
                f()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            times[name].append((t1 - t0) / args.batch * 1e6)
    return {k: sorted(v) for k, v in times.items()}


for name, ts in per_call_us(impls).items():
    print(f"LAUNCH {name}: median {ts[len(ts) // 2]:.2f} us, min {ts[0]:.2f} us "
          f"({args.rounds} rounds of {args.batch})")

# The plain call's parts: Python packing, and the C launch of packed bytes.
packed = saxpy._fast_pack((2.0, x, y), 0)
handle = saxpy._kernel_on(0)
stream = tilec._current_stream
c_launch = saxpy._c_launch
parts = {"pack (Python)": lambda: saxpy._fast_pack((2.0, x, y), 0),
         "tilec_launch of packed bytes": lambda: c_launch(handle, packed, 3, stream(0))}
for name, ts in per_call_us(parts).items():
    print(f"PART {name}: median {ts[len(ts) // 2]:.2f} us, min {ts[0]:.2f} us")

# A training-style loop of small dependent launches.
bind_a = saxpy.bind(2.0, x, y)
bind_b = saxpy.bind(0.5, y, x)


def loop_tilec():
    for _ in range(args.loop):
        saxpy(2.0, x, y)
        saxpy(0.5, y, x)
        saxpy(2.0, x, y)
    torch.cuda.synchronize()


def loop_bind():
    for _ in range(args.loop):
        bind_a()
        bind_b()
        bind_a()
    torch.cuda.synchronize()


def loop_torch():
    for _ in range(args.loop):
        y.add_(x, alpha=2.0)
        x.add_(y, alpha=0.5)
        y.add_(x, alpha=2.0)
    torch.cuda.synchronize()


loops = {"tilec call": loop_tilec, "tilec bind": loop_bind, "torch eager": loop_torch}
if "triton" in impls:
    def loop_triton():
        for _ in range(args.loop):
            triton_saxpy[grid](2.0, x, y, n, BLOCK=1024)
            triton_saxpy[grid](0.5, y, x, n, BLOCK=1024)
            triton_saxpy[grid](2.0, x, y, n, BLOCK=1024)
        torch.cuda.synchronize()
    loops["triton"] = loop_triton
for f in loops.values():
    f()
ltimes = {k: [] for k in loops}
for _ in range(max(args.rounds // 3, 5)):
    for name, f in loops.items():
        t0 = time.perf_counter()
        f()
        ltimes[name].append((time.perf_counter() - t0) * 1e3)
for name, ts in ltimes.items():
    ts.sort()
    print(f"LOOP {name}: {args.loop} x 3 launches + sync: median {ts[len(ts) // 2]:.2f} ms, "
          f"min {ts[0]:.2f} ms")
