#!/usr/bin/env python3
"""Compiles the example kernels over random compile-time parameters and
architectures, and reports every compile that does not end in either PTX
that ptxas assembles (strict: no wgmma serialization) or an error located
at file:line:col: crashes, internal errors, unlocated errors, ptxas
failures, time-outs.

usage: scripts/param-sweep.py N SEED [-v]   (-v also prints each refusal)
Environment: TILEC (default build/bin/tilec), PTXAS (default ptxas on PATH,
else /usr/local/cuda/bin/ptxas). Two workers; about 1 s per compile on the
dev machine."""
import os, random, sys, tempfile
from multiprocessing import Pool
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweeplib import ROOT, compile_verdict  # noqa: E402
GRID = {
  "matmul.tile": {"BM": [16, 64, 128, 192, 256], "BN": [8, 16, 24, 32, 48, 64, 72, 96, 128, 160, 192, 200, 208, 248, 256], "BK": [16, 32, 64, 128], "STAGES": [0, 1, 2, 3, 4, 5], "T": ["bf16", "f16", "f32"]},
  "attention.tile": {"D": [16, 32, 48, 64, 80, 96, 112, 128, 160, 192, 256], "BN": [16, 32, 64, 80, 96, 128, 176, 256], "WG": [1, 2, 3], "CAUSAL": [0, 1], "PERSISTENT": [0, 1], "LAYOUT": [0, 1], "STAGES": [0, 2, 3, 4], "T": ["bf16", "f16"], "LSE": [0, 1]},
  "attention_backward.tile": {"D": [16, 32, 64, 96, 128, 192], "BM": [32, 64, 128], "BN": [16, 32, 64, 128], "CAUSAL": [0, 1], "T": ["bf16", "f16"]},
  "mlp.tile": {"BM": [64, 128, 192], "BH": [32, 64, 128], "BN": [32, 64, 128, 256], "BK": [32, 64, 128], "STAGES": [0, 2, 3, 4], "T": ["bf16", "f16"]},
  "lora.tile": {"BM": [64, 128, 192], "BN": [32, 64, 128, 256], "BK": [32, 64, 128], "R": [8, 16, 32, 64, 128], "STAGES": [0, 2, 3, 4], "T": ["bf16", "f16"]},
  "matmul_fp8.tile": {"BM": [64, 128, 192, 256], "STAGES": [0, 2, 3, 4], "O": ["bf16", "f32"]},
  "matmul_stats.tile": {"BM": [64, 128, 192], "BN": [64, 128, 256], "BK": [32, 64], "GROUP": [0, 8], "T": ["bf16", "f16"]},
  "matmul_softmax.tile": {},
  "layernorm.tile": {}, "softmax.tile": {}, "segment_sum.tile": {}, "rowstats.tile": {}, "fused2d.tile": {},
}
def job(args):
    f, arch, defs, kernel = args
    extra = (["--kernel", kernel] if kernel else []) + [x for k, v in defs for x in ("-D", f"{k}={v}")]
    with tempfile.TemporaryDirectory() as d:
        kind, msg = compile_verdict(os.path.join(ROOT, "examples", f), arch, extra, d)
    return (kind, [f, "--arch=" + arch] + extra, msg)
def main():
    n = int(sys.argv[1]); seed = int(sys.argv[2])
    rnd = random.Random(seed)
    jobs = []
    files = [f for f in GRID if GRID[f]]
    for i in range(n):
        f = rnd.choice(files)
        g = GRID[f]
        keys = [k for k in g if rnd.random() < 0.6]
        defs = [(k, rnd.choice(g[k])) for k in keys]
        arch = rnd.choice(["sm_90a", "sm_90a", "sm_80", "sm_90"])
        jobs.append((f, arch, defs, None))
    counts = {}
    with Pool(2) as pool:
        for kind, cmd, msg in pool.imap_unordered(job, jobs):
            counts[kind] = counts.get(kind, 0) + 1
            if kind not in ("OK", "REFUSED"):
                print("###", kind, " ".join(cmd), "\n", msg, flush=True)
            elif kind == "REFUSED" and "-v" in sys.argv:
                print("REFUSED", " ".join(cmd), "|", msg, flush=True)
    print(counts)
    return 0 if set(counts) <= {"OK", "REFUSED"} else 1


if __name__ == "__main__":
    sys.exit(main())
