"""What scripts/param-sweep.py and scripts/mma-forms-sweep.py share: the
tools, and the verdict on one compile (PTX that the tests' strict ptxas
assembles, or an error located at file:line:col; anything else is a
failure to report)."""
import os, re, shutil, subprocess
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TILEC = os.environ.get("TILEC", os.path.join(ROOT, "build", "bin", "tilec"))
PTXAS = ["bash", os.path.join(ROOT, "scripts", "ptxas-strict.sh"),
         os.environ.get("PTXAS", shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas")]


def compile_verdict(src, arch, args, tmp):
    """Compiles `src` for `arch` with tilec's extra `args` into `tmp` and
    returns (kind, message): OK, REFUSED (the first error's text), or
    TIMEOUT, CRASH, INTERNAL, UNLOCATED, PTXAS (the output's tail)."""
    cmd = [TILEC, src, "--arch=" + arch, "-o", tmp + "/k.ptx"] + list(args)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return ("TIMEOUT", "")
    err = r.stderr
    if r.returncode < 0 or r.returncode > 1:
        return ("CRASH", err[-1500:])
    if "internal error" in err or "LLVM ERROR" in err or "Assertion" in err or \
            "PLEASE submit" in err or "failed to legalize" in err:
        return ("INTERNAL", err[-1500:])
    if r.returncode == 1:
        # every error line located file:line:col, or a tilec: -D error
        lines = [l for l in err.splitlines() if "error:" in l]
        bad = [l for l in lines if not re.search(r"\.tile:\d+:\d+: error:", l)
               and not l.startswith("tilec: error: -D")]
        if bad or not lines:
            return ("UNLOCATED", err[-1500:])
        return ("REFUSED", lines[0][:300])
    p = subprocess.run(PTXAS + ["-arch=" + arch, tmp + "/k.ptx", "-o", tmp + "/k.cubin"],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return ("PTXAS", (p.stdout + p.stderr)[-1500:])
    return ("OK", "")
