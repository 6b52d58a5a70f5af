#!/usr/bin/env python3
"""The softmax epilogue over an mma accumulator's rows (examples/
matmul_softmax.tile: P = softmax over each 128-column block of A * B, L = its
row log-sum-exp) next to the same work in torch (cuBLAS bf16 matmul, then
softmax and logsumexp over 128-column blocks in f32) and next to tilec's plain
matmul (f32 out, BN = 128), interleaved for --rounds rounds in one GPU
session. TF/s counts 2*M*N*K.

usage: bench/bench_matmul_softmax.py [--tilec-check PATH] [--shape MxNxK] [--rounds R]
"""
import argparse

import torch

from benchlib import median_ms, tilec_bench

ap = argparse.ArgumentParser()
ap.add_argument("--tilec-check", default="build/bin/tilec-check")
ap.add_argument("--shape", default="4096x4096x4096")
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--iters", type=int, default=50)
args = ap.parse_args()
M, N, K = (int(v) for v in args.shape.split("x"))
flops = 2.0 * M * N * K
a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)


def torch_epilogue():
    s = torch.mm(a, b).float().view(M, N // 128, 128)
    return torch.softmax(s, -1), torch.logsumexp(s, -1)


def tf(ms):
    return flops / (ms * 1e-3) / 1e12


for r in range(args.rounds):
    fused = tilec_bench(args.tilec_check, ["examples/matmul_softmax.tile", "--shape", args.shape,
                                           "--no-verify", "--bench", str(args.iters)])
    plain = tilec_bench(args.tilec_check, ["examples/matmul.tile", "--kernel", "matmul",
                                           "-D", "BN=128", "--shape", args.shape,
                                           "--no-verify", "--bench", str(args.iters)])
    t = median_ms(torch_epilogue, args.iters)
    f = [x for x in fused if x["impl"] == "tilec"][0]["ms"]
    p = [x for x in plain if x["impl"] == "tilec"][0]["ms"]
    print(f"round {r + 1} {args.shape}: tilec matmul_softmax {f:.4f} ms ({tf(f):.0f} TF/s)  "
          f"tilec matmul BN=128 {p:.4f} ms ({tf(p):.0f} TF/s)  "
          f"torch mm+softmax+logsumexp {t:.4f} ms ({tf(t):.0f} TF/s)")
