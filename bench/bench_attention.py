#!/usr/bin/env python3
"""FlashAttention forward (examples/attention.tile) next to torch SDPA's cuDNN
and FLASH_ATTENTION backends, interleaved for --rounds rounds in one GPU
session. Q, K, V, O are [B, H, S, D] bf16 (tilec views them as [B*H, S, D]);
TF/s counts 4*B*H*Sq*Sk*D, half of it when causal. tilec is timed by
tilec-check's CUDA-event loop (its own process: tilec has no Python binding
yet), torch by the same kind of loop here.

usage: bench/bench_attention.py [--tilec-check PATH] [--shape BxHxSxD] [--causal]
                                [--rounds R] [--define NAME=V ...] [--arch ARCH] [--old PATH]
                                [--old-define NAME=V ...] [--num-warps N]

--old PATH also times a second tilec-check (another compiler build) in each
round, right after the first: an A/B of two compilers in the same loop.
tilec-check runs with --heuristic (session 46 on; an older build does not
take it): the kernel with the values its @heuristic gives for the shape, the
tile the Python package launches (without it tilec-check timed the kernel's
defaults, a different tile at D <= 64 from 2048 keys).

Each tilec-check starts after the GPU idled while the process started, and
the first timing after such a pause reads about 11% faster than the same
kernel timed among others (H100, docs/performance.md, session 44): the
tilec-check figure is for old against new (both after a pause), not against
cuDNN. For that each round also times the same kernel through the Python
package in this process on SDPA's tensors, right before cuDNN and after half
a second of all three in turn ("tilec here", and the ratio printed is that
one's).
"""
import os
import sys

import argparse

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from benchlib import attention_bhsd, median_ms, settle, tilec_bench

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tilec  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--tilec-check", default="build/bin/tilec-check")
ap.add_argument("--shape", default="4x16x4096x128")
ap.add_argument("--causal", action="store_true")
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--iters", type=int, default=30)
ap.add_argument("--define", action="append", default=[])
ap.add_argument("--arch", default="sm_90a", help="the PTX target (sm_80: the cp.async + mma.sync "
                "pipeline, run on this GPU)")
ap.add_argument("--old", help="a second tilec-check to time in the same rounds")
ap.add_argument("--num-warps", type=int,
                help="tilec-check's --num-warps for the first tilec-check only (not --old, not the "
                     "package's launch): e.g. the sm_80 pipeline on 8 warps where it takes 4")
ap.add_argument("--old-define", action="append", default=[],
                help="NAME=V for the --old run only, replacing a --define of that name "
                     "(e.g. the same tilec-check with another configuration)")
args = ap.parse_args()
B, H, S, D = (int(v) for v in args.shape.split("x"))
flops = 4.0 * B * H * S * S * D * (0.5 if args.causal else 1.0)
q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))


def sdpa(backend):
    def run():
        with sdpa_kernel(backend):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=args.causal)
    return run


def tf(ms):
    return flops / (ms * 1e-3) / 1e12


base_defines = [f"D={D}"] + (["CAUSAL=1"] if args.causal else []) + args.define


def tilec_ms(tilec_check, extra=(), warps=None):
    # --old-define replaces a --define of the same name for the old run.
    names = {d.split("=")[0] for d in extra}
    chosen = [d for d in base_defines if d.split("=")[0] not in names] + list(extra)
    # (--kernel: the file's other kernels, e.g. attention_decode's 64 rows,
    # would refuse a --num-warps meant for this one.)
    rows = tilec_bench(tilec_check, ["examples/attention.tile", "--kernel", "attention",
                                     "--shape", f"{B * H}x{S}x{S}x{D}", "--no-verify", "--heuristic",
                                     "--bench", str(args.iters), "--arch", args.arch] +
                       [x for d in chosen for x in ("-D", d)] +
                       (["--num-warps", str(warps)] if warps else []))
    return [x for x in rows if x["impl"] == "tilec"][0]["ms"]


def package_define(d):
    name, v = d.split("=", 1)
    return name, int(v) if v.lstrip("-").isdigit() else v


lib = tilec.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                              "attention.tile"), arch=args.arch,
                 **dict(package_define(d) for d in base_defines))
out = torch.empty_like(q)
lse = torch.empty(B * H, S, device="cuda", dtype=torch.float32)


def here():
    return attention_bhsd(lib, q, k, v, out, lse, D ** -0.5)


here()
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    want = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=args.causal)
err = (out.float() - want.float()).abs().max().item()
assert err < 3e-2, f"tilec through the package differs from SDPA by {err}"

for r in range(args.rounds):
    t = tilec_ms(args.tilec_check, warps=args.num_warps)
    if args.old:
        o = tilec_ms(args.old, args.old_define)
        print(f"round {r + 1} {args.shape}{' causal' if args.causal else ''}: "
              f"old {o:.4f} ms ({tf(o):.0f} TF/s)", flush=True)
    settle([here, sdpa(SDPBackend.CUDNN_ATTENTION), sdpa(SDPBackend.FLASH_ATTENTION)], 0.5)
    h = median_ms(here, args.iters)
    cudnn = median_ms(sdpa(SDPBackend.CUDNN_ATTENTION), args.iters)
    flash = median_ms(sdpa(SDPBackend.FLASH_ATTENTION), args.iters)
    print(f"round {r + 1} {args.shape}{' causal' if args.causal else ''}: "
          f"tilec {t:.4f} ms ({tf(t):.0f} TF/s)  tilec here {h:.4f} ms ({tf(h):.0f} TF/s)  "
          f"cuDNN {cudnn:.4f} ms ({tf(cudnn):.0f} TF/s)  "
          f"FLASH {flash:.4f} ms ({tf(flash):.0f} TF/s)  here / cuDNN {cudnn / h:.3f}",
          flush=True)
