#!/usr/bin/env python3
"""LayerNorm and RMSNorm rows in bf16 (32768 x 8192): tilec
(examples/layernorm.tile via tilec-check --bench) next to torch's
F.layer_norm / F.rms_norm in one GPU session. GB/s counts x read, y written
and the weight vectors once; medians of CUDA-event timings after warm-up.

usage: bench/bench_norm.py [--tilec-check PATH] [--iters N]
"""
import argparse, os

import torch

import torch.nn.functional as F

from benchlib import median_ms, tilec_bench




def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tilec-check", default="tilec-check")
    ap.add_argument("--iters", type=int, default=100)
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    m, n = 32768, 8192
    rows = []
    for r in tilec_bench(args.tilec_check, [os.path.join(root, "examples/layernorm.tile"),
                                            "-D", "BN=8192", "-D", "T=bf16", "--shape", f"{m}x{n}",
                                            "--bench", str(args.iters), "--no-verify"]):
        if r["impl"] == "tilec":
            rows.append((r["job"], f"tilec (threads={r['threads']})", r["ms"], r["gbps"]))
    x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    ln_bytes = (2 * m * n + 2 * n) * 2
    rms_bytes = (2 * m * n + n) * 2
    ms = median_ms(lambda: F.layer_norm(x, (n,), w, b, 1e-5), args.iters)
    rows.append(("layernorm", "torch F.layer_norm", ms, ln_bytes / (ms * 1e-3) / 1e9))
    ms = median_ms(lambda: F.rms_norm(x, (n,), w, 1e-5), args.iters)
    rows.append(("rmsnorm", "torch F.rms_norm", ms, rms_bytes / (ms * 1e-3) / 1e9))
    dst = torch.empty_like(x)
    ms = median_ms(lambda: dst.copy_(x), args.iters)
    rows.append(("copy", "torch copy_ (same x bytes)", ms, 2 * m * n * 2 / (ms * 1e-3) / 1e9))
    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}  shape {m}x{n} bf16")
    print(f"{'job':10} {'implementation':30} {'ms':>9} {'GB/s':>8}")
    for job, impl, ms, bw in rows:
        print(f"{job:10} {impl:30} {ms:9.4f} {bw:8.1f}")
    for job in ("layernorm", "rmsnorm"):
        ours = [r for r in rows if r[0] == job and r[1].startswith("tilec")]
        ref = [r for r in rows if r[0] == job and r[1].startswith("torch")]
        if ours and ref:
            print(f"SUMMARY {job} bf16 {m}x{n}: tilec {ours[0][2]:.4f} ms, torch {ref[0][2]:.4f} ms: "
                  f"{ref[0][2] / ours[0][2]:.2f}x faster")


if __name__ == "__main__":
    main()
