"""Shared helpers of the bench/*.py harnesses."""
import re
import subprocess
import sys
import time

import torch


def median_ms(fn, iters, warmup=10, reps=1):
    """Median GPU time of fn() over `iters` runs after `warmup`, with CUDA
    events; with reps > 1 each run times `reps` back-to-back calls and counts
    their mean (so a launch's CPU cost does not pad a short kernel)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iters):
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / reps)
    times.sort()
    return times[len(times) // 2]


def interleaved(impls, rounds, iters, reps=1):
    """{name: [median_ms per round]} for the callables in `impls`, timed
    round by round in turn (A B A B: the GPU's clock drifts under load, so
    each round sees every implementation at about the same clock)."""
    times = {name: [] for name in impls}
    for _ in range(rounds):
        for name, f in impls.items():
            times[name].append(median_ms(f, iters, reps=reps))
    return times


BENCH_LINE = re.compile(
    r"BENCH (?P<impl>\S+) (?:(?P<job>\S+) )?n=(?P<n>\S+)(?: threads=(?P<threads>\d+))? "
    r"(?P<ms>[\d.]+) ms (?P<gbps>[\d.]+) GB/s")


def tilec_bench(tilec_check, args):
    """Runs `tilec-check ARGS --bench ...` and returns its BENCH lines as dicts
    (impl: "tilec" or "memcpy_d2d", job, n, threads, ms, gbps); exits on failure."""
    out = subprocess.run([tilec_check] + args, capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stdout, out.stderr)
        sys.exit("tilec-check failed")
    rows = []
    for line in out.stdout.splitlines():
        m = BENCH_LINE.match(line)
        if m:
            r = m.groupdict()
            r["ms"], r["gbps"] = float(r["ms"]), float(r["gbps"])
            rows.append(r)
    return rows


def sustained_ms(fn, seconds):
    """Calls fn back to back for `seconds`; the mean time per call over the
    second half (the clock has settled under the power cap by then)."""
    torch.cuda.synchronize()
    start = time.time()
    n = 0
    while time.time() - start < seconds / 2:
        for _ in range(20):
            fn()
        n += 20
        torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    calls = max(20, n)
    e0.record()
    for _ in range(calls):
        fn()
    e1.record()
    e1.synchronize()
    return e0.elapsed_time(e1) / calls
