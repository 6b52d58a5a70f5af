#!/usr/bin/env python3
"""The parts of a bound launch from Python (bench/bench_launch_python.py's
run()): a ctypes call of nothing (tilec_c_api_version), torch's current-stream
query, the C call tilec_launch_plan_run with integer and with c_void_p
arguments, and the whole Launcher call; medians over 15 rounds of 2000.
Run from the repository root: python3 bench/probe_launch_parts.py"""
import ctypes
import sys
import time
import torch
sys.path.insert(0, "python")
import tilec
from tilec import _capi
x = torch.randn(4096, device="cuda"); y = torch.randn(4096, device="cuda")
lib = tilec.load("examples/saxpy.tile")
run = lib.saxpy.bind(2.0, x, y)
L = _capi._lib_handle
ver = L.tilec_c_api_version
stream = tilec._current_stream
plan = run._plan; prun = run._run
s0 = stream(0)
vp = ctypes.c_void_p(plan); vs = ctypes.c_void_p(s0)
raw = ctypes.CDLL(L._name).tilec_launch_plan_run  # no argtypes
raw.restype = ctypes.c_void_p
print("argtypes", prun.argtypes, prun.restype)
impls = {
  "ctypes noop (api_version)": lambda: ver(),
  "torch current raw stream": lambda: stream(0),
  "plan_run(plan, s) ints": lambda: prun(plan, s0),
  "plan_run c_void_p objs no argtypes": lambda: raw(vp, vs),
  "bind run()": run,
}
B = 2000
for f in impls.values():
    for _ in range(200): f()
torch.cuda.synchronize()
res = {k: [] for k in impls}
for r in range(15):
    for k, f in impls.items():
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(B): f()
        res[k].append((time.perf_counter() - t) / B * 1e6)
        torch.cuda.synchronize()
for k, v in res.items():
    v.sort(); print(f"{k:40s} median {v[len(v)//2]:.3f} us  min {v[0]:.3f}")
