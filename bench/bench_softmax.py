#!/usr/bin/env python3
"""Side-by-side row softmax (fp32): tilec (examples/softmax.tile through
tilec-check --bench), Triton's row-per-program softmax and torch.softmax, in
one GPU session. GB/s counts reading x once and writing y once; medians of
CUDA-event timings after warm-up.

usage: bench/bench_softmax.py [--tilec-check PATH] [--iters N]
"""
import argparse, os

import torch

import triton
import triton.language as tl

from benchlib import median_ms, tilec_bench


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_stride + offs, num / tl.sum(num, axis=0), mask=mask)




def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tilec-check", default="tilec-check")
    ap.add_argument("--iters", type=int, default=100)
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rows = []
    for (m, n, bn) in [(8192, 8192, 8192), (16384, 1000, 1024)]:
        nbytes = 2 * m * n * 4
        for warps in (0, 2, 4, 8, 16):  # 0: the compiler's choice
            for r in tilec_bench(args.tilec_check, [os.path.join(root, "examples/softmax.tile"),
                                                    "-D", f"BN={bn}", "--num-warps", str(warps),
                                                    "--shape", f"{m}x{n}", "--bench", str(args.iters),
                                                    "--no-verify"]):
                if r["impl"] == "tilec":
                    label = "auto" if warps == 0 else "forced"
                    rows.append((f"{m}x{n}", f"tilec BN={bn} threads={r['threads']} ({label})", r["ms"], r["gbps"]))
                elif warps == 0:
                    rows.append((f"{m}x{n}", "device copy (same bytes)", r["ms"], r["gbps"]))
        x = torch.randn(m, n, device="cuda")
        y = torch.empty_like(x)
        ms = median_ms(lambda: torch.softmax(x, dim=1), args.iters)
        rows.append((f"{m}x{n}", "torch.softmax(x, dim=1)", ms, nbytes / (ms * 1e-3) / 1e9))
        block = triton.next_power_of_2(n)
        for warps in (4, 8, 16):
            ms = median_ms(lambda: softmax_kernel[(m,)](y, x, x.stride(0), y.stride(0), n, BLOCK=block, num_warps=warps), args.iters)
            rows.append((f"{m}x{n}", f"triton BLOCK={block} warps={warps}", ms, nbytes / (ms * 1e-3) / 1e9))
        ref = torch.softmax(x, dim=1)
        softmax_kernel[(m,)](y, x, x.stride(0), y.stride(0), n, BLOCK=block, num_warps=8)
        assert torch.allclose(y, ref, atol=1e-6, rtol=1e-4), "triton softmax mismatch"
    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}  triton {triton.__version__}")
    print(f"{'shape':12} {'implementation':36} {'ms':>9} {'GB/s':>8}")
    for shape, impl, ms, bw in sorted(rows, key=lambda r: (r[0], -r[3])):
        print(f"{shape:12} {impl:36} {ms:9.4f} {bw:8.1f}")
    for shape in sorted({r[0] for r in rows}):
        ours = max(r[3] for r in rows if r[0] == shape and r[1].startswith("tilec") and "auto" in r[1])
        tri = max(r[3] for r in rows if r[0] == shape and r[1].startswith("triton"))
        tor = max(r[3] for r in rows if r[0] == shape and r[1].startswith("torch"))
        print(f"SUMMARY softmax {shape}: tilec (default warps) {ours:.0f} GB/s, triton {tri:.0f} GB/s ({ours / tri:.3f}x), torch {tor:.0f} GB/s ({ours / tor:.3f}x)")


if __name__ == "__main__":
    main()
