#!/usr/bin/env python3
"""Compiles kernels built from pieces of mma programs: where the mmas sit
(in the loop over K, before or after it, in an outer loop, in an 'if', at
the top level without a loop), what their operands are (loaded in the
loop, before it, after it, computed, transposed) and what else the kernel
does, on sm_90a and sm_80. Every compile must end in PTX that ptxas
assembles (strict: no wgmma serialization) or in an error located at
file:line:col; crashes, internal errors, unlocated errors and ptxas
failures are reported. What runs correctly is the tests' job; this checks
that the planner answers every form.

usage: scripts/mma-forms-sweep.py [-v]   (-v also prints each refusal)
Environment: TILEC (default build/bin/tilec), PTXAS (default ptxas on PATH)."""
import itertools, os, sys, tempfile
from multiprocessing import Pool
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweeplib import compile_verdict  # noqa: E402

HEAD = """kernel k<BM: int = 128, BN: int = 64, BK: int = 64, T: type = bf16>(
    X: tensor<T, 2>, W: tensor<T, 2>, V: tensor<T, 2>, Y: tensor<f32, 2>)
    grid(cdiv(Y.shape[0], BM), 1)
{
    let m = block_id(0);
"""
# What the loop over K does (acc: [BM, BN], h: [BM, BN]).
INNER = {
    "acc": "acc = mma(load(X, [m, k], [BM, BK]), load(W, [k, 0], [BK, BN]), acc);",
    "acc_nt": "acc = mma(load(X, [m, k], [BM, BK]), transpose(load(V, [0, k], [BN, BK])), acc);",
    "two": "let x = load(X, [m, k], [BM, BK]);\n acc = mma(x, load(W, [k, 0], [BK, BN]), acc);\n"
           " h = mma(x, load(W, [k, 1], [BK, BN]), h);",
    "softmaxish": "let s = mma(load(X, [m, k], [BM, BK]), load(W, [k, 0], [BK, BN]), zeros<f32>([BM, BN]));\n"
                  " acc = acc + exp(s - expand_dims(max(s, axis = 1), 1));",
    "none": "acc = acc + 1.0;",
}
# Before the loop.
PRE = {
    "": "",
    "load_a": "let q = load(X, [m, 0], [BM, BK]);",
    "mma_before": "acc = mma(load(X, [m, 0], [BM, BK]), load(W, [0, 0], [BK, BN]), acc);",
}
# After the loop (a chained mma, or not).
POST = {
    "": "",
    "chained_b_loaded": "acc = mma(cast<T>(h), load(V, [0, 0], [BN, BN]), acc);",
    "chained_b_transposed": "acc = mma(cast<T>(h), transpose(load(V, [0, 0], [BN, BN])), acc);",
    "chained_computed_b": "acc = mma(cast<T>(h), cast<T>(acc), acc);",
    "chained_resident_a": "acc = mma(q, load(W, [0, 0], [BK, BN]), acc);",
    "chained_in_if": "if X.shape[1] > 0 { acc = mma(cast<T>(h), load(V, [0, 0], [BN, BN]), acc); }",
    "second_loop": "for k2 in 0 .. 2 { h = mma(load(X, [m, k2], [BM, BK]), load(W, [k2, 0], [BK, BN]), h); }",
    "store_then_load": "store(V, [0, 0], cast<T>(acc));\n acc = mma(cast<T>(h), load(V, [0, 0], [BN, BN]), acc);",
}
OUTER = ["none", "outer", "outer_store"]

def kernel(outer, pre, inner, post):
    body = "    var acc = zeros<f32>([BM, BN]);\n    var h = zeros<f32>([BM, BN]);\n"
    body += "    " + PRE[pre] + "\n"
    body += "    for k in 0 .. cdiv(X.shape[1], BK) {\n        " + INNER[inner] + "\n    }\n"
    body += "    " + POST[post] + "\n"
    store = "    store(Y, [m, 0], acc + h);\n"
    if outer == "none":
        return HEAD + body + store + "}\n"
    inner_store = store if outer == "outer_store" else ""
    text = HEAD + "    var total = zeros<f32>([BM, BN]);\n    for j in 0 .. 3 {\n"
    text += "\n".join("    " + l for l in body.splitlines()) + "\n"
    text += inner_store + "        total = total + acc;\n    }\n"
    return text + ("" if outer == "outer_store" else "    store(Y, [m, 0], total);\n") + "}\n"

def job(args):
    name, text, arch = args
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, name + ".tile")
        with open(src, "w") as f:
            f.write(text)
        kind, msg = compile_verdict(src, arch, [], d)
    if kind == "REFUSED":
        msg = msg.split("error: ", 1)[-1]
    return (kind, name, arch, msg)

def main():
    jobs = []
    for outer, pre, inner, post in itertools.product(OUTER, PRE, INNER, POST):
        name = "_".join(x or "plain" for x in (outer, pre, inner, post))
        for arch in ("sm_90a", "sm_80"):
            jobs.append((name, kernel(outer, pre, inner, post), arch))
    counts = {}
    with Pool(2) as pool:
        for kind, name, arch, msg in pool.imap_unordered(job, jobs):
            counts[kind] = counts.get(kind, 0) + 1
            if kind not in ("OK", "REFUSED") or (kind == "REFUSED" and "-v" in sys.argv):
                print(kind, name, arch, "|", msg.strip().replace("\n", " | ")[:600], flush=True)
    print(counts)
    return 0 if set(counts) <= {"OK", "REFUSED"} else 1

if __name__ == "__main__":
    sys.exit(main())
