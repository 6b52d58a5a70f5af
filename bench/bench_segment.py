#!/usr/bin/env python3
"""Segmented sum over ragged CSR rows of 2^28 f32 values: tilec
(examples/segment_sum.tile via tilec-check --bench, which also verifies the
result and times a device-to-device copy of x) next to torch.segment_reduce
and a torch copy, in one GPU session. The rows: 0 to 32 values (mean 16,
some empty) and four rows of n/16 values (a quarter of the data). GB/s counts
x, the offsets and out once; tilec's time includes zeroing out (a memset
before every launch). Medians of CUDA-event timings after warm-up.

usage: bench/bench_segment.py [--tilec-check PATH] [--iters N]
                              [--configs BLOCK[xWARPS[xK[xMINBLOCKS]]],...]
(MINBLOCKS: --min-blocks-per-sm, blocks per SM the registers must allow; the
kernel's grid is one program per resident block, resident_programs())
"""
import argparse, os

import torch

from benchlib import median_ms, tilec_bench


def ragged_offsets(n, gen):
    """Row offsets like tilec-check's: short rows of 0..32 values and four
    rows of n/16 values at random places."""
    long_len = n // 16
    short_total = n - 4 * long_len
    lengths = torch.randint(0, 33, (short_total // 16 + 1024,), generator=gen)
    csum = torch.cumsum(lengths, 0)
    k = int(torch.searchsorted(csum, torch.tensor(short_total)).item())
    lengths = lengths[: k + 1].clone()
    lengths[-1] -= int(csum[k].item()) - short_total
    places = torch.randint(0, lengths.numel(), (4,), generator=gen).sort().values
    parts, prev = [], 0
    for p in places.tolist():
        parts += [lengths[prev:p], torch.tensor([long_len])]
        prev = p
    parts.append(lengths[prev:])
    lengths = torch.cat(parts)
    assert int(lengths.sum()) == n
    return lengths


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tilec-check", default="tilec-check")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--configs", default="4096x4x512x5,4096x4x256x5",
                    help="BLOCK[xWARPS[xK[xMINBLOCKS]]],...")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    n = 1 << 28
    rows = []
    for cfg in args.configs.split(","):
        block, *rest = cfg.split("x")
        extra = ["--num-warps", rest[0]] if rest and rest[0] != "0" else []
        if len(rest) > 1:
            extra += ["-D", f"K={rest[1]}"]
        if len(rest) > 2:
            extra += ["--min-blocks-per-sm", rest[2]]
        for r in tilec_bench(args.tilec_check, [os.path.join(root, "examples/segment_sum.tile"),
                                                "-D", f"BLOCK={block}",
                                                "--size", str(n), "--bench", str(args.iters)]
                             + extra):
            label = f"tilec BLOCK={block} K={rest[1] if len(rest) > 1 else 512} " \
                f"threads={r['threads']}" + (f" minblocks={rest[2]}" if len(rest) > 2 else "") \
                if r["impl"] == "tilec" else "cuMemcpyDtoD (x bytes)"
            rows.append((label, r["ms"], r["gbps"]))
    gen = torch.Generator().manual_seed(1)
    lengths = ragged_offsets(n, gen)
    nrows = lengths.numel()
    x = torch.rand(n, device="cuda", dtype=torch.float32)
    lengths_d = lengths.to("cuda")
    offsets = torch.zeros(nrows + 1, dtype=torch.int64, device="cuda")
    offsets[1:] = torch.cumsum(lengths_d, 0)
    seg_bytes = n * 4 + (nrows + 1) * 4 + nrows * 4
    try:
        ms = median_ms(lambda: torch.segment_reduce(x, "sum", offsets=offsets), args.iters)
        rows.append(("torch.segment_reduce (offsets)", ms, seg_bytes / (ms * 1e-3) / 1e9))
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"torch.segment_reduce failed: {e}")
    dst = torch.empty_like(x)
    ms = median_ms(lambda: dst.copy_(x), args.iters)
    rows.append(("torch copy_ (x bytes)", ms, 2 * n * 4 / (ms * 1e-3) / 1e9))
    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}  segmented sum of "
          f"{n} f32 values, about {nrows} rows")
    print(f"{'implementation':44} {'ms':>9} {'GB/s':>8}")
    for label, ms, bw in rows:
        print(f"{label:44} {ms:9.4f} {bw:8.1f}")
    ours = max((r for r in rows if r[0].startswith("tilec")), key=lambda r: r[2])
    copy = max(r[2] for r in rows if "copy" in r[0] or "Memcpy" in r[0])
    print(f"SUMMARY segment_sum 2^28 f32: best {ours[0]} {ours[2]:.0f} GB/s = "
          f"{ours[2] / copy:.3f} of the best copy ({copy:.0f} GB/s)")


if __name__ == "__main__":
    main()
