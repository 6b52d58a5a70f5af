#!/usr/bin/env python3
"""CPU cost of launching a tiny kernel: tilec's runtime (tilec-bench launch,
C++) next to Triton and torch (Python) in the same GPU session, plus
tilec's CUDA-graph replay of 100 launches vs 100 individual launches.

usage: bench/bench_launch.py [--tilec-bench PATH]
"""
import argparse, statistics, subprocess, time

import torch
import triton
import triton.language as tl


@triton.jit
def vadd_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def per_launch_us(fn, batches=30, per_batch=200):
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(per_batch):
            fn()
        out.append((time.perf_counter() - t0) * 1e6 / per_batch)
        torch.cuda.synchronize()
    return statistics.median(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tilec-bench", default="tilec-bench")
    args = ap.parse_args()
    res = subprocess.run([args.tilec_bench, "launch"], capture_output=True, text=True)
    print(res.stdout.strip())
    if res.returncode:
        print(res.stderr)
    n = 1024
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    z = torch.empty_like(x)
    tri = per_launch_us(lambda: vadd_kernel[(1,)](x, y, z, n, BLOCK=1024))
    tor = per_launch_us(lambda: torch.add(x, y, out=z))
    print(f"LAUNCH triton {triton.__version__}: {tri:.2f} us per launch (same 1024-element vadd, Python)")
    print(f"LAUNCH torch {torch.__version__}: {tor:.2f} us per torch.add(out=) call")


if __name__ == "__main__":
    main()
