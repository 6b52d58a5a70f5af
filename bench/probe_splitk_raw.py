#!/usr/bin/env python3
"""Split-K's parts at skinny shapes (issue 15): the matmul_splitk kernel
alone (f32 atomics into C), C's zeroing and the f32 -> bf16 conversion,
each timed with CUDA events (medians), beside torch.mm in the same process.

usage: bench/probe_splitk_raw.py [MxNxK,...] [BMxBN:SPLIT,...]
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import median_ms  # noqa: E402

shapes = (sys.argv[1] if len(sys.argv) > 1 else "16x8192x8192,64x8192x8192").split(",")
cfgs = (sys.argv[2] if len(sys.argv) > 2 else "64x128:4,64x128:2,64x256:2,64x64:4").split(",")
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sk = tilec.load(os.path.join(root, "examples", "matmul.tile"))
for shape in shapes:
    m, n, k = (int(v) for v in shape.split("x"))
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c32 = torch.zeros(m, n, device="cuda")
    flops = 2.0 * m * n * k
    t = median_ms(lambda: torch.mm(a, b), 20, reps=10)
    print(f"{shape:>14} cuBLAS {t:.4f} ms {flops / t / 1e9:.1f} TF/s")
    print(f"{shape:>14} zero_ {median_ms(lambda: c32.zero_(), 20, reps=10):.4f} ms, "
          f"to(bf16) {median_ms(lambda: c32.to(torch.bfloat16), 20, reps=10):.4f} ms")
    for cfg in cfgs:
        tile, split = cfg.split(":")
        bm, bn = (int(v) for v in tile.split("x"))
        kern = sk.with_defines(BM=bm, BN=bn, SPLIT=int(split)).matmul_splitk
        t = median_ms(lambda: kern(a, b, c32), 20, reps=10)
        print(f"{shape:>14} splitk {cfg:10} kernel alone {t:.4f} ms {flops / t / 1e9:.1f} TF/s "
              f"({2 * k * n / t / 1e6:.0f} GB/s of B)")
