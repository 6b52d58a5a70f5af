#!/usr/bin/env python3
"""FlashAttention forward against sequence length: tilec (examples/attention.tile
through the Python package), torch SDPA's cuDNN and FLASH_ATTENTION backends
and a Triton FlashAttention-2 kernel (below), in one process and one CUDA-event
loop, interleaved round by round (A B C D A B C D). bf16 [B, H, S, D] inputs,
16k tokens per batch (B = 16384 / S) and H = 2048 / D heads (FlashAttention-2's
setting); TF/s count 4*B*H*S*S*D, half of it when causal. Every implementation's
output is checked against SDPA's first.

usage: bench/bench_attention_sweep.py [--seqs 512,1024,...] [--dims 64,128]
                                      [--rounds R] [--iters N] [--csv FILE]
                                      [--variant NAME:K=V+K=V ...] [--no-peers]
                                      [--sustain SECONDS]
--variant adds a tilec implementation compiled with those parameters (e.g.
"tilec persistent:PERSISTENT=1"; SRC=path takes another .tile file than
examples/attention.tile; ENV_X=V sets TILEC_X=V while the variant compiles,
e.g. an experiment's knob, run with TILEC_CACHE=0); --no-peers times tilec's
alone.
Draw the CSV with bench/plot_attention.py.

The Triton kernel is written for this benchmark after the structure of
Triton's fused-attention tutorial (block pointers, exp2 with log2(e) folded
into the scale, the causal loop split into the blocks left of the diagonal
without a mask and the diagonal blocks with it, autotuned over tile shapes,
warps and stages); the tutorial itself is not shipped with Triton's package.
"""
import argparse
import csv
import os
import sys

import torch
import triton
import triton.language as tl
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import attention_bhsd, interleaved, sustained_ms, tilec_variants  # noqa: E402


@triton.jit
def _attn_inner(acc, l_i, m_i, q, K_ptr, V_ptr, qk_scale, start_m, lo, hi,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, MASKED: tl.constexpr):
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    K_ptr = tl.advance(K_ptr, (0, lo))
    V_ptr = tl.advance(V_ptr, (lo, 0))
    for start_n in range(lo, hi, BLOCK_N):
        k = tl.load(K_ptr)
        qk = tl.dot(q, k) * qk_scale
        if MASKED:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n)[None, :], qk, -1.0e30)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V_ptr)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
        K_ptr = tl.advance(K_ptr, (0, BLOCK_N))
        V_ptr = tl.advance(V_ptr, (BLOCK_N, 0))
    return acc, l_i, m_i


@triton.autotune(
    configs=[triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=s)
             for bm, bn, w, s in [(128, 64, 4, 3), (128, 64, 8, 3), (128, 128, 8, 3),
                                  (128, 128, 8, 2), (128, 64, 4, 4), (64, 64, 4, 3)]],
    key=["S", "D", "CAUSAL"])
@triton.jit
def _attn_fwd(Q, K, V, O, qk_scale, S, D: tl.constexpr, CAUSAL: tl.constexpr,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * S * D
    q_ptr = tl.make_block_ptr(Q + base, (S, D), (D, 1), (start_m * BLOCK_M, 0), (BLOCK_M, D), (1, 0))
    k_ptr = tl.make_block_ptr(K + base, (D, S), (1, D), (0, 0), (D, BLOCK_N), (0, 1))
    v_ptr = tl.make_block_ptr(V + base, (S, D), (D, 1), (0, 0), (BLOCK_N, D), (1, 0))
    o_ptr = tl.make_block_ptr(O + base, (S, D), (D, 1), (start_m * BLOCK_M, 0), (BLOCK_M, D), (1, 0))
    m_i = tl.full([BLOCK_M], -1.0e30, tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    q = tl.load(q_ptr)
    if CAUSAL:
        acc, l_i, m_i = _attn_inner(acc, l_i, m_i, q, k_ptr, v_ptr, qk_scale, start_m,
                                    0, start_m * BLOCK_M, BLOCK_M, BLOCK_N, False)
        acc, l_i, m_i = _attn_inner(acc, l_i, m_i, q, k_ptr, v_ptr, qk_scale, start_m,
                                    start_m * BLOCK_M, (start_m + 1) * BLOCK_M,
                                    BLOCK_M, BLOCK_N, True)
    else:
        acc, l_i, m_i = _attn_inner(acc, l_i, m_i, q, k_ptr, v_ptr, qk_scale, start_m,
                                    0, S, BLOCK_M, BLOCK_N, False)
    tl.store(o_ptr, (acc / l_i[:, None]).to(O.dtype.element_ty))


def triton_attention(q, k, v, o, causal):
    B, H, S, D = q.shape
    assert S % 128 == 0, "the benchmark's Triton kernel takes S a multiple of 128"
    grid = lambda meta: (triton.cdiv(S, meta["BLOCK_M"]), B * H)
    _attn_fwd[grid](q, k, v, o, D ** -0.5 * 1.4426950408889634, S, D=D, CAUSAL=causal)
    return o


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seqs", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--dims", default="64,128")
    ap.add_argument("--causal", default="0,1")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--reps", type=int, default=5,
                    help="back-to-back calls per timed run (a launch's CPU cost does not pad it)")
    ap.add_argument("--csv", default="attention-sweep.csv")
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--sustain", type=float, default=0.0,
                    help="after each case's rounds, this many seconds of back-to-back calls of "
                         "each implementation, timed over the second half (round 'sustained')")
    args = ap.parse_args()
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}  triton {triton.__version__}")
    rows = []
    for D in (int(d) for d in args.dims.split(",")):
        for causal in (int(c) for c in args.causal.split(",")):
            path = os.path.join(root, "examples", "attention.tile")
            libs = tilec_variants(tilec, path, args.variant, D=D, CAUSAL=causal)
            for S in (int(s) for s in args.seqs.split(",")):
                B, H = max(1, 16384 // S), 2048 // D
                q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16)
                           for _ in range(3))
                lse = torch.empty(B * H, S, device="cuda", dtype=torch.float32)
                outs = {n: torch.empty_like(q) for n in list(libs) + ["Triton"]}

                def run_tilec(name):
                    return lambda: attention_bhsd(libs[name], q, k, v, outs[name], lse,
                                                  D ** -0.5)

                def sdpa(backend):
                    def run():
                        with sdpa_kernel(backend):
                            return torch.nn.functional.scaled_dot_product_attention(
                                q, k, v, is_causal=bool(causal))
                    return run
                impls = {name: run_tilec(name) for name in libs}
                if not args.no_peers:
                    impls.update({"cuDNN": sdpa(SDPBackend.CUDNN_ATTENTION),
                                  "FLASH_ATTENTION": sdpa(SDPBackend.FLASH_ATTENTION),
                                  "Triton": lambda: triton_attention(q, k, v, outs["Triton"],
                                                                     bool(causal))})
                want = sdpa(SDPBackend.FLASH_ATTENTION)().float()
                for name in [n for n in impls if n in outs]:
                    impls[name]()
                    torch.cuda.synchronize()
                    err = (outs[name].float() - want).abs().max().item()
                    assert err < 3e-2, f"{name} D={D} causal={causal} S={S}: max error {err}"
                times = interleaved(impls, args.rounds, args.iters, args.reps)
                flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)

                def record(name, rnd, ms):
                    tf = flops / (ms * 1e-3) / 1e12
                    rows.append({"impl": name, "d": D, "causal": causal, "seq": S, "batch": B,
                                 "heads": H, "round": rnd, "ms": f"{ms:.4f}", "tflops": f"{tf:.1f}"})
                    return f"{tf:7.1f}"

                def head(name):
                    return f"D={D:<4} causal={causal} S={S:<6} B={B:<3} H={H:<3} {name:16} "
                for name, ts in times.items():
                    print(head(name) + "  ".join(record(name, r, ms) for r, ms in enumerate(ts))
                          + " TF/s", flush=True)
                for name, fn in impls.items() if args.sustain > 0 else ():
                    tf = record(name, "sustained", sustained_ms(fn, args.sustain))
                    print(head(name) + f"{tf} TF/s sustained ({args.sustain:g} s)", flush=True)
    with open(args.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
