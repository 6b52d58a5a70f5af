"""Attention over packed variable-length sequences: tilec's attention_varlen
against torch SDPA on the same sequences as a jagged nested tensor (its
FlashAttention-2 varlen kernel) and against cuDNN on the batch padded to the
longest sequence, in one process, interleaved per round (CUDA events,
medians). TF/s counts the real work, 4 * H * D * sum(sq * sk) (half for
causal), for every implementation.

    python3 bench/bench_varlen.py [--d 128] [--causal] [--rounds 3]
"""
import argparse
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from benchlib import median_ms

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--d", type=int, default=128)
p.add_argument("--heads", type=int, default=16)
p.add_argument("--causal", action="store_true")
p.add_argument("--rounds", type=int, default=3)
p.add_argument("--iters", type=int, default=30)
p.add_argument("--lens", default="512,1024,1536,2048,2560,3072,3584,4096,777,3333",
               help="sequence lengths (queries = keys)")
p.add_argument("--old-source", help="another attention.tile (e.g. an earlier commit's), timed as "
               "'tilec_old' in the same rounds")
a = p.parse_args()
H, D = a.heads, a.d
lens = [int(x) for x in a.lens.split(",")]
cu = torch.tensor([0] + list(np.cumsum(lens)), dtype=torch.int32, device="cuda")
total = int(cu[-1])
q, k, v = (torch.randn(total, H, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
o = torch.empty_like(q)
lse = torch.empty(H, total, device="cuda")
lib = tilec.load(os.path.join(os.path.dirname(__file__), "..", "examples", "attention.tile"),
                 D=D, CAUSAL=int(a.causal))
kern = lib.attention_varlen
scale = D ** -0.5
run_tilec = lambda: kern(q.view(total, H * D), k.view(total, H * D), v.view(total, H * D),  # noqa: E731
                         o.view(total, H * D), lse, cu, cu, max(lens), scale)

# Peers: SDPA on jagged nested tensors ([B, j, H, D] -> [B, H, j, D]).
def nested(t):
    return torch.nested.nested_tensor_from_jagged(t, offsets=cu.long()).transpose(1, 2)
qn, kn, vn = nested(q), nested(k), nested(v)
def run_flash():
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return F.scaled_dot_product_attention(qn, kn, vn, is_causal=a.causal)
S = max(lens)
qp, kp, vp = (torch.zeros(len(lens), H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
for b, n in enumerate(lens):
    for src, dst in ((q, qp), (k, kp), (v, vp)):
        dst[b, :, :n] = src[cu[b]:cu[b] + n].transpose(0, 1)
def run_cudnn_padded():
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        return F.scaled_dot_product_attention(qp, kp, vp, is_causal=a.causal)

# Correctness against SDPA's FLASH_ATTENTION on the jagged tensor (each sequence's rows).
run_tilec()
got_flash = run_flash()
torch.cuda.synchronize()
for b, n in enumerate(lens):
    ref = got_flash[b].transpose(0, 1)  # [n, H, D]
    err = (o[cu[b]:cu[b] + n].float() - ref.float()).abs().max().item()
    assert err < 3e-2, f"sequence {b}: max |tilec - flash| = {err}"
flops = 4 * H * D * sum(n * n for n in lens) * (0.5 if a.causal else 1.0)
print(f"varlen B={len(lens)} lens={lens} H={H} D={D} causal={a.causal} total={total}")
impls = [("tilec", run_tilec), ("sdpa_flash_jagged", run_flash), ("cudnn_padded", run_cudnn_padded)]
if a.old_source:
    old_kern = tilec.load(a.old_source, D=D, CAUSAL=int(a.causal)).attention_varlen
    impls.insert(1, ("tilec_old", lambda: old_kern(q.view(total, H * D), k.view(total, H * D),
                                                   v.view(total, H * D), o.view(total, H * D), lse,
                                                   cu, cu, max(lens), scale)))
for r in range(a.rounds):
    line = []
    for name, fn in impls:
        try:
            ms = median_ms(fn, a.iters)
            line.append(f"{name} {ms:.4f} ms {flops / ms / 1e9:.1f} TF/s")
        except RuntimeError as e:  # a backend that does not take the case
            line.append(f"{name} n/a ({str(e).splitlines()[0][:60]})")
    print(f"round {r + 1}: " + " | ".join(line))
