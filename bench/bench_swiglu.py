#!/usr/bin/env python3
"""The gated projection of a LLaMA MLP, H = silu(X Wg^T) * (X Wu^T)
(examples/mlp.tile's swiglu: X staged once for both mmas, the products meet
in registers), next to torch: eager (two cuBLAS GEMMs, silu, multiply) and
one cuBLAS GEMM over the concatenated weights [Wg; Wu] followed by the
elementwise part (how fused gate/up layers are usually run). bf16, in one
process and one CUDA-event loop, interleaved round by round (A B C A B C);
TF/s count 4*M*N*K. Every output is checked against eager's first.

usage: bench/bench_swiglu.py [--shapes MxKxN,...] [--rounds R] [--iters N]
                             [--variant NAME:K=V+K=V ...] [--sustain SECONDS]
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import interleaved, sustained_ms  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--shapes", default="8192x4096x14336,4096x4096x11008,2048x8192x28672")
ap.add_argument("--rounds", type=int, default=2)
ap.add_argument("--iters", type=int, default=20)
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--variant", action="append", default=[])
ap.add_argument("--sustain", type=float, default=0.0)
args = ap.parse_args()
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
path = os.path.join(root, "examples", "mlp.tile")
libs = {"tilec": tilec.load(path)}
for v in args.variant:
    name, defs = v.split(":", 1)
    libs[name] = tilec.load(path, **{k: int(x) for k, x in (d.split("=") for d in defs.split("+"))})
print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}")
for shape in args.shapes.split(","):
    M, K, N = (int(s) for s in shape.split("x"))
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    wg, wu = (torch.randn(N, K, device="cuda", dtype=torch.bfloat16) / K ** 0.5 for _ in range(2))
    wgu = torch.cat([wg, wu])
    outs = {name: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for name in libs}

    def eager():
        return F.silu(x @ wg.t()) * (x @ wu.t())

    def concatenated():
        gu = x @ wgu.t()
        return F.silu(gu[:, :N]) * gu[:, N:]

    impls = {name: (lambda n=name: libs[n].swiglu(x, wg, wu, outs[n])) for name in libs}
    impls.update({"torch eager": eager, "torch one GEMM": concatenated})
    want = eager().float()
    for name in libs:
        impls[name]()
        torch.cuda.synchronize()
        err = ((outs[name].float() - want).abs().max() / want.abs().max()).item()
        assert err < 2e-2, f"{name} {shape}: relative error {err}"
    flops = 4.0 * M * N * K
    times = interleaved(impls, args.rounds, args.iters, args.reps)
    for name, ts in times.items():
        print(f"{shape:18} {name:16} " + "  ".join(f"{flops / (t * 1e-3) / 1e12:7.1f}" for t in ts)
              + " TF/s", flush=True)
    for name, fn in impls.items() if args.sustain > 0 else ():
        t = sustained_ms(fn, args.sustain)
        print(f"{shape:18} {name:16} {flops / (t * 1e-3) / 1e12:7.1f} TF/s sustained "
              f"({args.sustain:g} s)", flush=True)
