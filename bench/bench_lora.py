#!/usr/bin/env python3
"""A linear layer with a LoRA adapter (examples/lora.tile: Y = X W^T + s (X
A^T) B^T in one kernel, the rank-R product chained after the loop over K)
next to torch eager (cuBLAS X W^T, then the adapter's two small products
and the add, bf16 throughout, as peft's Linear computes it) and next to
the plain X W^T (torch.mm: what the adapter costs on top), interleaved for
--rounds rounds in one GPU session. TF/s counts 2*M*N*K + 2*M*r*(K + N).
tilec is timed by tilec-check's CUDA-event loop (its own process), torch
by the same kind of loop here.

usage: bench/bench_lora.py [--tilec-check PATH] [--shape MxKxNxr] [--rounds R]
"""
import argparse

import torch

from benchlib import median_ms, tilec_bench

ap = argparse.ArgumentParser()
ap.add_argument("--tilec-check", default="build/bin/tilec-check")
ap.add_argument("--shape", default="8192x4096x4096x16")
ap.add_argument("--rounds", type=int, default=2)
ap.add_argument("--iters", type=int, default=50)
ap.add_argument("--file", default="examples/lora.tile")
args = ap.parse_args()
M, K, N, r = (int(v) for v in args.shape.split("x"))
flops = 2.0 * M * N * K + 2.0 * M * r * (K + N)
x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16) / K ** 0.5
a = torch.randn(r, K, device="cuda", dtype=torch.bfloat16) / K ** 0.5
b = torch.randn(N, r, device="cuda", dtype=torch.bfloat16)
s = 0.5


def eager():
    return x @ w.t() + (x @ a.t()) @ b.t() * s


def plain():
    return x @ w.t()


def tf(ms):
    return flops / (ms * 1e-3) / 1e12


def tilec_ms():
    defines = ["-D", f"R={max(16, (r + 15) // 16 * 16)}"]
    rows = tilec_bench(args.tilec_check, [args.file, "--shape", args.shape, "--no-verify",
                                          "--bench", str(args.iters)] + defines)
    return [x for x in rows if x["impl"] == "tilec"][0]["ms"]


for rnd in range(args.rounds):
    t = tilec_ms()
    e = median_ms(eager, args.iters)
    p = median_ms(plain, args.iters)
    print(f"round {rnd + 1} {args.shape}: tilec {t:.4f} ms ({tf(t):.0f} TF/s)  "
          f"torch eager {e:.4f} ms ({tf(e):.0f} TF/s)  torch x W^T alone {p:.4f} ms",
          flush=True)
