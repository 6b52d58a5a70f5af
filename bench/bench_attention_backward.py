#!/usr/bin/env python3
"""FlashAttention backward: examples/attention_backward.tile (Delta, then
the dK/dV and dQ kernels) next to torch SDPA's backward with the cuDNN and
FLASH_ATTENTION backends, bf16 [B, H, S, D], in one process and one
CUDA-event loop, interleaved round by round. TF/s count 2.5 times the
forward's 4*B*H*S*S*D (half of that with the causal mask), as
FlashAttention reports the backward. dQ, dK and dV are checked against
FLASH_ATTENTION's first.

usage: bench/bench_attention_backward.py [--shapes BxHxSxD,...] [--causal 0|1]
           [--rounds R] [--iters N] [--variant NAME:K=V+K=V ...] [--sustain SECONDS]
"""
import os
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import bench_args, compare_and_report, example_path, tilec_variants  # noqa: E402

args = bench_args("4x16x4096x64,4x16x4096x128,16x16x1024x64", iters=10, reps=1,
                  extra=lambda ap: ap.add_argument("--causal", type=int, default=0))
print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}")
path = example_path("attention_backward.tile")
for shape in args.shapes.split(","):
    B, H, S, D = (int(s) for s in shape.split("x"))
    libs = tilec_variants(tilec, path, args.variant, D=D, CAUSAL=args.causal)
    q, k, v, do = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    scale = D ** -0.5
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    grads = {}
    for name, backend in (("torch FLASH", SDPBackend.FLASH_ATTENTION),
                          ("torch cuDNN", SDPBackend.CUDNN_ATTENTION)):
        with sdpa_kernel(backend):
            o = F.scaled_dot_product_attention(*leaves, is_causal=bool(args.causal), scale=scale)
        grads[name] = (o, backend)
    # O and the log-sum-exp (natural log) for tilec, from an f32 reference.
    s = (q.float() @ k.float().transpose(-1, -2)) * scale
    if args.causal:
        s = s.masked_fill(~torch.ones(S, S, dtype=torch.bool, device="cuda").tril(), float("-inf"))
    lse = torch.logsumexp(s, dim=-1).reshape(B * H, S).contiguous()
    o16 = (torch.softmax(s, dim=-1) @ v.float()).bfloat16().reshape(B * H, S, D)
    del s
    flat = lambda t: t.reshape(B * H, S, D)  # noqa: E731
    delta = torch.empty(B * H, S, device="cuda")
    outs = {name: [torch.empty(B * H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
            for name in libs}

    def run(name):
        lib, (dq, dk, dv) = libs[name], outs[name]
        lib.attention_bwd_delta(o16, flat(do), delta)
        lib.attention_bwd_dkdv(flat(q), flat(k), flat(v), flat(do), lse, delta, dk, dv, scale)
        lib.attention_bwd_dq(flat(q), flat(k), flat(v), flat(do), lse, delta, dq, scale)

    def torch_backward(name):
        o, backend = grads[name]
        with sdpa_kernel(backend):
            return torch.autograd.grad(o, leaves, do, retain_graph=True)

    want = [flat(g).float() for g in torch_backward("torch FLASH")]
    for name in libs:
        run(name)
        torch.cuda.synchronize()
        for what, got, ref in zip(("dQ", "dK", "dV"), outs[name], want):
            err = ((got.float() - ref).abs().max() / ref.abs().max()).item()
            assert err < 2e-2, f"{name} {shape} {what}: relative error {err}"
    impls = {name: (lambda n=name: run(n)) for name in libs}
    impls.update({n: (lambda n=n: torch_backward(n)) for n in grads})
    flops = 2.5 * 4.0 * B * H * S * S * D / (2 if args.causal else 1)
    compare_and_report(shape + (" causal" if args.causal else ""), impls, {}, None, flops, args)
