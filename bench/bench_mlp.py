#!/usr/bin/env python3
"""The fused MLP (examples/mlp.tile: y = gelu(x W1 + b1) W2, the hidden block
kept in registers) next to torch eager (cuBLAS x W1, bias, tanh GELU, cuBLAS
times W2, bf16 throughout), interleaved for --rounds rounds in one GPU
session. TF/s counts 2*M*H*(Din + Dout). tilec is timed by tilec-check's
CUDA-event loop (its own process), torch by the same kind of loop here.

usage: bench/bench_mlp.py [--tilec-check PATH] [--shape MxDinxHxDout] [--rounds R]
                          [--file FILE] [--kernel mlp|mlp_wide]
"""
import argparse

import torch
import torch.nn.functional as F

from benchlib import median_ms, tilec_bench

ap = argparse.ArgumentParser()
ap.add_argument("--tilec-check", default="build/bin/tilec-check")
ap.add_argument("--shape", default="16384x128x2048x256")
ap.add_argument("--rounds", type=int, default=2)
ap.add_argument("--iters", type=int, default=50)
ap.add_argument("--file", default="examples/mlp.tile")
ap.add_argument("--kernel", default="mlp", help="mlp (the input in one block of DIN) or mlp_wide")
ap.add_argument("--old", help="a second tilec-check to time in the same rounds")
args = ap.parse_args()
M, Din, H, Dout = (int(v) for v in args.shape.split("x"))
flops = 2.0 * M * H * (Din + Dout)
x = torch.randn(M, Din, device="cuda", dtype=torch.bfloat16)
w1 = torch.randn(Din, H, device="cuda", dtype=torch.bfloat16) / Din ** 0.5
b1 = torch.randn(H, device="cuda", dtype=torch.bfloat16)
w2 = torch.randn(H, Dout, device="cuda", dtype=torch.bfloat16) / H ** 0.5


def eager():
    return F.gelu(x @ w1 + b1, approximate="tanh") @ w2


def tf(ms):
    return flops / (ms * 1e-3) / 1e12


def tilec_ms(tilec_check):
    din = ["-D", f"DIN={Din}"] if args.kernel == "mlp" else []
    rows = tilec_bench(tilec_check, [args.file, "--kernel", args.kernel, "--shape", args.shape,
                                     "--no-verify", "--bench", str(args.iters)] + din)
    return [x for x in rows if x["impl"] == "tilec"][0]["ms"]


for r in range(args.rounds):
    t = tilec_ms(args.tilec_check)
    if args.old:
        o = tilec_ms(args.old)
        print(f"round {r + 1} {args.shape}: old {o:.4f} ms ({tf(o):.0f} TF/s)", flush=True)
    e = median_ms(eager, args.iters)
    print(f"round {r + 1} {args.shape}: tilec {t:.4f} ms ({tf(t):.0f} TF/s)  "
          f"torch eager {e:.4f} ms ({tf(e):.0f} TF/s)", flush=True)
