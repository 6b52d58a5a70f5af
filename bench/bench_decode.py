#!/usr/bin/env python3
"""Attention decode (flash-decoding) with grouped-query attention: tilec
(examples/attention.tile: `attention` with BM = 64 over the query rows of
each key/value head in one launch, and `attention_decode` +
`attention_combine` split along the keys) against torch SDPA (its default
choice and each backend that takes the case, enable_gqa=True) and a
device-to-device copy of K and V, in one process and one timing loop (CUDA
events around --reps back-to-back calls, medians of --iters, rounds
interleaved). Reports each one's time and the bandwidth of reading K and V
once, and tilec's fraction of the copy's bandwidth (a copy reads and writes
each byte: its bandwidth is 2 * bytes / time).

usage: bench/bench_decode.py [--shape BxHqxHkvxSqxSkxD] [--splits S,...] [--rounds R]
"""
import argparse
import os
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import interleaved  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--shape", default="32x32x8x1x8192x128")
ap.add_argument("--splits", default="1,2")
ap.add_argument("--iters", type=int, default=30)
ap.add_argument("--reps", type=int, default=10)
ap.add_argument("--rounds", type=int, default=3)
args = ap.parse_args()
B, Hq, Hkv, Sq, Sk, D = (int(x) for x in args.shape.split("x"))
G, R = Hq // Hkv, (Hq // Hkv) * Sq
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "attention.tile")
q = torch.randn(B, Hq, Sq, D, device="cuda", dtype=torch.bfloat16)
k, v = (torch.randn(B, Hkv, Sk, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
scale = D ** -0.5
qv, kv, vv = q.view(B * Hkv, R, D), k.view(B * Hkv, Sk, D), v.view(B * Hkv, Sk, D)
o = torch.empty(B * Hkv, R, D, device="cuda", dtype=torch.bfloat16)
lse = torch.empty(B * Hkv, R, device="cuda")
want = torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
impls = {}
for splits in (int(s) for s in args.splits.split(",")):
    if splits == 1:
        kern = tilec.load(root, D=D, BM=64).attention
        impls["tilec attention (one launch)"] = lambda kern=kern: kern(qv, kv, vv, o, lse, scale)
    else:
        lib = tilec.load(root, D=D, SPLITS=splits, R=R)
        op = torch.empty(B * Hkv * splits, R, D, device="cuda")
        lp = torch.empty(B * Hkv * splits, R, device="cuda")
        dec, comb = lib.attention_decode.bind(qv, kv, vv, op, lp, scale), lib.attention_combine.bind(
            op.view(B * Hkv, splits, R, D), lp.view(B * Hkv, splits, R), o, lse)

        def run(dec=dec, comb=comb):
            dec()
            comb()
        impls[f"tilec decode SPLITS={splits} + combine"] = run
for name, f in impls.items():
    o.zero_()
    f()
    torch.testing.assert_close(o.view(B, Hq, Sq, D), want, rtol=2e-2, atol=2e-2)
for name, backend in (("torch SDPA (default)", None), ("torch SDPA FLASH", SDPBackend.FLASH_ATTENTION),
                      ("torch SDPA CUDNN", SDPBackend.CUDNN_ATTENTION),
                      ("torch SDPA EFFICIENT", SDPBackend.EFFICIENT_ATTENTION),
                      ("torch SDPA MATH", SDPBackend.MATH)):
    def sdpa(backend=backend):
        if backend is None:
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        with sdpa_kernel(backend):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    try:
        sdpa()
        torch.cuda.synchronize()
        impls[name] = sdpa
    except RuntimeError as e:
        print(f"{name}: not available for this case ({str(e).splitlines()[0][:100]})")
kc, vc = torch.empty_like(k), torch.empty_like(v)


def copy():
    kc.copy_(k)
    vc.copy_(v)


impls["copy K and V (device to device)"] = copy
times = interleaved(impls, args.rounds, args.iters, args.reps)
kv_bytes = 2 * k.numel() * k.element_size()
copy_ms = sorted(times["copy K and V (device to device)"])[args.rounds // 2]
copy_bw = 2 * kv_bytes / (copy_ms * 1e-3) / 1e9
print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}  B{B} Hq{Hq} Hkv{Hkv} "
      f"Sq{Sq} Sk{Sk} D{D}: K and V {kv_bytes / 1e6:.1f} MB")
for name, ts in times.items():
    ms = sorted(ts)[args.rounds // 2]
    bw = (2 if name.startswith("copy") else 1) * kv_bytes / (ms * 1e-3) / 1e9
    print(f"DECODE {name:40} {ms * 1e3:9.1f} us {bw:8.0f} GB/s  {bw / copy_bw:5.2f} of the copy's")
