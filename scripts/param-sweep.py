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
import os, random, re, shutil, subprocess, sys, tempfile
from multiprocessing import Pool
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TILEC = os.environ.get("TILEC", os.path.join(ROOT, "build", "bin", "tilec"))
PTXAS = ["bash", os.path.join(ROOT, "scripts", "ptxas-strict.sh"),
         os.environ.get("PTXAS", shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas")]
GRID = {
  "matmul.tile": {"BM": [16, 64, 128, 192, 256], "BN": [8, 16, 32, 48, 64, 96, 128, 160, 192, 208, 256], "BK": [16, 32, 64, 128], "STAGES": [0, 1, 2, 3, 4, 5], "T": ["bf16", "f16", "f32"]},
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
    with tempfile.TemporaryDirectory() as d:
        cmd = [TILEC, os.path.join(ROOT, "examples", f), "--arch=" + arch, "-o", d + "/k.ptx"]
        if kernel: cmd += ["--kernel", kernel]
        for k, v in defs: cmd += ["-D", f"{k}={v}"]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return ("TIMEOUT", cmd, "")
        err = r.stderr
        if r.returncode < 0 or r.returncode > 1:
            return ("CRASH", cmd, err[-2000:])
        if "internal error" in err or "LLVM ERROR" in err or "Assertion" in err or "PLEASE submit" in err:
            return ("INTERNAL", cmd, err[-2000:])
        if r.returncode == 1:
            # every error line located file:line:col, or a tilec: -D error
            lines = [l for l in err.splitlines() if "error:" in l]
            bad = [l for l in lines if not re.search(r"\.tile:\d+:\d+: error:", l) and not l.startswith("tilec: error: -D")]
            if bad or not lines:
                return ("UNLOCATED", cmd, err[-1500:])
            return ("REFUSED", cmd, lines[0][:300])
        p = subprocess.run(PTXAS + ["-arch=" + arch, d + "/k.ptx", "-o", d + "/k.cubin"], capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            return ("PTXAS", cmd, (p.stdout + p.stderr)[-1500:])
        return ("OK", cmd, "")
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
                print("###", kind, " ".join(cmd[1:]).replace(ROOT + "/", ""), "\n", msg, flush=True)
            elif kind == "REFUSED" and "-v" in sys.argv:
                print("REFUSED", " ".join(cmd[1:]).replace(ROOT + "/", ""), "|", msg, flush=True)
    print(counts)
    return 0 if set(counts) <= {"OK", "REFUSED"} else 1


if __name__ == "__main__":
    sys.exit(main())
