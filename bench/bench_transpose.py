#!/usr/bin/env python3
"""Transpose of an fp32 8192 x 8192 matrix: tilec (examples/transpose.tile via
tilec-check --bench) next to torch's x.t().contiguous() and a device-to-device
copy of the same bytes, in one GPU session. GB/s counts x read and y written
once; medians of CUDA-event timings after warm-up.

usage: bench/bench_transpose.py [--tilec-check PATH] [--iters N] [--configs BMxBN,...]
"""
import argparse, os

import torch

from benchlib import median_ms, tilec_bench


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tilec-check", default="tilec-check")
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--configs", default="64x64,32x128,128x32,64x32")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    m = n = 8192
    rows = []
    for cfg in args.configs.split(","):
        bm, bn = cfg.split("x")
        for r in tilec_bench(args.tilec_check, [os.path.join(root, "examples/transpose.tile"),
                                                "-D", f"BM={bm}", "-D", f"BN={bn}",
                                                "--shape", f"{m}x{n}", "--bench", str(args.iters),
                                                "--no-verify"]):
            label = f"tilec {cfg} (threads={r['threads']})" if r["impl"] == "tilec" else \
                "cuMemcpyDtoD (same bytes)"
            rows.append((label, r["ms"], r["gbps"]))
    x = torch.randn(m, n, device="cuda", dtype=torch.float32)
    ms = median_ms(lambda: x.t().contiguous(), args.iters)
    rows.append(("torch x.t().contiguous()", ms, 2 * m * n * 4 / (ms * 1e-3) / 1e9))
    dst = torch.empty_like(x)
    ms = median_ms(lambda: dst.copy_(x), args.iters)
    rows.append(("torch copy_ (same bytes)", ms, 2 * m * n * 4 / (ms * 1e-3) / 1e9))
    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}  transpose {m}x{n} f32")
    print(f"{'implementation':34} {'ms':>9} {'GB/s':>8}")
    for label, ms, bw in rows:
        print(f"{label:34} {ms:9.4f} {bw:8.1f}")
    ours = max((r for r in rows if r[0].startswith("tilec")), key=lambda r: r[2])
    copy = max(r[2] for r in rows if "copy" in r[0] or "Memcpy" in r[0])
    torch_t = [r for r in rows if r[0].startswith("torch x.t")][0]
    print(f"SUMMARY transpose f32 {m}x{n}: best tilec {ours[0]} {ours[2]:.0f} GB/s = "
          f"{ours[2] / copy:.3f} of the best copy ({copy:.0f} GB/s); torch {torch_t[2]:.0f} GB/s")


if __name__ == "__main__":
    main()
