"""tilec from Python on the GPU: torch CUDA tensors (skipped without one).
Runs under pytest, or as a script (python3 python/tests/test_gpu.py)."""
import contextlib
import itertools
import re
import sys

try:
    import pytest
except ImportError:  # run as a script where pytest is not installed
    class pytest:  # noqa: N801
        @staticmethod
        @contextlib.contextmanager
        def raises(kind, match=None):
            try:
                yield
            except kind as e:
                assert match is None or re.search(match, str(e)), str(e)
            else:
                raise AssertionError(f"{kind.__name__} not raised")

try:
    import torch
except ImportError:
    torch = None
if torch is None or not torch.cuda.is_available():
    if __name__ == "__main__":
        sys.exit("no CUDA device")
    pytest.skip("no CUDA device", allow_module_level=True)
from common import (CHECKS, attention_backward_check,  # noqa: E402,F401
                    attention_backward_varlen_check, example, tilec,
                    varlen_attention_reference)


def test_saxpy_on_cuda_tensors():
    lib = tilec.load(example("saxpy.tile"))
    x = torch.randn(1_000_003, device="cuda")
    y = torch.randn(1_000_003, device="cuda")
    want = 2.0 * x + y
    lib.saxpy(2.0, x, y)
    torch.cuda.synchronize()
    torch.testing.assert_close(y, want)


def test_strided_tensors_keywords_and_f16():
    lib = tilec.load(example("saxpy.tile"))
    base = torch.randn(2 * 50_000, device="cuda", dtype=torch.float16)
    x = base[::2]  # every other element
    y = torch.zeros(50_000, device="cuda", dtype=torch.float16)
    lib.saxpy(3.0, x, y, BLOCK=256, T="f16")
    torch.cuda.synchronize()
    torch.testing.assert_close(y, (3.0 * x.float()).half(), rtol=1e-3, atol=1e-3)


def test_launches_on_the_tensors_device():
    # Device 1's tensors launch on device 1 (its module, its current stream),
    # the plain call and bind alike; tensors of two devices are refused.
    if torch.cuda.device_count() < 2:
        return  # one GPU here: nothing to check
    lib = tilec.load(example("saxpy.tile"))
    for dev in (1, 0, 1):
        x = torch.full((5000,), float(dev + 1), device=f"cuda:{dev}")
        y = torch.ones(5000, device=f"cuda:{dev}")
        s = torch.cuda.Stream(device=dev)
        with torch.cuda.stream(s):
            lib.saxpy(2.0, x, y)
            lib.saxpy.bind(1.0, x, y)()
        s.synchronize()
        assert torch.all(y == 1 + 3 * (dev + 1)).item(), (dev, y[:4])
    a = torch.ones(100, device="cuda:0")
    b = torch.ones(100, device="cuda:1")
    with pytest.raises(tilec.ArgumentError, match="device"):
        lib.saxpy(2.0, a, b)


def test_bind_and_the_current_stream():
    lib = tilec.load(example("saxpy.tile"))
    x = torch.ones(4096, device="cuda")
    y = torch.zeros(4096, device="cuda")
    run = lib.saxpy.bind(1.0, x, y)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for _ in range(10):
            run()
        # ordered after the launches on s: sees all ten
        total = y.sum()
    s.synchronize()
    assert total.item() == 10 * 4096


def test_matmul_bf16_against_torch():
    lib = tilec.load(example("matmul.tile"))
    a = torch.randn(1000, 777, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(777, 3000, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(1000, 3000, device="cuda", dtype=torch.float32)
    lib.matmul(a, b, c)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=2e-2, atol=2e-2)


def test_fp8_matmul_and_quantizer_against_torch():
    """torch's float8 tensors are f8e4m3 / f8e5m2: quantize rows with the
    kernel, multiply with per-row scales, compare with torch._scaled_mm and
    an f32 product of the dequantized operands."""
    lib = tilec.load(example("matmul_fp8.tile"))
    x = torch.randn(300, 512, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(272, 512, device="cuda", dtype=torch.bfloat16)
    xq = torch.empty(300, 512, device="cuda", dtype=torch.float8_e4m3fn)
    wq = torch.empty(272, 512, device="cuda", dtype=torch.float8_e4m3fn)
    sx = torch.empty(300, device="cuda")
    sw = torch.empty(272, device="cuda")
    lib.quantize_rows(x, xq, sx)
    lib.quantize_rows(w, wq, sw)
    torch.cuda.synchronize()
    # The quantizer's bytes are torch's rounding of the same quotient (a
    # quotient one f32 ulp apart may round the other way at a midpoint).
    want_sx = x.float().abs().amax(1) / 448
    torch.testing.assert_close(sx, want_sx)
    want_q = (x.float() / sx[:, None]).to(torch.float8_e4m3fn)
    same = (xq.view(torch.uint8) == want_q.view(torch.uint8)).float().mean().item()
    assert same > 0.999, same
    torch.testing.assert_close(xq.float(), want_q.float(), rtol=0.125, atol=2.0 ** -9)
    c = torch.empty(300, 272, device="cuda", dtype=torch.bfloat16)
    lib.with_defines(SCALE=1).matmul_fp8(xq, wq, c, sx, sw)
    ref = (xq.float() * sx[:, None]) @ (wq.float() * sw[:, None]).t()
    torch.testing.assert_close(c.float(), ref, rtol=2e-2, atol=0.1)
    if hasattr(torch, "_scaled_mm"):
        peer = torch._scaled_mm(xq, wq.t(), sx[:, None].contiguous(), sw[None, :].contiguous(),
                                out_dtype=torch.bfloat16)
        torch.testing.assert_close(c.float(), peer.float(), rtol=2e-2, atol=0.1)


def test_attention_against_sdpa():
    lib = tilec.load(example("attention.tile"), D=128)
    B, H, S, D = 2, 4, 1000, 128
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = torch.empty_like(q)
    lse = torch.empty(B * H, S, device="cuda", dtype=torch.float32)
    scale = D ** -0.5
    lib.attention(q.view(B * H, S, D), k.view(B * H, S, D), v.view(B * H, S, D),
                  o.view(B * H, S, D), lse, scale)
    want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float())
    torch.cuda.synchronize()
    torch.testing.assert_close(o.float(), want, rtol=2e-2, atol=2e-2)
    s = (q.float() @ k.float().transpose(-1, -2)) * scale
    torch.testing.assert_close(lse.view(B, H, S), torch.logsumexp(s, -1), rtol=1e-3, atol=1e-3)


def test_attention_without_the_log_sum_exp_against_sdpa():
    # -D LSE=0: O only, L any (empty) f32 tensor, on sm_90a and sm_80.
    B, H, S, D = 2, 4, 1000, 128
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float())
    for arch in ("sm_90a", "sm_80"):
        lib = tilec.load(example("attention.tile"), arch=arch, D=D, LSE=0)
        o = torch.empty_like(q)
        lib.attention(q.view(B * H, S, D), k.view(B * H, S, D), v.view(B * H, S, D),
                      o.view(B * H, S, D), torch.empty(0, 0, device="cuda"), D ** -0.5)
        torch.cuda.synchronize()
        torch.testing.assert_close(o.float(), want, rtol=2e-2, atol=2e-2)


def test_attention_without_keys():
    # Sk = 0: every row sees no key, so O is 0 and the log-sum-exp -inf (as
    # FlashAttention-2), on the persistent kernels (D <= 128: the non-causal
    # one runs no iteration of its mma loop) and one program per tile (D =
    # 192, 256), causal and not, sm_90a and sm_80; no hang.
    B, H, S = 2, 3, 200
    for arch, d, causal in itertools.product(("sm_90a", "sm_80"), (64, 128, 192, 256), (0, 1)):
        lib = tilec.load(example("attention.tile"), arch=arch, D=d, CAUSAL=causal)
        q = torch.randn(B * H, S, d, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.empty(B * H, 0, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        o = torch.full_like(q, 7.0)
        lse = torch.zeros(B * H, S, device="cuda")
        lib.attention(q, k, v, o, lse, d ** -0.5)
        torch.cuda.synchronize()
        assert torch.all(o == 0), (arch, d, causal)
        assert torch.all(lse == float("-inf")), (arch, d, causal)


def test_grouped_query_attention_against_sdpa():
    B, Hq, Hkv, S, D = 2, 16, 4, 1000, 128
    for causal in (0, 1):
        lib = tilec.load(example("attention.tile"), D=D, CAUSAL=causal)
        q = torch.randn(B, Hq, S, D, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(B, Hkv, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        o = torch.empty_like(q)
        lse = torch.empty(B * Hq, S, device="cuda")
        lib.attention(q.view(B * Hq, S, D), k.view(B * Hkv, S, D), v.view(B * Hkv, S, D),
                      o.view(B * Hq, S, D), lse, D ** -0.5)
        want = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=bool(causal), enable_gqa=True)
        torch.cuda.synchronize()
        torch.testing.assert_close(o, want, rtol=2e-2, atol=2e-2)


def test_bshd_attention_against_sdpa():
    # torch's [B, S, H, D] layout straight (LAYOUT = 1), GQA, causal or not.
    B, Hq, Hkv, S, D = 2, 16, 4, 1000, 128
    for causal in (0, 1):
        lib = tilec.load(example("attention.tile"), D=D, CAUSAL=causal, LAYOUT=1)
        q = torch.randn(B, S, Hq, D, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(B, S, Hkv, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        o = torch.empty_like(q)
        lse = torch.empty(B * Hq, S, device="cuda")
        lib.attention(q.view(B, S, Hq * D), k.view(B, S, Hkv * D), v.view(B, S, Hkv * D),
                      o.view(B, S, Hq * D), lse, D ** -0.5)
        want = torch.nn.functional.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=bool(causal),
            enable_gqa=True).transpose(1, 2)
        torch.cuda.synchronize()
        torch.testing.assert_close(o, want, rtol=2e-2, atol=2e-2)


def test_matmul_tn_against_torch():
    # dW = X^T dY from the activations as they are (A stored K x M): a is
    # read MN-major by wgmma (sm_90a) and by ldmatrix.trans (sm_80).
    K, M, N = 3000, 1000, 777
    x = torch.randn(K, M, device="cuda", dtype=torch.bfloat16)
    dy = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    want = x.float().t() @ dy.float()
    for arch in ("sm_90a", "sm_80"):
        lib = tilec.load(example("matmul.tile"), arch=arch)
        c = torch.full((M, N), 7.0, device="cuda")
        lib.matmul_tn(x, dy, c)
        torch.cuda.synchronize()
        torch.testing.assert_close(c, want, rtol=1e-3, atol=0.1)


# The checks of python/tests/*.tile (common.py), on both pipelines:
# chained mmas (a computed transposed b; attention with its output
# projection), an mma outside any loop, a loaded b and a resident a each
# feeding two mmas, transposed stores, whole-column slices of an
# accumulator, computed operands read from shared memory.
@pytest.mark.parametrize("check", list(CHECKS))
def test_tile_checks_against_torch(check):
    for arch in ("sm_90a", "sm_80"):
        CHECKS[check](torch, arch=arch, device="cuda")


@pytest.mark.parametrize("sq,sk,hq,hk,causal,d", [(1024, 1024, 4, 2, False, 64),
                                                  (1000, 777, 4, 4, False, 128),
                                                  (777, 1000, 2, 1, True, 64),
                                                  (1000, 777, 4, 2, True, 64),
                                                  (1024, 1024, 2, 2, True, 128)])
def test_attention_backward_against_torch(sq, sk, hq, hk, causal, d):
    # dQ, dK, dV of examples/attention_backward.tile against autograd (f32).
    for arch in ("sm_90a", "sm_80"):
        attention_backward_check(torch, sq, sk, hq, hk, causal, arch=arch, device="cuda", d=d)


@pytest.mark.parametrize("seqs_q,seqs_k,hq,hk,causal,d", [
    ((700, 1500, 1, 333), (900, 400, 0, 333), 4, 2, False, 64),
    ((700, 1500, 300), (900, 400, 300), 2, 2, True, 128)])
def test_attention_backward_varlen_against_torch(seqs_q, seqs_k, hq, hk, causal, d):
    for arch in ("sm_90a", "sm_80"):
        attention_backward_varlen_check(torch, seqs_q, seqs_k, hq, hk, causal, arch=arch,
                                        device="cuda", d=d)


def test_swiglu_against_torch():
    # silu(x Wg^T) * (x Wu^T) with x staged once for both mmas: sm_90a
    # (TMA + wgmma, BN = 64 and 128) and sm_80 (cp.async + mma.sync).
    M, K, N = 1000, 1024, 700
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    wg, wu = (torch.randn(N, K, device="cuda", dtype=torch.bfloat16) / K ** 0.5 for _ in range(2))
    want = torch.nn.functional.silu(x.float() @ wg.float().t()) * (x.float() @ wu.float().t())
    for arch, defines in (("sm_90a", {}), ("sm_90a", {"BN": 128}), ("sm_80", {})):
        lib = tilec.load(example("mlp.tile"), arch=arch, **defines)
        h = torch.full((M, N), 7.0, device="cuda", dtype=torch.bfloat16)
        lib.swiglu(x, wg, wu, h)
        torch.cuda.synchronize()
        torch.testing.assert_close(h.float(), want, rtol=2e-2, atol=2e-2)


def test_mlp_wide_against_torch():
    # gelu(x W1 + b1) W2 with an input of 1000 (the hidden block is an mma
    # loop over it; the second mma is chained after that loop): sm_90a
    # (TMA + wgmma, W2 loaded while the loop runs) and sm_80.
    M, Din, H, Dout = 300, 1000, 200, 150
    x = torch.randn(M, Din, device="cuda", dtype=torch.bfloat16)
    w1 = torch.randn(Din, H, device="cuda", dtype=torch.bfloat16) / Din ** 0.5
    b1 = torch.randn(H, device="cuda")
    w2 = torch.randn(H, Dout, device="cuda", dtype=torch.bfloat16) / H ** 0.5
    g = torch.nn.functional.gelu(x.float() @ w1.float() + b1, approximate="tanh")
    want = g.bfloat16().float() @ w2.float()
    for arch in ("sm_90a", "sm_80"):
        lib = tilec.load(example("mlp.tile"), arch=arch)
        y = torch.full((M, Dout), 7.0, device="cuda", dtype=torch.bfloat16)
        lib.mlp_wide(x, w1, b1, w2, y)
        torch.cuda.synchronize()
        torch.testing.assert_close(y.float(), want, rtol=2e-2, atol=3e-2)


def test_lora_against_torch():
    # x W^T + s (x A^T) B^T with torch.nn.Linear-shaped weights, rank 8
    # (below R = 16), ragged shapes: the rank-8 product chained after the
    # loop over K on sm_90a and sm_80.
    M, K, N, r, s = 300, 1000, 200, 8, 0.5
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16) / K ** 0.5
    a = torch.randn(r, K, device="cuda", dtype=torch.bfloat16) / K ** 0.5
    b = torch.randn(N, r, device="cuda", dtype=torch.bfloat16)
    t = (s * (x.float() @ a.float().t())).bfloat16().float()
    want = x.float() @ w.float().t() + t @ b.float().t()
    for arch in ("sm_90a", "sm_80"):
        lib = tilec.load(example("lora.tile"), arch=arch)
        y = torch.full((M, N), 7.0, device="cuda", dtype=torch.bfloat16)
        lib.lora(x, w, a, b, y, s)
        torch.cuda.synchronize()
        torch.testing.assert_close(y.float(), want, rtol=2e-2, atol=3e-2)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_rmsnorm_linear_against_torch(dtype):
    # rms_norm(x, weight = g) @ W^T in one kernel, and with g folded into W:
    # the blocks of x staged with W's and read from the stage by the
    # threads (sm_90a: TMA ring; sm_80: cp.async ring), ragged shapes.
    M, K, N, eps = 300, 1000, 200, 1e-5
    x = torch.randn(M, K, device="cuda", dtype=dtype)
    g = (1 + 0.1 * torch.randn(K, device="cuda")).to(dtype)
    w = (torch.randn(N, K, device="cuda") / K ** 0.5).to(dtype)
    r = torch.rsqrt(x.float().pow(2).mean(1, keepdim=True) + eps)
    want = ((x.float() * g.float()).to(dtype).float() @ w.float().t()) * r
    wg = (w.float() * g.float()).to(dtype)
    want_folded = (x.float() @ wg.float().t()) * r
    for arch in ("sm_90a", "sm_80"):
        lib = tilec.load(example("norm_linear.tile"), arch=arch,
                         T="f16" if dtype == torch.float16 else "bf16")
        y = torch.full((M, N), 7.0, device="cuda", dtype=dtype)
        lib.rmsnorm_linear(x, g, w, y, eps)
        yf = torch.full((M, N), 7.0, device="cuda", dtype=dtype)
        lib.rmsnorm_linear_folded(x, wg, yf, eps)
        torch.cuda.synchronize()
        torch.testing.assert_close(y.float(), want, rtol=2e-2, atol=3e-2)
        torch.testing.assert_close(yf.float(), want_folded, rtol=2e-2, atol=3e-2)
        # The normalized x rounded to the input type and then multiplied
        # (as torch's rms_norm and linear layer round).
        ref = torch.nn.functional.linear((x.float() * r * g.float()).to(dtype), w).float()
        torch.testing.assert_close(y.float(), ref, rtol=3e-2, atol=5e-2)


@pytest.mark.parametrize("bm", [128, 64])
def test_linear_w8a16_against_torch(bm):
    # int8 weights with per-channel scales, ragged shapes, bf16 and f16
    # activations: the int8 blocks staged and widened in the kernel.
    M, K, N = 300, 1000, 200
    wq = torch.randint(-127, 128, (N, K), device="cuda", dtype=torch.int8)
    s = torch.rand(N, device="cuda") / 64
    for dtype, arch in ((torch.bfloat16, "sm_90a"), (torch.float16, "sm_90a"),
                        (torch.bfloat16, "sm_80")):
        x = torch.randn(M, K, device="cuda", dtype=dtype)
        want = (x.float() @ wq.float().t()) * s
        lib = tilec.load(example("quantized.tile"), arch=arch, BM=bm,
                         T="f16" if dtype == torch.float16 else "bf16")
        y = torch.full((M, N), 7.0, device="cuda", dtype=dtype)
        lib.linear_w8a16(x, wq, s, y)
        torch.cuda.synchronize()
        torch.testing.assert_close(y.float(), want, rtol=2e-2, atol=3e-2)


def test_varlen_attention_against_reference():
    # Packed sequences (flash_attn_varlen_func's layout): lengths that are
    # not multiples of the tiles, one past several key blocks, an empty
    # one, more queries than keys; GQA; D = 64, 96, 128, 160 and 192; causal
    # and not; the TMA + wgmma pipeline and sm_80's cp.async + mma.sync one
    # (its copies go in bands of 4 chunks at D = 96 and 160, 8 at D = 192).
    import numpy as np
    seq_q, seq_k = [1, 500, 0, 1000, 129, 64], [700, 500, 33, 1000, 17, 300]
    hq, hk = 8, 2
    cu_q = torch.tensor([0] + list(np.cumsum(seq_q)), dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0] + list(np.cumsum(seq_k)), dtype=torch.int32, device="cuda")
    for arch, d, causal in itertools.product(("sm_90a", "sm_80"), (64, 96, 128, 160, 192), (0, 1)):
        lib = tilec.load(example("attention.tile"), arch=arch, D=d, CAUSAL=causal)
        q = torch.randn(sum(seq_q), hq, d, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(sum(seq_k), hk, d, device="cuda", dtype=torch.bfloat16)
                for _ in range(2))
        o = torch.full_like(q, 7.0)
        lse = torch.empty(hq, sum(seq_q), device="cuda")
        # The offsets pass varlen_check (a failing one would end the CUDA
        # context; test_interpreter.py checks the failures).
        lib.varlen_check(cu_q, cu_k, sum(seq_q), sum(seq_k), max(seq_q), max(seq_k))
        lib.attention_varlen(q.view(-1, hq * d), k.view(-1, hk * d), v.view(-1, hk * d),
                             o.view(-1, hq * d), lse, cu_q, cu_k, max(seq_q), d ** -0.5)
        torch.cuda.synchronize()
        want, want_lse = varlen_attention_reference(
            q.view(-1, hq * d).float().cpu().numpy(), k.view(-1, hk * d).float().cpu().numpy(),
            v.view(-1, hk * d).float().cpu().numpy(), cu_q.cpu().numpy(), cu_k.cpu().numpy(),
            hq, hk, d, d ** -0.5, causal)
        got = o.view(-1, hq * d).float().cpu().numpy()
        np.testing.assert_allclose(got, want, atol=2e-2, rtol=2e-2,
                                   err_msg=f"{arch} D={d} causal={causal}")
        seen = np.isfinite(want_lse)
        got_lse = lse.cpu().numpy()
        np.testing.assert_allclose(got_lse[seen], want_lse[seen], atol=2e-3, rtol=2e-3)
        assert np.all(got_lse[~seen] < -1e30)


def test_grouped_mm_against_torch():
    # One launch over G row groups (mixture of experts), each times its own
    # B[g]; lengths that are not multiples of the tiles, empty groups, more
    # than eight groups (the walk to a tile's group steps by eight).
    rows = [300, 0, 1024, 17, 777, 128, 5, 0, 0, 64, 200, 1, 0, 999]
    k, n = 1000, 520
    offs = torch.tensor([0] + list(torch.tensor(rows).cumsum(0)), dtype=torch.int32, device="cuda")
    a = torch.randn(int(offs[-1]), k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(len(rows), k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.full((int(offs[-1]), n), 7.0, device="cuda", dtype=torch.bfloat16)
    for kernel, defines in (("grouped_mm", {}), ("grouped_mm_persistent", {}),
                            ("grouped_mm_persistent", {"PINGPONG": 1, "BN": 128})):
        lib = tilec.load(example("matmul.tile"), **defines)
        c.fill_(7.0)
        getattr(lib, kernel)(a, b, c, offs)
        torch.cuda.synchronize()
        for g in range(len(rows)):
            lo, hi = int(offs[g]), int(offs[g + 1])
            want = a[lo:hi].float() @ b[g].float()
            torch.testing.assert_close(c[lo:hi].float(), want, rtol=2e-2, atol=0.5)


def test_decode_with_gqa_against_sdpa():
    # Sq of 1 to 16 against long caches, 4 query heads per key/value head:
    # in one launch (attention, BM = 64) and split along the keys
    # (attention_decode + attention_combine), on both pipelines.
    B, Hq, Hkv, D = 2, 16, 4, 128
    G = Hq // Hkv
    cases = ((1, 8192, 1), (1, 8191, 4), (16, 1000, 3), (4, 70, 8))
    for arch, (Sq, Sk, splits) in itertools.product(("sm_90a", "sm_80"), cases):
        q = torch.randn(B, Hq, Sq, D, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(B, Hkv, Sk, D, device="cuda", dtype=torch.bfloat16)
                for _ in range(2))
        R = G * Sq
        scale = D ** -0.5
        o = torch.empty(B * Hkv, R, D, device="cuda", dtype=torch.bfloat16)
        lse = torch.empty(B * Hkv, R, device="cuda")
        qv, kv, vv = q.view(B * Hkv, R, D), k.view(B * Hkv, Sk, D), v.view(B * Hkv, Sk, D)
        if splits == 1:
            tilec.load(example("attention.tile"), arch=arch, D=D, BM=64).attention(
                qv, kv, vv, o, lse, scale)
        else:
            lib = tilec.load(example("attention.tile"), arch=arch, D=D, SPLITS=splits, R=R)
            op = torch.empty(B * Hkv * splits, R, D, device="cuda")
            lp = torch.empty(B * Hkv * splits, R, device="cuda")
            lib.attention_decode(qv, kv, vv, op, lp, scale)
            lib.attention_combine(op.view(B * Hkv, splits, R, D), lp.view(B * Hkv, splits, R),
                                  o, lse)
        want = torch.nn.functional.scaled_dot_product_attention(
            q.float(), k.float().repeat_interleave(G, 1), v.float().repeat_interleave(G, 1))
        torch.cuda.synchronize()
        torch.testing.assert_close(o.float().view(B, Hq, Sq, D), want, rtol=2e-2, atol=2e-2)
        s = (q.float() @ k.float().repeat_interleave(G, 1).transpose(-1, -2)) * scale
        torch.testing.assert_close(lse.view(B, Hq, Sq), torch.logsumexp(s, -1), rtol=1e-3,
                                   atol=1e-3)


def test_dtype_mismatch_raises_before_launch():
    lib = tilec.load(example("saxpy.tile"), T="f32")  # T given: not inferred
    x = torch.ones(16, device="cuda", dtype=torch.float64)
    y = torch.ones(16, device="cuda")
    with pytest.raises(tilec.ArgumentError, match=r"\('x'\) must be a tensor<f32, 1>, got a tensor of f64"):
        lib.saxpy(1.0, x, y)
    with pytest.raises(tilec.ArgumentError, match=r"type parameter T is f64 from argument 2"):
        tilec.load(example("saxpy.tile")).saxpy(1.0, x, y)
    # T inferred from the tensors: f64 on the GPU.
    y64 = torch.ones(16, device="cuda", dtype=torch.float64)
    tilec.load(example("saxpy.tile")).saxpy(2.0, x, y64)
    torch.cuda.synchronize()
    assert y64.dtype == torch.float64 and float(y64.sum()) == 48.0
    with pytest.raises(tilec.ArgumentError, match=r"is on the CPU"):
        lib.saxpy(1.0, y, torch.ones(16))


def test_torch_op_under_compile_and_graph_capture():
    import tilec.torch as tt
    lib = tilec.load(example("saxpy.tile"))
    op = tt.op(lib.saxpy, name="saxpy_gpu_check")
    x = torch.randn(4096, device="cuda")
    y = torch.zeros(4096, device="cuda")

    @torch.compile(fullgraph=True)
    def f(x, y):
        op(2.0, x, y)
        return y * 1.0

    out = f(x, y)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, 2.0 * x)
    y2 = torch.zeros(4096, device="cuda")
    op(1.0, x, y2)  # loads the module before capture
    torch.cuda.synchronize()
    y2.zero_()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        op(1.0, x, y2)
    g.replay()
    g.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(y2, 2.0 * x)


def test_assert_close_to_interpreter_on_the_gpu():
    lib = tilec.load(example("saxpy.tile"))
    x = torch.randn(5000, device="cuda")
    y = torch.randn(5000, device="cuda")
    tilec.testing.assert_close_to_interpreter(lib.saxpy, 2.0, x, y)
    mm = tilec.load(example("matmul.tile"), T="f16")
    a = torch.randn(200, 130, device="cuda", dtype=torch.float16)
    b = torch.randn(130, 300, device="cuda", dtype=torch.float16)
    c = torch.empty(200, 300, device="cuda")
    tilec.testing.assert_close_to_interpreter(mm.matmul, a, b, c, rtol=1e-2, atol=1e-2)
    w = tilec.compile("kernel w(x: tensor<f32, 1>) grid(1) {\n"
                      "    store(x, [0], load(x, [0], [16]) + cast<f32>(range(16)));\n}\n").w
    tilec.testing.assert_close_to_interpreter(w, torch.zeros(16, device="cuda"))

    # bf16 CUDA tensors against the interpreter on bf16 CPU tensors.
    lib16 = tilec.load(example("saxpy.tile"))
    xb = torch.randn(3000, device="cuda", dtype=torch.bfloat16)
    yb = torch.randn(3000, device="cuda", dtype=torch.bfloat16)
    tilec.testing.assert_close_to_interpreter(lib16.saxpy, 2.0, xb, yb, rtol=0, atol=0)


def test_tune_on_the_gpu_and_from_the_database():
    import tempfile
    db = tempfile.mktemp(suffix=".db")
    lib = tilec.load(example("vadd.tile"))
    x = torch.randn(1 << 20, device="cuda")
    y = torch.randn(1 << 20, device="cuda")
    z = torch.empty_like(x)
    k = lib.vadd.tune(x, y, z, database=db)
    choice = k.tuned
    assert not choice["from_database"] and choice["database"] == db
    assert sorted(t["config"] for t in choice["trials"]) == sorted(
        f"BLOCK={b}" for b in (512, 1024, 2048, 4096)), choice
    assert k.program.defines["BLOCK"] == choice["defines"]["BLOCK"]
    z.zero_()
    k(x, y, z)
    torch.cuda.synchronize()
    torch.testing.assert_close(z, x + y)
    again = tilec.load(example("vadd.tile")).vadd.tune(x, y, z, database=db)
    assert again.tuned["from_database"] and again.tuned["defines"] == choice["defines"]
    # T inferred from the tensors: a separate entry.
    h = torch.randn(5000, device="cuda", dtype=torch.float16)
    kh = lib.vadd.tune(h, h, torch.empty_like(h), database=db)
    assert kh.program.defines["T"] == "f16"
    # vadd has no @heuristic: nothing chosen, no plain launch timed.
    assert choice["heuristic"] == {} and choice["heuristic_microseconds"] < 0


def test_tune_on_top_of_the_heuristic():
    # matmul's @tune space over what its @heuristic chooses for the rest
    # (GROUP: 8, grouped order, at K = 256), with the plain launch timed
    # beside the trials.
    import tempfile
    mm = tilec.load(example("matmul.tile"), O="bf16").matmul.with_defines(
        BM=128, BN=128, CLUSTER=1, PERSISTENT=0)
    a = torch.randn(512, 256, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(256, 384, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(512, 384, device="cuda", dtype=torch.bfloat16)
    k = mm.tune(a, b, c, database=tempfile.mktemp(suffix=".db"))
    choice = k.tuned
    assert sorted(t["config"] for t in choice["trials"]) == ["STAGES=0", "STAGES=3"], choice
    assert choice["heuristic"]["GROUP"] == 8 and choice["heuristic_microseconds"] > 0, choice
    c.zero_()
    k(a, b, c)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-2, atol=2e-1)


def test_device_print_reaches_python():
    import io
    out = io.StringIO()
    # (A kernel without tensor arguments runs on the interpreter: give it one.)
    g = tilec.compile('kernel g(x: tensor<f32, 1>) grid(2) { print("block", block_id(0)); }').g
    with tilec.device_output(out):
        g(torch.zeros(4, device="cuda"))
    lines = sorted(out.getvalue().splitlines())
    assert lines == ["pid (0, 0, 0): block 0", "pid (1, 0, 0): block 1"], out.getvalue()


def test_a_device_fault_names_the_kernel_and_says_the_context_is_lost():
    # In a process of its own: after the fault its CUDA context is gone.
    import os
    import subprocess
    script = f"""
import sys, torch
sys.path.insert(0, {os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")!r})
import tilec
boom = tilec.compile('kernel boom(x: tensor<f32, 1>) grid(1) {{ assert(load(x, [0], [4]) > 0.0, "positive"); }}').boom
saxpy = tilec.load({example("saxpy.tile")!r}).saxpy
x = torch.zeros(4, device="cuda")
saxpy(1.0, x, x)
boom(x)
try:
    torch.cuda.synchronize()
except Exception:
    pass
try:
    saxpy(1.0, x, x)
except RuntimeError as e:
    print("ERROR", e)
"""
    env = dict(os.environ)
    if os.environ.get("TILEC_TEST_INSTALLED") == "1":
        script = script.replace("sys.path.insert", "(lambda *a: None)")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                       timeout=120)
    out = r.stdout
    assert "ERROR" in out, (r.stdout, r.stderr)
    assert "kernel 'saxpy': " in out and "CUDA_ERROR_ASSERT" in out, out
    assert "the last kernel tilec launched before this call was 'boom'" in out, out
    assert "the CUDA context is now unusable" in out, out


if __name__ == "__main__":
    failed = 0
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            try:
                fn()
                print("PASS", name)
            except Exception as e:  # noqa: BLE001
                failed += 1
                print("FAIL", name, type(e).__name__, e)
    sys.exit(1 if failed else 0)


def test_matmul_column_statistics_against_torch():
    # Reductions over the accumulator's rows (axis = 0) in the epilogue:
    # the wgmma path (2 consumer warpgroups at BM = 128, 1 at 64, BN 256 /
    # 128 / 192), ragged shapes, f16 too, persistent programs.
    lib = tilec.load(example("matmul_stats.tile"))
    for (m, k, n), opts in [((1000, 777, 3000), {}), ((4096, 1024, 4096), {}),
                            ((300, 200, 100), {"BN": 128}), ((257, 64, 384), {"BM": 64, "BN": 192}),
                            ((1000, 512, 1000), {"T": "f16"})]:
        dt = torch.float16 if opts.get("T") == "f16" else torch.bfloat16
        bm = opts.get("BM", 128)
        a = torch.randn(m, k, device="cuda", dtype=dt)
        b = torch.randn(k, n, device="cuda", dtype=dt)
        y = torch.empty(m, n, device="cuda", dtype=dt)
        blocks = (m + bm - 1) // bm
        s = torch.empty(blocks, n, device="cuda")
        q = torch.empty(blocks, n, device="cuda")
        lib.matmul_colstats(a, b, y, s, q, **opts)
        torch.cuda.synchronize()
        prod = a.float() @ b.float()
        torch.testing.assert_close(y.float(), prod, rtol=2e-2, atol=2e-1)
        pf = torch.nn.functional.pad(prod, (0, 0, 0, blocks * bm - m)).view(blocks, bm, n)
        torch.testing.assert_close(s, pf.sum(1), rtol=1e-3, atol=0.5)
        torch.testing.assert_close(q, (pf * pf).sum(1), rtol=1e-3, atol=1.0)


def test_matmul_with_column_block_scales_against_torch():
    lib = tilec.load(example("matmul_stats.tile"))
    for m, k, n in [(1000, 777, 3000), (128, 256, 512), (300, 64, 136)]:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        b[:, 5] = 0
        y = torch.empty(m, n, device="cuda", dtype=torch.float8_e4m3fn)
        blocks = (m + 127) // 128
        sy = torch.empty(blocks, n, device="cuda")
        lib.matmul_quant_cols(a, b, y, sy, BN=128 if n % 256 else 256)
        torch.cuda.synchronize()
        acc = torch.nn.functional.pad(a.float() @ b.float(), (0, 0, 0, blocks * 128 - m))
        amax = acc.view(blocks, 128, n).abs().amax(1)
        want = torch.where(amax > 0, amax / 448.0, torch.ones_like(amax))
        torch.testing.assert_close(sy, want, rtol=1e-5, atol=0)
        rows = torch.arange(m, device="cuda") // 128
        deq = y.float() * sy[rows]
        torch.testing.assert_close(deq, acc[:m], rtol=0.07, atol=1e-3 * float(amax.max()))


def test_column_values_meet_a_loaded_row_against_torch():
    # A [BN] tile loaded next to a reduction over the accumulator's rows
    # takes the column values' layout (each thread loads the columns it
    # holds); the sum is stored as a [1, BN] row.
    lib = tilec.compile('''
kernel colmax_bias<BM: int = 128, BN: int = 256, BK: int = 64>(
    A: tensor<bf16, 2>, B: tensor<bf16, 2>, bias: tensor<f32, 1>, X: tensor<f32, 2>)
    grid(cdiv(A.shape[0], BM), cdiv(B.shape[1], BN))
{
    var acc = zeros<f32>([BM, BN]);
    for k in 0 .. cdiv(A.shape[1], BK) {
        acc = mma(load(A, [block_id(0), k], [BM, BK]), load(B, [k, block_id(1)], [BK, BN]), acc);
    }
    store(X, [block_id(0), block_id(1)],
          expand_dims(max(acc, axis = 0) + load(bias, [block_id(1)], [BN]), 0));
}
''')
    for m, k, n in [(1000, 777, 3000), (128, 64, 256)]:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        bias = torch.randn(n, device="cuda")
        blocks = (m + 127) // 128
        x = torch.empty(blocks, n, device="cuda")
        lib.colmax_bias(a, b, bias, x)
        torch.cuda.synchronize()
        prod = torch.nn.functional.pad(a.float() @ b.float(), (0, 0, 0, blocks * 128 - m),
                                       value=float("-inf"))
        want = prod.view(blocks, 128, n).amax(1)
        # Rows past M are zeros in the kernel's tile: a column max is at least 0 there.
        if m % 128:
            want[-1] = torch.maximum(want[-1], torch.zeros_like(want[-1]))
        torch.testing.assert_close(x, want + bias, rtol=1e-3, atol=1e-2)


def test_row_reductions_in_registers_against_torch():
    # python/tests/row_reductions.tile: reductions over axis 1 that stay in
    # the rows' threads (shuffles, and shared memory once for rows wider
    # than a warp), ragged rows and columns.
    import os
    with open(os.path.join(os.path.dirname(__file__), "row_reductions.tile")) as f:
        lib = tilec.compile(f.read())
    for m, n, dt in [(1001, 64, torch.float32), (3, 50, torch.float32), (1000, 64, torch.bfloat16)]:
        x = torch.randn(m, n, device="cuda", dtype=dt)
        y = torch.empty_like(x)
        lib.rowsoftmax(x, y)
        torch.cuda.synchronize()
        tol = 2e-2 if dt == torch.bfloat16 else 1e-5
        torch.testing.assert_close(y.float(), torch.softmax(x.float(), 1), rtol=tol, atol=tol)
    for m, n in [(1000, 1000), (13, 1024), (9, 3)]:
        x = torch.randint(-50, 50, (m, n), device="cuda").float()  # ties: the first column wins
        best = torch.empty(m, device="cuda", dtype=torch.int32)
        lib.rowargmax8(x, best)
        torch.cuda.synchronize()
        assert torch.equal(best.long(), torch.argmax(x, 1)), (m, n)
    for m, n in [(37, 10000), (2, 4096), (5, 17)]:
        x = torch.randn(m, n, device="cuda")
        out = torch.empty(m, 1, device="cuda")
        lib.rowabsmax(x, out)
        torch.cuda.synchronize()
        torch.testing.assert_close(out[:, 0], x.abs().amax(1), rtol=0, atol=0)
    for m in [100, 3, 1]:
        x = torch.randn(m, 32, device="cuda")
        y = torch.empty_like(x)
        s = torch.empty(m, device="cuda", dtype=torch.int32)
        lib.rowcenter(x, y, s)
        torch.cuda.synchronize()
        torch.testing.assert_close(y, x - x.sum(1, keepdim=True) / 32.0, rtol=1e-5, atol=1e-5)
        assert torch.equal(s.long(), (x > 0).sum(1)), m
    for m, n in [(1001, 128), (3, 77)]:  # a loaded [R] tile meets the row sums
        x = torch.randn(m, n, device="cuda")
        b = torch.randn(m, device="cuda")
        s = torch.empty(m, device="cuda")
        lib.rowsum_bias(x, b, s)
        torch.cuda.synchronize()
        torch.testing.assert_close(s, x.sum(1) + b, rtol=1e-5, atol=1e-4)


def test_shared_memory_plan_against_torch():
    # test/Transforms/Inputs/shared-plan.tile: a 128 x 128 f32 transpose
    # (66 KB of shared memory, a dynamic array), and a scan, a whole-tile
    # sum and a 128 x 256 transpose in one program, side by side on sm_90a
    # (197664 bytes) and sharing one range on sm_80 (131584 bytes).
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "Transforms", "Inputs",
                        "shared-plan.tile")
    with open(path) as f:
        source = f.read()
    for arch in ("sm_90a", "sm_80"):
        lib = tilec.compile(source, arch=arch)
        x = torch.randn(1000, 3000, device="cuda")
        y = torch.empty(3000, 1000, device="cuda")
        lib.transpose_wide(x, y)
        torch.cuda.synchronize()
        assert torch.equal(y, x.t()), arch
        v = torch.randint(-8, 8, (65536,), device="cuda").float()  # exact sums
        s = torch.empty_like(v)
        t = torch.empty(1, device="cuda")
        w = torch.randn(300, 700, device="cuda")
        z = torch.empty(700, 300, device="cuda")
        lib.scan_sum_transpose(v, s, t, w, z)
        torch.cuda.synchronize()
        assert torch.equal(s, torch.cumsum(v, 0)), arch
        assert t.item() == v.sum().item(), arch
        assert torch.equal(z, w.t()), arch
