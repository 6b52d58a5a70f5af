"""Runs the kernels of test/Transforms/Inputs/shared-plan.tile once per
architecture, for compute-sanitizer (not a pytest file):
    compute-sanitizer --tool racecheck python3 python/tests/shared_plan_sanitize.py
On sm_80 the scan's, the sum's and the transpose's buffers share one range,
so a barrier that tile-elide-barriers dropped wrongly shows as a hazard."""
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
sys.path.insert(0, os.path.join(here, ".."))
import tilec  # noqa: E402

with open(os.path.join(here, "..", "..", "test", "Transforms", "Inputs", "shared-plan.tile")) as f:
    src = f.read()
for arch in sys.argv[1:] or ["sm_90a", "sm_80"]:
    lib = tilec.compile(src, arch=arch)
    v = torch.randint(-8, 8, (65536,), device="cuda").float()
    s, t = torch.empty_like(v), torch.empty(1, device="cuda")
    w, z = torch.randn(300, 700, device="cuda"), torch.empty(700, 300, device="cuda")
    lib.scan_sum_transpose(v, s, t, w, z)
    x, y = torch.randn(300, 500, device="cuda"), torch.empty(500, 300, device="cuda")
    lib.transpose_wide(x, y)
    torch.cuda.synchronize()
    ok = (torch.equal(s, torch.cumsum(v, 0)) and t.item() == v.sum().item()
          and torch.equal(z, w.t()) and torch.equal(y, x.t()))
    print(arch, "OK" if ok else "WRONG")
