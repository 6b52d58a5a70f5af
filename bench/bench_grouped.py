"""Grouped GEMM (mixture of experts): examples/matmul.tile's grouped_mm
against torch._grouped_mm on the same groups, in one process, interleaved
per round (CUDA events, medians). G groups of random sizes in [LO, HI]
rows, each [rows, K] x [K, N]; TF/s counts 2 * sum(rows) * N * K.

    python3 bench/bench_grouped.py [--groups 64] [--k 4096] [--n 4096] [--rounds 2]
        [--define BN=128] [--source FILE.tile [--max-rows]]
        [--variant NAME=FILE.tile[:KERNEL][,K=V...]]...

Each --variant is another tilec kernel timed (and checked) in the same
rounds, the order of the implementations rotating per round (benchlib's
interleaved).
"""
import argparse
import os
import sys

import torch

from benchlib import interleaved

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--groups", type=int, default=64)
p.add_argument("--k", type=int, default=4096)
p.add_argument("--n", type=int, default=4096)
p.add_argument("--lo", type=int, default=128)
p.add_argument("--hi", type=int, default=1024)
p.add_argument("--rounds", type=int, default=2)
p.add_argument("--align", type=int, default=16, help="group sizes rounded down to a multiple of this")
p.add_argument("--iters", type=int, default=20)
p.add_argument("--define", action="append", default=[])
p.add_argument("--source", default=os.path.join(os.path.dirname(__file__), "..", "examples", "matmul.tile"),
               help="the .tile file whose grouped_mm runs")
p.add_argument("--kernel", default="grouped_mm", help="grouped_mm or grouped_mm_persistent")
p.add_argument("--variant", action="append", default=[],
               help="NAME=FILE.tile[:KERNEL][,K=V...]: another kernel timed in the same rounds")
p.add_argument("--max-rows", action="store_true",
               help="pass the largest group's row count last (a kernel with max_rows)")
a = p.parse_args()
gen = torch.Generator().manual_seed(0)
rows = torch.randint(a.lo, a.hi + 1, (a.groups,), generator=gen)
rows = (rows // a.align) * a.align  # torch._grouped_mm wants 16-row aligned groups
offs = torch.cat([torch.zeros(1, dtype=torch.int64), rows.cumsum(0)]).to(torch.int32).cuda()
total, K, N = int(offs[-1]), a.k, a.n
A = torch.randn(total, K, device="cuda", dtype=torch.bfloat16)
Bt = torch.randn(a.groups, N, K, device="cuda", dtype=torch.bfloat16)  # torch's layout
B = Bt.transpose(1, 2).contiguous()                                      # ours: [G, K, N]
C = torch.empty(total, N, device="cuda", dtype=torch.bfloat16)
defs = dict(d.split("=") for d in a.define)
lib = tilec.load(a.source, **defs)
extra = (int(rows.max()),) if a.max_rows else ()
kernels = {"tilec": (a.kernel, defs, getattr(lib, a.kernel))}
for spec in a.variant:
    name, rest = spec.split("=", 1)
    path, *kv = rest.split(",")
    path, _, kname = path.partition(":")
    vdefs = dict(d.split("=") for d in kv)
    kernels[name] = (kname or a.kernel, vdefs, getattr(tilec.load(path, **vdefs), kname or a.kernel))
impls = {name: (lambda k=k: k(A, B, C, offs, *extra)) for name, (_, _, k) in kernels.items()}
ends = offs[1:].contiguous()
run_torch = lambda: torch._grouped_mm(A, Bt.transpose(1, 2), offs=ends, out_dtype=torch.bfloat16)  # noqa: E731
ref = run_torch()
for name, fn in impls.items():
    C.zero_()
    fn()
    torch.cuda.synchronize()
    err = (C.float() - ref.float()).abs().max().item()
    kname, kdefs, _ = kernels[name]
    print(f"{name}: {kname} G={a.groups} rows {a.lo}-{a.hi} (total {total}) K={K} N={N} "
          f"defines={kdefs}: max |tilec - torch| = {err:.3f}")
    if not err < 1e-2 * ref.float().abs().max().item():
        sys.exit(f"{name}: wrong result (more than 1% of the largest output)")
impls["torch._grouped_mm"] = run_torch
flops = 2.0 * total * N * K
times = interleaved(impls, a.rounds, a.iters)
for r in range(a.rounds):
    print(f"round {r + 1}: " + " | ".join(f"{name} {ms[r]:.4f} ms {flops / ms[r] / 1e9:.1f} TF/s"
                                          for name, ms in times.items()))
