#!/usr/bin/env python3
"""Skinny and short matmuls (bf16 in, bf16 out, f32 accumulation) from
Python: tilec's plain matmul (examples/matmul.tile, BN 128/256) and
matmul_splitk (SPLIT programs per output tile adding f32 partial products
with atomics into a zeroed f32 C, then converted to bf16, both counted),
against cuBLAS (torch.mm) in the same process and timing loop: CUDA events
around --reps back-to-back calls, medians of --iters, the implementations
interleaved round by round. Each result is checked against torch.mm first.

usage: bench/bench_skinny.py [--shapes MxNxK,...] [--configs CFG,...] [--iters N]
                             [--reps R] [--rounds R] [--sustain SECONDS] [--source2 FILE] [--env2 X=V+...]
  CFG: matmul:default (the tile matmul's @heuristic picks from the shape,
       what a plain call runs), matmul2:default (the same from --source2 FILE and/or compiled with --env2's TILEC_ knobs),
       matmul:BMxBN[xBK][:STAGES[:CLUSTER]] (CLUSTER 1: no clusters; default 2),
       persistent:BMxBN[:STAGES] (matmul_persistent), pingpong:BMxBN[:STAGES]
       (matmul_persistent with @launch(pingpong = 1): the consumer warpgroups
       take the tiles in turn)
       or splitk:BMxBN:SPLIT[:STAGES] (STAGES 0 or left out: the compiler's
       choice, as many as fit up to 4)
       or k:KERNEL:NAME=V+NAME=V... (any kernel of examples/matmul.tile taking
       (A, B, C) with these parameters, e.g. k:matmul_grouped:BN=256+GM=16)
  --sustain S: after the burst rounds, S seconds of back-to-back calls of each
       implementation in turn, timed over the second half (the H200 settles
       near 1500 MHz under its 700 W cap), printed as "sustained" lines
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import environment, interleaved, sustained_ms, uncached_copy  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--shapes", default="16x8192x8192,64x8192x8192,128x16384x4096,"
                                    "4096x4096x512,1000x3000x777")
ap.add_argument("--configs", default="matmul:128x128,matmul:128x256,splitk:128x64:2,"
                                     "splitk:128x128:2,splitk:128x64:4,splitk:128x128:4,"
                                     "splitk:128x64:8,splitk:128x128:8")
ap.add_argument("--iters", type=int, default=20)
ap.add_argument("--reps", type=int, default=10)
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--sustain", type=float, default=0.0)
ap.add_argument("--source2", help="a second copy of examples/matmul.tile (e.g. other @tuned rows), "
                                  "timed as matmul2:default beside matmul:default")
ap.add_argument("--env2", help="X=V+Y=W: TILEC_X=V ... set while matmul2's kernels compile (an "
                               "experiment's knob; matmul2 is --source2 or examples/matmul.tile)")
args = ap.parse_args()

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
mm = tilec.load(os.path.join(root, "examples", "matmul.tile"), O="bf16")
env2 = {"TILEC_" + k: v for k, v in (d.split("=") for d in args.env2.split("+"))} if args.env2 else {}
mm2 = None
if args.source2 or env2:
    src2 = args.source2 or os.path.join(root, "examples", "matmul.tile")
    mm2 = uncached_copy(tilec, src2, env2, O="bf16")
sk = tilec.load(os.path.join(root, "examples", "matmul.tile"))
print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}")
for shape in args.shapes.split(","):
    m, n, k = (int(v) for v in shape.split("x"))
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    want = torch.mm(a.float(), b.float())
    impls = {"cuBLAS torch.mm": lambda: torch.mm(a, b)}
    for cfg in args.configs.split(","):
        parts = cfg.split(":")
        if parts[1] == "default":
            c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            prog = mm2 if parts[0] == "matmul2" else mm
            kern = prog.matmul_persistent if parts[0] == "persistent" else prog.matmul
            with environment(env2 if prog is mm2 else {}):
                kern(a, b, c)
            torch.testing.assert_close(c.float(), want, rtol=2e-2, atol=2e-1)
            impls[f"tilec {cfg} {kern.choose(a, b, c)}"] = (lambda kern=kern, c=c: kern(a, b, c))
            continue
        if parts[0] == "k":
            c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            defs = dict(d.split("=") for d in parts[2].split("+")) if len(parts) > 2 else {}
            try:
                kern = getattr(mm, parts[1]).with_defines(**{k: int(v) for k, v in defs.items()})
                kern(a, b, c)
            except tilec.CompileError as e:
                print(f"{shape:>16} tilec {cfg}: not compiled: {str(e).splitlines()[0]}")
                continue
            torch.testing.assert_close(c.float(), want, rtol=2e-2, atol=2e-1)
            impls[f"tilec {cfg}"] = (lambda kern=kern, c=c: kern(a, b, c))
            continue
        dims = [int(v) for v in parts[1].split("x")]
        bm, bn = dims[0], dims[1]
        if parts[0] in ("matmul", "persistent", "pingpong"):
            c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            try:
                stages = int(parts[2]) if len(parts) > 2 else 0
                extra = {"CLUSTER": int(parts[3])} if len(parts) > 3 else {}
                if len(dims) > 2:
                    extra["BK"] = dims[2]
                if parts[0] == "pingpong":
                    extra["PINGPONG"] = 1
                kern = (mm.matmul if parts[0] == "matmul" else mm.matmul_persistent).with_defines(
                    BM=bm, BN=bn, STAGES=stages, **extra)
                kern(a, b, c)
            except tilec.CompileError as e:  # a tile that does not fit: say so, go on
                print(f"{shape:>16} tilec {cfg}: not compiled: {str(e).splitlines()[0]}")
                continue
            torch.testing.assert_close(c.float(), want, rtol=2e-2, atol=2e-1)
            impls[f"tilec {cfg}"] = (lambda kern=kern, c=c: kern(a, b, c))
            continue
        split = int(parts[2])
        stages = int(parts[3]) if len(parts) > 3 else 0
        c32 = torch.zeros(m, n, device="cuda")
        kern = sk.matmul_splitk.with_defines(BM=bm, BN=bn, SPLIT=split, STAGES=stages)
        kern(a, b, c32)
        torch.testing.assert_close(c32, want, rtol=2e-3, atol=2e-2)

        def run(kern=kern, c32=c32):
            c32.zero_()
            kern(a, b, c32)
            return c32.to(torch.bfloat16)
        impls[f"tilec {cfg}"] = run
    times = interleaved(impls, args.rounds, args.iters, args.reps)
    flops = 2.0 * m * n * k
    best = None
    for name, ts in times.items():
        ms = sorted(ts)[len(ts) // 2]
        tf = flops / (ms * 1e-3) / 1e12
        print(f"{shape:>16} {name:32} {ms:9.4f} ms {tf:8.1f} TF/s")
        if name.startswith("tilec") and (best is None or ms < best[1]):
            best = (name, ms)
    cub = sorted(times["cuBLAS torch.mm"])[args.rounds // 2]
    print(f"SUMMARY {shape}: best {best[0]} {flops / (best[1] * 1e-3) / 1e12:.1f} TF/s, "
          f"cuBLAS {flops / (cub * 1e-3) / 1e12:.1f} TF/s: {cub / best[1]:.3f}x")
    if args.sustain > 0:
        sus = {}
        for name, fn in impls.items():
            sus[name] = sustained_ms(fn, args.sustain)
            print(f"{shape:>16} {name:32} {sus[name]:9.4f} ms "
                  f"{flops / (sus[name] * 1e-3) / 1e12:8.1f} TF/s sustained ({args.sustain:g} s)",
                  flush=True)
        mine = min((ms, name) for name, ms in sus.items() if name.startswith("tilec"))
        print(f"SUSTAINED {shape}: best {mine[1]} {flops / (mine[0] * 1e-3) / 1e12:.1f} TF/s, "
              f"cuBLAS {flops / (sus['cuBLAS torch.mm'] * 1e-3) / 1e12:.1f} TF/s: "
              f"{sus['cuBLAS torch.mm'] / mine[0]:.3f}x")
