#!/usr/bin/env python3
"""FP8 matmuls (examples/matmul_fp8.tile) against torch._scaled_mm (cuBLAS
/ CUTLASS) in the same process and timing loop: CUDA events around --reps
back-to-back calls, medians of --iters, implementations interleaved round
by round (A B A B). e4m3 operands, bf16 output, B given N x K (torch's
column-major second operand is its transpose). Each result is checked
against an f32 product of the dequantized operands first.

  tensor: matmul_fp8 (one scale each)         vs _scaled_mm tensorwise
  row:    matmul_fp8 -D SCALE=1 (per row/col) vs _scaled_mm rowwise
  block:  matmul_fp8_block (1x128, 128x128)   vs _scaled_mm blockwise

usage: bench/bench_fp8.py [--shapes MxNxK,...] [--modes tensor,row,block]
                          [--configs BMxBN[:STAGES[:CLUSTER[:NAME=V+...]]],...] [--iters N] [--reps R]
  (default: no parameter fixed, the kernel's @heuristic and @tuned rows choose;
   block mode: BN 128 or 256 (two 128-column halves) and CLUSTER 1 or 2 are the block
   kernel's, CLUSTER 9 picks matmul_fp8_block_pipelined (BN 128, its CLUSTER then as
   NAME=V); NAME=V: more of the kernel's
   parameters, e.g. 128x256:0:1:GROUP=8+PERSISTENT=1, or 192x128:0:1:GROUP=8 in block mode;
   ENV_X=V sets TILEC_X=V while that config compiles: an experiment's knob;
   S2=1 compiles that config from --source2)
                          [--rounds R] [--sustain SECONDS] [--source FILE.tile] [--source2 FILE.tile]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import tilec  # noqa: E402
from benchlib import environment, interleaved, sustained_ms, uncached_copy  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--source", help="another copy of examples/matmul_fp8.tile (e.g. with @tuned rows)")
ap.add_argument("--source2", help="a second copy, for the configs with S2=1 (an A/B of two sources)")
ap.add_argument("--shapes", default="8192x8192x8192,4096x4096x4096")
ap.add_argument("--modes", default="tensor,row,block")
ap.add_argument("--configs", default="128x256")
ap.add_argument("--iters", type=int, default=20)
ap.add_argument("--reps", type=int, default=10)
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--sustain", type=float, default=0.0,
                help="after the rounds, this many seconds of back-to-back calls of each, "
                     "timed over the last half")
args = ap.parse_args()

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
source_path = args.source or os.path.join(root, "examples", "matmul_fp8.tile")
prog = base = tilec.load(source_path)
f8 = torch.float8_e4m3fn
print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}")


def check(out, ref, what):
    """The largest error relative to the largest reference value: f8 sums
    of thousands of terms (unpromoted for tensor and row scales, as
    use_fast_accum=True) and bf16 rounding; 1e-2 of the range."""
    err = ((out.float() - ref).abs().max() / ref.abs().max()).item()
    if err > 1e-2:
        raise AssertionError(f"{what}: max error {err:.3g} of the range")
    return err


for shape in args.shapes.split(","):
    m, n, k = (int(v) for v in shape.split("x"))
    a = (torch.randn(m, k, device="cuda") * 2).to(f8)
    b = (torch.randn(n, k, device="cuda") * 2).to(f8)   # N x K
    flops = 2.0 * m * n * k
    for mode in args.modes.split(","):
        kb, nb = (k + 127) // 128, (n + 127) // 128
        if mode == "tensor":
            sa = torch.rand(1, device="cuda") + 0.5
            sb = torch.rand(1, device="cuda") + 0.5
            ref = (a.float() @ b.float().t()) * sa * sb
            t_sa, t_sb = sa.reshape(()), sb.reshape(())
        elif mode == "row":
            sa = torch.rand(m, device="cuda") + 0.5
            sb = torch.rand(n, device="cuda") + 0.5
            ref = (a.float() @ b.float().t()) * sa[:, None] * sb[None, :]
            t_sa, t_sb = sa[:, None].contiguous(), sb[None, :].contiguous()
        else:
            sa = torch.rand(m, kb, device="cuda") + 0.5          # 1 x 128 blocks of A
            sbb = torch.rand(nb, kb, device="cuda") + 0.5        # 128 x 128 blocks of B
            af = a.float() * sa.repeat_interleave(128, 1)[:, :k]
            bf = b.float() * sbb.repeat_interleave(128, 0)[:n].repeat_interleave(128, 1)[:, :k]
            ref = af @ bf.t()
            # torch: scale_a (M, K/128) M-major, scale_b (K/128, N/128) K-major.
            t_sa = sa.t().contiguous().t()
            t_sb = sbb.t()
            sa = t_sa          # the same M-major view serves tilec's [M, KB]
            sb = sbb
        impls = {}
        peer = f"_scaled_mm {mode}"
        try:
            torch_out = torch._scaled_mm(a, b.t(), t_sa, t_sb, out_dtype=torch.bfloat16,
                                         use_fast_accum=(mode != "block"))
            print(f"{shape:>16} {peer}: error {check(torch_out, ref, peer):.2e} of the range")
            impls[peer] = lambda: torch._scaled_mm(a, b.t(), t_sa, t_sb, out_dtype=torch.bfloat16,
                                                   use_fast_accum=(mode != "block"))
        except Exception as e:  # noqa: BLE001 - say why and go on
            print(f"{shape:>16} {peer}: not run: {str(e).splitlines()[0]}")
        for cfg in args.configs.split(","):
            c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            try:
                if cfg == "default":
                    # nothing fixed: the kernel's @heuristic and @tuned rows choose
                    kern = (base.matmul_fp8_block if mode == "block"
                            else base.with_defines(SCALE=int(mode == "row")).matmul_fp8)
                    name = f"tilec {mode} default {kern.choose(a, b, c, sa, sb)}"
                else:
                    parts = cfg.split(":")
                    bm, bn = (int(v) for v in parts[0].split("x"))
                    stages = int(parts[1]) if len(parts) > 1 else 0
                    cluster = int(parts[2]) if len(parts) > 2 else 1
                    more = dict((kv.split("=")[0], int(kv.split("=")[1]))
                                for kv in parts[3].split("+")) if len(parts) > 3 else {}
                    # ENV_X=V: TILEC_X=V while the kernel compiles (an experiment's
                    # knob), from a copy of the source that differs in a comment
                    # (compiles are cached by the source)
                    env = {"TILEC_" + k[4:]: str(more.pop(k)) for k in list(more)
                           if k.startswith("ENV_")}
                    path = args.source2 if more.pop("S2", 0) else source_path
                    prog = base if not env and path == source_path else uncached_copy(
                        tilec, path, env, file_name=os.path.basename(path))
                    if mode == "block":
                        # this kernel alone (BN 128, or 256: two 128-column halves); the
                        # third field is its CLUSTER (9: the hand-pipelined kernel, BN 128,
                        # CLUSTER from NAME=V)
                        if cluster != 9:
                            more.setdefault("CLUSTER", cluster)
                            if bn != 128:
                                more.setdefault("BN", bn)
                        kern = (prog.matmul_fp8_block_pipelined if cluster == 9
                                else prog.matmul_fp8_block).with_defines(BM=bm, STAGES=stages,
                                                                         **more)
                        name = (f"tilec block{'-pipelined' if cluster == 9 else ''} "
                                f"{bm}x{more.get('BN', 128)}:{stages}"
                                + (f":{cluster}" if cluster not in (1, 9) else "")
                                + (f":{parts[3]}" if len(parts) > 3 else ""))
                    else:
                        kern = prog.with_defines(BM=bm, BN=bn, STAGES=stages, CLUSTER=cluster,
                                                 SCALE=int(mode == "row"), **more).matmul_fp8
                        name = f"tilec {mode} {cfg}"
                with environment(env if cfg != "default" else {}):
                    kern(a, b, c, sa, sb)
            except tilec.CompileError as e:
                print(f"{shape:>16} tilec {cfg}: not compiled: {str(e).splitlines()[0]}")
                continue
            torch.cuda.synchronize()
            print(f"{shape:>16} {name}: error {check(c, ref, name):.2e} of the range")
            impls[name] = (lambda kern=kern, c=c: kern(a, b, c, sa, sb))
        times = interleaved(impls, args.rounds, args.iters, args.reps)
        for name, ts in times.items():
            ms = sorted(ts)[len(ts) // 2]
            print(f"{shape:>16} {name:28} {ms:9.4f} ms {flops / (ms * 1e-3) / 1e12:8.1f} TF/s "
                  f"(rounds: {' '.join(f'{x:.4f}' for x in ts)})")
        if peer in times:
            pm = sorted(times[peer])[len(times[peer]) // 2]
            for name, ts in times.items():
                if name != peer:
                    ms = sorted(ts)[len(ts) // 2]
                    print(f"SUMMARY {shape} {mode}: {name} {flops / (ms * 1e-3) / 1e12:.1f} TF/s, "
                          f"{peer} {flops / (pm * 1e-3) / 1e12:.1f} TF/s: {pm / ms:.3f}x")
        if args.sustain > 0:
            for name, f in impls.items():
                ms = sustained_ms(f, args.sustain)
                print(f"SUSTAINED {shape} {name:28} {ms:9.4f} ms {flops / (ms * 1e-3) / 1e12:8.1f} TF/s")
