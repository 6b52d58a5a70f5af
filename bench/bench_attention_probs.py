#!/usr/bin/env python3
"""Attention that returns its probabilities (python/tests/sequences.tile's
attention_probs: two mma loops in one kernel sharing one ring, the first
for each row's maximum and sum, the second writing P = softmax(q k^T s) in
f32 and accumulating O = P V) next to torch eager (the scores, softmax and
P V, P materialized in f32 as HF's output_attentions does) in one process
and one CUDA-event loop, interleaved round by round. One head, bf16 q/k/v,
D = 64; TF/s count 3 * 2 * Sq * Sk * D (two QK^T passes and PV) for tilec
and 2 * 2 * Sq * Sk * D for torch, GB/s the bytes of P written once.

usage: bench/bench_attention_probs.py [--shapes SqxSk,...] [--rounds R] [--iters N]
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import bench_args, interleaved  # noqa: E402

args = bench_args("4096x4096,16384x4096,2048x16384")
print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}")
lib = tilec.load(os.path.join(os.path.dirname(__file__), "..", "python", "tests", "sequences.tile"))
D, scale = 64, 0.125
for shape in args.shapes.split(","):
    sq, sk = (int(v) for v in shape.split("x"))
    q, k, v = (torch.randn(n, D, device="cuda", dtype=torch.bfloat16) for n in (sq, sk, sk))
    p = torch.empty(sq, sk, device="cuda")
    o = torch.empty(sq, D, device="cuda")

    def eager():
        pe = torch.softmax(q.float() @ k.float().t() * scale, dim=-1)
        return pe, pe.bfloat16() @ v

    pe, oe = eager()
    lib.attention_probs(q, k, v, p, o, scale)
    torch.cuda.synchronize()
    assert (p - pe).abs().max().item() < 1e-3, "P differs"
    assert (o - oe.float()).abs().max().item() < 5e-2, "O differs"
    times = interleaved({"tilec": lambda: lib.attention_probs(q, k, v, p, o, scale),
                         "torch eager": eager}, args.rounds, args.iters, args.reps)
    for name, ts in times.items():
        print(f"{shape:12} {name:12} " + "  ".join(f"{t:8.3f} ms" for t in ts)
              + f"   P at {sq * sk * 4 / (min(ts) * 1e-3) / 1e9:6.0f} GB/s", flush=True)
