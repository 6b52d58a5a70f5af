"""Reductions over the rows of [R, N] tiles (examples/rowstats.tile,
combine.tile's rowmax_abs and rowargmax2, fold.tile, argmax.tile's
rowargmax, softmax.tile and layernorm.tile on ragged rows) through the Python
package against torch's equivalents, interleaved in one process (CUDA
events, medians after warm-up, each sample the mean of 10 back-to-back
launches; bench/benchlib.py).

    python3 bench/bench_rows.py [--rounds 3] [--iters 200]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
sys.path.insert(0, os.path.dirname(__file__))
import tilec  # noqa: E402
from benchlib import interleaved  # noqa: E402

ex = os.path.join(os.path.dirname(__file__), "..", "examples")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=200)
    a = ap.parse_args()
    rowstats = tilec.load(os.path.join(ex, "rowstats.tile"))
    combine = tilec.load(os.path.join(ex, "combine.tile"))
    fold = tilec.load(os.path.join(ex, "fold.tile"))
    argmax = tilec.load(os.path.join(ex, "argmax.tile"))
    softmax = tilec.load(os.path.join(ex, "softmax.tile"))
    norm = tilec.load(os.path.join(ex, "layernorm.tile"))
    cases = []
    x = torch.randn(16384, 1000, device="cuda")
    s = torch.empty(16384, device="cuda"); m = torch.empty_like(s)
    cases.append(("rowstats 16384x1000 f32", x.numel() * 4, {
        "tilec": rowstats.rowstats.bind(x, s, m),
        "torch": lambda: (x.sum(1), x.amax(1))}))
    xb = x.bfloat16(); sb = s.bfloat16(); mb = m.bfloat16()
    cases.append(("rowstats 16384x1000 bf16", xb.numel() * 2, {
        "tilec": rowstats.rowstats.bind(xb, sb, mb),
        "torch": lambda: (xb.float().sum(1), xb.amax(1))}))
    x3 = torch.randn(16384, 3000, device="cuda")
    m3 = torch.empty(16384, device="cuda")
    b3 = torch.empty(16384, device="cuda", dtype=torch.int32)
    cases.append(("rowmax_abs 16384x3000 (BN 4096, R 2)", x3.numel() * 4, {
        "tilec": combine.rowmax_abs.bind(x3, m3, BN=4096, R=2),
        "torch": lambda: x3.abs().amax(1)}))
    cases.append(("rowargmax2 16384x3000 (BN 4096, R 2)", x3.numel() * 4, {
        "tilec": combine.rowargmax2.bind(x3, b3, BN=4096, R=2),
        "torch": lambda: x3.argmax(1)}))
    x1 = torch.randn(16384, 1000, device="cuda")
    m1 = torch.empty(16384, device="cuda")
    cases.append(("rowmax_abs 16384x1000 (defaults)", x1.numel() * 4, {
        "tilec": combine.rowmax_abs.bind(x1, m1),
        "torch": lambda: x1.abs().amax(1)}))
    xf = torch.randn(65536, 64, device="cuda"); yf = torch.empty(65536, 32, device="cuda")
    cases.append(("fold 65536x64", xf.numel() * 4 + yf.numel() * 4, {
        "tilec": fold.fold.bind(xf, yf),
        "torch": lambda: (xf[:, :32] + xf[:, 32:]) - (xf[:, :32] + xf[:, 32:]).amax(1, keepdim=True)}))
    # One row per program, rows of 1000 in tiles of 1024: every tile is an
    # edge tile (masked 16-byte vectors since session 26).
    xa = torch.randn(16384, 1000, device="cuda")
    ia = torch.empty(16384, device="cuda", dtype=torch.int32)
    cases.append(("rowargmax 16384x1000 f32", xa.numel() * 4, {
        "tilec": argmax.rowargmax.bind(xa, ia),
        "torch": lambda: xa.argmax(1)}))
    ya = torch.empty_like(xa)
    cases.append(("softmax 16384x1000 f32", xa.numel() * 8, {
        "tilec": softmax.softmax.bind(xa, ya),
        "torch": lambda: torch.softmax(xa, 1)}))
    xab = xa.bfloat16(); yab = torch.empty_like(xab)
    cases.append(("softmax 16384x1000 bf16", xab.numel() * 4, {
        "tilec": softmax.softmax.bind(xab, yab),
        "torch": lambda: torch.softmax(xab, 1)}))
    w = torch.randn(1000, device="cuda"); bias = torch.randn(1000, device="cuda")
    cases.append(("layernorm 16384x1000 f32", xa.numel() * 8, {
        "tilec": norm.layernorm.bind(xa, w, bias, ya, 1e-5),
        "torch": lambda: torch.nn.functional.layer_norm(xa, (1000,), w, bias, 1e-5)}))
    for name, nbytes, impls in cases:
        for impl in impls.values():  # compile and warm up outside the timing
            impl()
        torch.cuda.synchronize()
        res = interleaved(impls, a.rounds, a.iters, reps=10)
        line = " | ".join(f"{k} " + " ".join(f"{t:.4f}" for t in v) + " ms"
                          f" ({nbytes / min(v) / 1e6:.0f} GB/s)" for k, v in res.items())
        print(f"{name}: {line}", flush=True)


if __name__ == "__main__":
    main()
