#!/usr/bin/env python3
"""C = A^T B with A stored K x M (a weight gradient dW = X^T dY from the
activations as they are): examples/matmul.tile's matmul_tn (a read MN-major
from where TMA staged it) next to torch's x.t() @ dy (cuBLAS, which takes
the transpose as a layout flag), bf16 in, bf16 out, in one process and one
CUDA-event loop, interleaved round by round; TF/s count 2*M*N*K. Every
output is checked against torch's first.

usage: bench/bench_matmul_tn.py [--shapes MxNxK,...] [--rounds R]
                                [--variant NAME:K=V+K=V ...] [--sustain SECONDS]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import interleaved, sustained_ms  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--shapes", default="4096x4096x4096,8192x8192x8192,4096x14336x8192,1024x4096x16384")
ap.add_argument("--rounds", type=int, default=2)
ap.add_argument("--iters", type=int, default=20)
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--variant", action="append", default=[])
ap.add_argument("--sustain", type=float, default=0.0)
args = ap.parse_args()
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "matmul.tile")
libs = {"tilec": tilec.load(path, O="bf16")}
for v in args.variant:
    name, defs = v.split(":", 1)
    libs[name] = tilec.load(path, O="bf16",
                            **{k: int(x) for k, x in (d.split("=") for d in defs.split("+"))})
print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}")
for shape in args.shapes.split(","):
    M, N, K = (int(s) for s in shape.split("x"))
    x = torch.randn(K, M, device="cuda", dtype=torch.bfloat16)
    dy = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    outs = {name: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for name in libs}
    impls = {name: (lambda n=name: libs[n].matmul_tn(x, dy, outs[n])) for name in libs}
    impls["torch (cuBLAS)"] = lambda: x.t() @ dy
    want = (x.t() @ dy).float()
    for name in libs:
        impls[name]()
        torch.cuda.synchronize()
        err = ((outs[name].float() - want).abs().max() / want.abs().max()).item()
        assert err < 2e-2, f"{name} {shape}: relative error {err}"
    flops = 2.0 * M * N * K
    times = interleaved(impls, args.rounds, args.iters, args.reps)
    for name, ts in times.items():
        print(f"{shape:18} {name:16} " + "  ".join(f"{flops / (t * 1e-3) / 1e12:7.1f}" for t in ts)
              + " TF/s", flush=True)
    for name, fn in impls.items() if args.sustain > 0 else ():
        t = sustained_ms(fn, args.sustain)
        print(f"{shape:18} {name:16} {flops / (t * 1e-3) / 1e12:7.1f} TF/s sustained "
              f"({args.sustain:g} s)", flush=True)
