"""Launches examples/matmul_fp8.tile's `matmul_fp8_block` (1 x 128 and
128 x 128 block scales, e4m3, bf16 out) and torch._scaled_mm with the same
block scales three times each at one shape, for Nsight Compute:
    ncu --launch-skip 2 --launch-count 1 -k regex:matmul_fp8 --section ... \
        python3 bench/ncu_fp8_once.py [--shape 8192x8192x8192] [-D NAME=V ...]
(the operands and scales as bench/bench_fp8.py's block mode; session 46)."""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--shape", default="8192x8192x8192", help="MxNxK")
ap.add_argument("-D", dest="defines", action="append", default=[], help="NAME=V for the kernel")
args = ap.parse_args()
m, n, k = (int(v) for v in args.shape.split("x"))
defines = dict((d.split("=")[0], int(d.split("=")[1])) for d in args.defines)
prog = tilec.load(os.path.join(os.path.dirname(__file__), "..", "examples", "matmul_fp8.tile"))
kern = prog.matmul_fp8_block.with_defines(**defines)   # this kernel alone
f8 = torch.float8_e4m3fn
a = (torch.randn(m, k, device="cuda") * 2).to(f8)
b = (torch.randn(n, k, device="cuda") * 2).to(f8)   # N x K
kb, nb = (k + 127) // 128, (n + 127) // 128
sa = (torch.rand(m, kb, device="cuda") + 0.5).t().contiguous().t()   # M-major
sb = torch.rand(nb, kb, device="cuda") + 0.5
c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    kern(a, b, c, sa, sb)
for _ in range(3):
    torch._scaled_mm(a, b.t(), sa, sb.t(), out_dtype=torch.bfloat16, use_fast_accum=False)
torch.cuda.synchronize()
