"""Shared helpers of the bench/*.py harnesses."""
import contextlib
import os
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


def interleaved(impls, rounds, iters, reps=1, settle_s=1.0):
    """{name: [median_ms per round]} for the callables in `impls`, timed
    round by round in turn (A B A B: the GPU's clock drifts under load, so
    each round sees every implementation at about the same clock). First
    the implementations run in turn, untimed, for `settle_s` seconds: the
    first timing after the GPU idled (a compile, a check, a new process)
    reads up to 11% fast (H100, docs/performance.md, session 44), which
    would favour whichever implementation comes first. Round r starts at
    the r-th implementation (A B C, B C A, C A B): in a fixed order the
    kernel timed right after torch._scaled_mm read 1-5% low (its median over
    three rounds, in three runs; docs/performance.md, session 55; the cause
    not established), so no implementation is always timed in one place."""
    settle(impls.values(), settle_s)
    times = {name: [] for name in impls}
    order = list(impls.items())
    for r in range(rounds):
        k = r % max(len(order), 1)
        for name, f in order[k:] + order[:k]:
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


def settle(fns, seconds, batch=20):
    """Calls each of `fns` in turn, untimed, `batch` times back to back each,
    until `seconds` have passed; returns how many calls each got."""
    fns = list(fns)
    torch.cuda.synchronize()
    start = time.time()
    n = 0
    while fns and time.time() - start < seconds:
        for fn in fns:
            for _ in range(batch):
                fn()
        n += batch
        torch.cuda.synchronize()
    return n


def sustained_ms(fn, seconds):
    """Calls fn back to back for `seconds`; the mean time per call over the
    second half (the clock has settled under the power cap by then)."""
    n = settle([fn], seconds / 2)
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    calls = max(20, n)
    e0.record()
    for _ in range(calls):
        fn()
    e1.record()
    e1.synchronize()
    return e0.elapsed_time(e1) / calls


def attention_bhsd(lib, q, k, v, out, lse, scale):
    """examples/attention.tile's `attention` in `lib` on torch's [B, H, S, D]
    tensors q, k, v and out, viewed [B * H, S, D] as the kernel takes them
    (lse: [B * H, S] f32)."""
    B, H, S, D = q.shape
    Sk = k.shape[2]
    return lib.attention(q.view(B * H, S, D), k.view(B * H, Sk, D), v.view(B * H, Sk, D),
                         out.view(B * H, S, D), lse, scale)


def tilec_variants(tilec, path, variants, **defines):
    """{name: program}: `path` compiled with `defines` as "tilec" and once
    per --variant "NAME:K=V+K=V" with those parameters on top (SRC=file
    compiles another .tile file instead of `path`)."""
    libs = {"tilec": tilec.load(path, **defines)}
    for v in variants:
        name, defs = v.split(":", 1)
        extra = dict(d.split("=") for d in defs.split("+"))
        src = extra.pop("SRC", path)
        env = {"TILEC_" + k[4:]: extra.pop(k) for k in list(extra) if k.startswith("ENV_")}
        lib = tilec.load(src, **defines, **{k: int(x) for k, x in extra.items()})
        libs[name] = _CompiledWithEnv(lib, env) if env else lib
    return libs


class _CompiledWithEnv:
    """A program whose kernels compile (at their first call) with the
    environment variables `env` set: ENV_X=V in a --variant sets TILEC_X=V,
    e.g. an experiment's knob of the compiler (run with TILEC_CACHE=0, so
    that the variant does not come from the disk cache)."""

    def __init__(self, lib, env):
        self.lib, self.env, self.first = lib, env, True

    def __getattr__(self, kernel):
        fn = getattr(self.lib, kernel)

        def call(*args, **kwargs):
            if not self.first:
                return fn(*args, **kwargs)
            self.first = False
            with environment(self.env):
                return fn(*args, **kwargs)
        return call


def uncached_copy(tilec, path, tag, file_name=None, **defines):
    """`path` compiled from a copy that differs in a trailing comment
    (`tag`), so that none of its kernels comes from the disk cache of
    `path`'s (compiles are cached by the source): for a kernel compiled
    with a compiler knob set, or a second copy of a source timed beside
    the first."""
    with open(path) as f:
        return tilec.compile(f.read() + f"\n// {tag}\n", file_name=file_name or path, **defines)


@contextlib.contextmanager
def environment(env):
    """The environment variables `env` ({name: value}) set for the
    duration of the block (a compiler knob while a kernel compiles), as
    they were afterwards."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                del os.environ[k]
            else:
                os.environ[k] = v


def compare_and_report(label, impls, outs, want, flops, args):
    """Checks each tilec output in `outs` (filled by its impl) against `want`
    (relative to its largest value, 2e-2), then times `impls` interleaved
    for args.rounds rounds and prints TF/s per round, and with
    args.sustain > 0 after back-to-back calls for that many seconds."""
    for name, out in outs.items():
        impls[name]()
        torch.cuda.synchronize()
        err = ((out.float() - want).abs().max() / want.abs().max()).item()
        assert err < 2e-2, f"{name} {label}: relative error {err}"
    times = interleaved(impls, args.rounds, args.iters, args.reps)
    for name, ts in times.items():
        print(f"{label:18} {name:16} " + "  ".join(f"{flops / (t * 1e-3) / 1e12:7.1f}" for t in ts)
              + " TF/s", flush=True)
    for name, fn in impls.items() if args.sustain > 0 else ():
        t = sustained_ms(fn, args.sustain)
        print(f"{label:18} {name:16} {flops / (t * 1e-3) / 1e12:7.1f} TF/s sustained "
              f"({args.sustain:g} s)", flush=True)


def bench_args(shapes, rounds=2, iters=20, reps=3, extra=None):
    """The command line of a bench script: --shapes (default `shapes`),
    --rounds, --iters, --reps, --variant, --sustain, and what `extra(parser)`
    adds."""
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default=shapes)
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument("--iters", type=int, default=iters)
    ap.add_argument("--reps", type=int, default=reps)
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--sustain", type=float, default=0.0)
    if extra:
        extra(ap)
    return ap.parse_args()


def with_compile(parser):
    """`--compile`: also time torch.compile of the peer (an `extra` for
    bench_args)."""
    parser.add_argument("--compile", action="store_true",
                        help="also time torch.compile of torch's version")


def example_path(example):
    """examples/`example` of this checkout."""
    import os
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", example)


def compare_setup(tilec, example, shapes, extra=None, **defines):
    """The command line of a script built on compare_and_report (bench_args,
    with what `extra(parser)` adds) and examples/`example` compiled as
    tilec_variants does: (args, programs)."""
    args = bench_args(shapes, extra=extra)
    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}")
    return args, tilec_variants(tilec, example_path(example), args.variant, **defines)
