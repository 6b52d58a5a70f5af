#!/usr/bin/env python3
"""Side-by-side bandwidth of SAXPY and vector add on the GPU machine.

Runs, in one process tree and one GPU session: tilec's kernels (through
tilec-check --bench, which times them and a device-to-device copy with CUDA
events), torch (y.add_(x, alpha=a) and torch.add), the same jobs written in
Triton, and torch's device-to-device copy. Every figure is the median of
ITERS timed runs after warm-up, in GB/s of bytes that must move (SAXPY:
read x and y, write y; vadd: read x and y, write z; copy: read + write).

usage: bench/bench_elementwise.py [--tilec-check PATH] [--iters N]
"""
import argparse, os

import torch

import triton
import triton.language as tl

from benchlib import median_ms, tilec_bench


@triton.jit
def saxpy_kernel(x_ptr, y_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(y_ptr + offs, a * x + y, mask=m)


@triton.jit
def vadd_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)




def gbps(nbytes, ms):
    return nbytes / (ms * 1e-3) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tilec-check", default="tilec-check")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--sizes", default="268435456,1000003")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rows = []  # (job, n, impl, ms, GB/s)

    # tilec: several block sizes, best reported, all listed.
    for block, warps in [(1024, 0), (2048, 0), (4096, 0)]:
        cmd = [args.tilec_check, os.path.join(root, "examples/saxpy.tile"),
               os.path.join(root, "examples/vadd.tile"), "-D", f"BLOCK={block}",
               "--bench", str(args.iters), "--no-verify"] + sum([["--size", str(n)] for n in sizes], [])
        if warps:
            cmd += ["--num-warps", str(warps)]
        for r in tilec_bench(cmd[0], cmd[1:]):
            if r["impl"] == "tilec":
                rows.append((r["job"], int(r["n"]), f"tilec BLOCK={block} threads={r['threads']}", r["ms"], r["gbps"]))
            elif block == 1024 and warps == 0:
                rows.append(("copy", int(r["n"]), "cuMemcpyDtoD (tilec runtime)", r["ms"], r["gbps"]))

    for n in sizes:
        x = torch.randn(n, device="cuda")
        y = torch.randn(n, device="cuda")
        z = torch.empty_like(x)
        a = 1.5
        nb = 3 * 4 * n
        rows.append(("saxpy", n, "torch y.add_(x, alpha=a)", *(lambda ms: (ms, gbps(nb, ms)))(median_ms(lambda: y.add_(x, alpha=a), args.iters))))
        rows.append(("vadd", n, "torch.add(x, y, out=z)", *(lambda ms: (ms, gbps(nb, ms)))(median_ms(lambda: torch.add(x, y, out=z), args.iters))))
        for block, warps in [(1024, 4), (2048, 4), (4096, 8)]:
            grid = (triton.cdiv(n, block),)
            ms = median_ms(lambda: saxpy_kernel[grid](x, y, a, n, BLOCK=block, num_warps=warps), args.iters)
            rows.append(("saxpy", n, f"triton BLOCK={block} warps={warps}", ms, gbps(nb, ms)))
            ms = median_ms(lambda: vadd_kernel[grid](x, y, z, n, BLOCK=block, num_warps=warps), args.iters)
            rows.append(("vadd", n, f"triton BLOCK={block} warps={warps}", ms, gbps(nb, ms)))
        ms = median_ms(lambda: z.copy_(x), args.iters)
        rows.append(("copy", n, "torch z.copy_(x)", ms, gbps(2 * 4 * n, ms)))

    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}  triton {triton.__version__}  iters={args.iters}")
    print(f"{'job':6} {'n':>10}  {'implementation':40} {'ms':>9} {'GB/s':>8}")
    for job, n, impl, ms, bw in sorted(rows, key=lambda r: (r[0], -r[1], -r[4])):
        print(f"{job:6} {n:>10}  {impl:40} {ms:9.4f} {bw:8.1f}")
    print()
    for job in ("saxpy", "vadd"):
        for n in sizes:
            ours = max(r[4] for r in rows if r[0] == job and r[1] == n and r[2].startswith("tilec"))
            tri = max(r[4] for r in rows if r[0] == job and r[1] == n and r[2].startswith("triton"))
            tor = max(r[4] for r in rows if r[0] == job and r[1] == n and r[2].startswith("torch"))
            print(f"SUMMARY {job} n={n}: tilec {ours:.0f} GB/s, triton {tri:.0f} GB/s "
                  f"({ours / tri:.3f}x), torch {tor:.0f} GB/s ({ours / tor:.3f}x)")


if __name__ == "__main__":
    main()
