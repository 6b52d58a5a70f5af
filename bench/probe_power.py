#!/usr/bin/env python3
"""Power and clock probe (issue 15): tilec's matmul against cuBLAS (torch.mm)
on the same shape with random-normal data and with small-integer data, in
the same process, interleaved. For each (data, implementation) it reports the
burst median (CUDA events over --reps back-to-back calls, medians of --iters
after warm-up) and a sustained figure: the mean over the last second of a
--soak-second run of back-to-back calls, with the SM clock and board power
nvidia-smi sampled during that last second.

usage: bench/probe_power.py [--shape MxNxK] [--config matmul:BMxBN|persistent:BMxBN]
                            [--soak S] [--rounds R]
"""
import argparse
import os
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import median_ms  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--shape", default="4096x4096x4096")
ap.add_argument("--config", default="matmul:128x256")
ap.add_argument("--soak", type=float, default=3.0)
ap.add_argument("--rounds", type=int, default=2)
args = ap.parse_args()
m, n, k = (int(v) for v in args.shape.split("x"))
kind, tile = args.config.split(":")
bm, bn = (int(v) for v in tile.split("x"))
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
prog = tilec.load(os.path.join(root, "examples", "matmul.tile"), O="bf16").with_defines(BM=bm, BN=bn)
kern = prog.matmul if kind == "matmul" else prog.matmul_persistent

smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw",
                        "--format=csv,noheader,nounits", "-lms", "100"],
                       stdout=subprocess.PIPE, text=True)
samples = []  # (host time, MHz, W), read after the run


def sustained(fn):
    """Back-to-back calls for args.soak seconds; the mean time per call over
    the last second and its host-time window."""
    ev = []
    t0 = time.time()
    while time.time() - t0 < args.soak:
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        ev.append((time.time(), e))
        for _ in range(20):
            fn()
    torch.cuda.synchronize()
    t_end = time.time()
    tail = [x for x in ev if x[0] > t0 + args.soak - 1.0]
    calls = 20 * (len(tail) - 1)
    ms = tail[0][1].elapsed_time(tail[-1][1]) / calls
    return ms, (tail[0][0], t_end)


flops = 2.0 * m * n * k
rows = []
for data in ("randn", "int"):
    if data == "randn":
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    else:
        a = torch.randint(-2, 3, (m, k), device="cuda").to(torch.bfloat16)
        b = torch.randint(-2, 3, (k, n), device="cuda").to(torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    kern(a, b, c)
    torch.testing.assert_close(c.float(), torch.mm(a.float(), b.float()), rtol=2e-2, atol=2e-1)
    impls = [("cuBLAS", lambda: torch.mm(a, b)), (f"tilec {args.config}", lambda: kern(a, b, c))]
    for r in range(args.rounds):
        for name, fn in impls:
            time.sleep(1.0)
            burst = median_ms(fn, 20, reps=10)
            ms, window = sustained(fn)
            rows.append((data, r, name, burst, ms, window))
smi.terminate()
out, _ = smi.communicate()
for line in out.splitlines():
    try:
        ts, mhz, w = (x.strip() for x in line.split(","))
        t = time.mktime(time.strptime(ts.split(".")[0], "%Y/%m/%d %H:%M:%S")) + float("0." + ts.split(".")[1])
        samples.append((t, float(mhz), float(w)))
    except (ValueError, IndexError):
        pass
print(f"GPU: {torch.cuda.get_device_name()}  {args.shape} {args.config}  soak {args.soak} s")
for data, r, name, burst, ms, (t0, t1) in rows:
    win = [s for s in samples if t0 <= s[0] <= t1]
    mhz = sum(s[1] for s in win) / len(win) if win else float("nan")
    w = sum(s[2] for s in win) / len(win) if win else float("nan")
    print(f"{data:5} round {r} {name:24} burst {burst:8.4f} ms {flops / burst / 1e9:7.1f} TF/s"
          f"  sustained {ms:8.4f} ms {flops / ms / 1e9:7.1f} TF/s  {mhz:6.0f} MHz {w:5.0f} W ({len(win)} samples)")
