#!/usr/bin/env python3
"""Matmul on the tensor cores: tilec (examples/matmul.tile via tilec-check
--bench) next to cuBLAS (torch.matmul) and a Triton matmul in one GPU
session. TF/s counts 2*M*N*K flops; medians of CUDA-event timings after
warm-up, each timing the mean of --reps back-to-back launches for every
implementation alike (so Python's launch cost does not pad short kernels).
The fused case compares tilec's matmul_bias_gelu (bias add, GELU
and the bf16 cast in the epilogue) with torch's matmul followed by
bias + gelu. Every implementation reads bf16 A and B and writes bf16 C.

usage: bench/bench_matmul.py [--tilec-check PATH] [--iters N] [--reps R]
                             [--configs KERNEL:BMxBNxBK,...] [--shapes MxNxK,...]
                             [--csv FILE]
"""
import argparse, os

import torch
import torch.nn.functional as F

from benchlib import median_ms, tilec_bench

try:
    import triton
    import triton.language as tl

    @triton.autotune(
        configs=[
            triton.Config({"BM": 128, "BN": 256, "BK": 64, "GM": 8}, num_stages=3, num_warps=8),
            triton.Config({"BM": 128, "BN": 128, "BK": 64, "GM": 8}, num_stages=4, num_warps=4),
            triton.Config({"BM": 128, "BN": 128, "BK": 64, "GM": 8}, num_stages=4, num_warps=8),
            triton.Config({"BM": 64, "BN": 128, "BK": 64, "GM": 8}, num_stages=4, num_warps=4),
        ],
        key=["M", "N", "K"],
    )
    @triton.jit
    def _triton_matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr):
        pid = tl.program_id(0)
        npm, npn = tl.cdiv(M, BM), tl.cdiv(N, BN)
        group = GM * npn
        first = (pid // group) * GM
        gm = min(npm - first, GM)
        pm = first + ((pid % group) % gm)
        pn = (pid % group) // gm
        rm = (pm * BM + tl.arange(0, BM)) % M
        rn = (pn * BN + tl.arange(0, BN)) % N
        rk = tl.arange(0, BK)
        ap = a + rm[:, None] * sam + rk[None, :] * sak
        bp = b + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            x = tl.load(ap, mask=rk[None, :] < K - k * BK, other=0.0)
            y = tl.load(bp, mask=rk[:, None] < K - k * BK, other=0.0)
            acc = tl.dot(x, y, acc)
            ap += BK * sak
            bp += BK * sbk
        cm = pm * BM + tl.arange(0, BM)
        cn = pn * BN + tl.arange(0, BN)
        tl.store(c + cm[:, None] * scm + cn[None, :] * scn, acc.to(c.dtype.element_ty),
                 mask=(cm[:, None] < M) & (cn[None, :] < N))

    def triton_matmul(a, b, c):
        M, K = a.shape
        N = b.shape[1]
        grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)
        _triton_matmul[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                             c.stride(0), c.stride(1))
except ImportError:
    triton_matmul = None


def tflops(m, n, k, ms):
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12


def f32_main(args):
    """f32 operands on the CUDA cores: tilec next to cuBLAS SGEMM (TF32 off)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    example = os.path.join(root, "examples/matmul.tile")
    shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}  f32 inputs and output, "
          f"TF32 off")
    print(f"{'M x N x K':>20} {'implementation':34} {'ms':>9} {'TF/s':>8}")
    for (m, n, k) in shapes:
        ours = []
        for cfg in args.f32.split(","):
            kernel, tiles = cfg.split(":")
            bm, bn, bk = tiles.split("x")
            flags = ["-D", f"BM={bm}", "-D", f"BN={bn}", "-D", f"BK={bk}"]
            if "tf32" not in kernel:  # matmul_tf32 is f32 throughout
                flags += ["-D", "T=f32", "-D", "O=f32"]
            for r in tilec_bench(args.tilec_check, [example, "--kernel", kernel, *flags,
                                                    "--shape", f"{m}x{n}x{k}",
                                                    "--bench", str(args.iters),
                                                    "--bench-reps", str(args.reps),
                                                    "--no-verify"]):
                if r["impl"] == "tilec":
                    ours.append((f"tilec {kernel} {tiles}", r["ms"]))
        a = torch.randn(m, k, device="cuda", dtype=torch.float32)
        b = torch.randn(k, n, device="cuda", dtype=torch.float32)
        cub = median_ms(lambda: torch.mm(a, b), args.iters, reps=args.reps)
        # TF32 kernels (matmul_tf32) compare with cuBLAS in TF32 mode.
        torch.backends.cuda.matmul.allow_tf32 = True
        cub_tf32 = median_ms(lambda: torch.mm(a, b), args.iters, reps=args.reps)
        torch.backends.cuda.matmul.allow_tf32 = False
        for name, ms in ours + [("cuBLAS SGEMM (torch.mm)", cub),
                                ("cuBLAS TF32 (torch.mm, allow_tf32)", cub_tf32)]:
            print(f"{'x'.join(map(str, (m, n, k))):>20} {name:34} {ms:9.4f} "
                  f"{tflops(m, n, k, ms):8.1f}")
        for kind, peer, peer_name in (("f32", cub, "cuBLAS SGEMM"),
                                      ("tf32", cub_tf32, "cuBLAS TF32")):
            mine = [r for r in ours if ("tf32" in r[0]) == (kind == "tf32")]
            if mine:
                best = min(mine, key=lambda r: r[1])
                print(f"SUMMARY matmul {kind} {m}x{n}x{k}: best {best[0]} "
                      f"{tflops(m, n, k, best[1]):.1f} TF/s, {peer_name} "
                      f"{tflops(m, n, k, peer):.1f} TF/s: {peer / best[1]:.3f}x")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tilec-check", default="tilec-check")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--configs", default="matmul:128x128x64,matmul:128x256x64,"
                                         "matmul_grouped:128x256x64",
                    help="KERNEL:BMxBNxBK,... (kernels of examples/matmul.tile)")
    ap.add_argument("--shapes", default="8192x8192x8192,4096x4096x4096,1000x3000x777,"
                                        "2048x2048x2048,1024x1024x1024")
    ap.add_argument("--csv", default="")
    ap.add_argument("--reps", type=int, default=10,
                    help="back-to-back launches per timed interval (all implementations)")
    ap.add_argument("--arch", default="",
                    help="compile tilec's kernels for this arch (e.g. sm_80: the cp.async + "
                         "mma.sync path, run on this GPU)")
    ap.add_argument("--f32", default="",
                    help="f32 CUDA-core case instead: KERNEL:BMxBNxBK,... configs of "
                         "examples/matmul.tile with T=f32, timed next to torch.mm in f32 "
                         "with TF32 off (cuBLAS SGEMM) on --shapes")
    args = ap.parse_args()
    if args.f32:
        return f32_main(args)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    example = os.path.join(root, "examples/matmul.tile")
    shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
    rows = []  # (shape, impl, ms, tflops)
    reps = args.reps
    # Per shape: every tilec configuration, then cuBLAS and Triton right
    # after, so that clock changes over the run hit all of them alike.
    for (m, n, k) in shapes:
        for cfg in args.configs.split(","):
            kernel, tiles = cfg.split(":")
            bm, bn, bk = tiles.split("x")
            flags = ["-D", f"BM={bm}", "-D", f"BN={bn}", "-D", f"BK={bk}", "-D", "T=bf16",
                     "-D", "O=bf16"] + (["--arch", args.arch] if args.arch else [])
            for r in tilec_bench(args.tilec_check, [example, "--kernel", kernel, *flags,
                                                    "--shape", f"{m}x{n}x{k}",
                                                    "--bench", str(args.iters),
                                                    "--bench-reps", str(reps), "--no-verify"]):
                if r["impl"] == "tilec":
                    # "tilec 128x256x64", "tilec 128x256x64 grouped", "... persistent"
                    name = f"tilec {tiles}" + ("" if kernel == "matmul"
                                               else " " + kernel[len("matmul_"):])
                    rows.append(((m, n, k), name, r["ms"], tflops(m, n, k, r["ms"])))
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        ms = median_ms(lambda: torch.mm(a, b), args.iters, reps=reps)
        rows.append(((m, n, k), "cuBLAS (torch.mm)", ms, tflops(m, n, k, ms)))
        if triton_matmul is not None:
            c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            triton_matmul(a, b, c)
            ms = median_ms(lambda: triton_matmul(a, b, c), args.iters, reps=reps)
            rows.append(((m, n, k), "Triton", ms, tflops(m, n, k, ms)))
    # Fused epilogue: bf16 4096^3 + bias + gelu, bf16 out.
    m = n = k = 4096
    for r in tilec_bench(args.tilec_check, [example, "--kernel", "matmul_bias_gelu", "-D", "T=bf16",
                                            "--shape", f"{m}x{n}x{k}", "--bench", str(args.iters),
                                            "--bench-reps", str(reps), "--no-verify"]):
        if r["impl"] == "tilec":
            rows.append(((m, n, k), "tilec matmul+bias+gelu (fused)", r["ms"], tflops(m, n, k, r["ms"])))
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(n, device="cuda", dtype=torch.float32)
    ms = median_ms(lambda: F.gelu(torch.mm(a, b) + bias, approximate="tanh").to(torch.bfloat16),
                   args.iters, reps=reps)
    rows.append(((m, n, k), "torch mm + bias + gelu", ms, tflops(m, n, k, ms)))

    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}  "
          f"triton {triton.__version__ if triton_matmul else 'n/a'}  bf16 inputs, f32 accumulation")
    print(f"{'M x N x K':>20} {'implementation':34} {'ms':>9} {'TF/s':>8}")
    for shape, impl, ms, tf in rows:
        print(f"{'x'.join(map(str, shape)):>20} {impl:34} {ms:9.4f} {tf:8.1f}")
    for shape in shapes + [(4096, 4096, 4096)]:
        ours = [r for r in rows if r[0] == shape and r[1].startswith("tilec ") and "gelu" not in r[1]
                and "scaled" not in r[1]]
        cub = [r for r in rows if r[0] == shape and r[1].startswith("cuBLAS")]
        if ours and cub:
            best = max(ours, key=lambda r: r[3])
            print(f"SUMMARY matmul bf16 {'x'.join(map(str, shape))}: best tilec {best[1]} "
                  f"{best[3]:.1f} TF/s, cuBLAS {cub[0][3]:.1f} TF/s: {best[3] / cub[0][3]:.3f}x")
    fused = [r for r in rows if "fused" in r[1]]
    unfused = [r for r in rows if "gelu" in r[1] and "torch" in r[1]]
    if fused and unfused:
        print(f"SUMMARY bias+gelu 4096^3: tilec {fused[0][2]:.4f} ms, torch {unfused[0][2]:.4f} ms: "
              f"{unfused[0][2] / fused[0][2]:.2f}x faster")
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("m,n,k,impl,ms,tflops\n")
            for (m, n, k), impl, ms, tf in rows:
                f.write(f"{m},{n},{k},{impl},{ms:.5f},{tf:.2f}\n")


if __name__ == "__main__":
    main()
