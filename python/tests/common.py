"""What the test files share: tilec imported from this checkout (or, with
TILEC_TEST_INSTALLED=1, the one installed, e.g. from the wheel), and the
paths of the examples."""
import os
import sys

if os.environ.get("TILEC_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import tilec  # noqa: E402,F401

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def example(name):
    return os.path.join(ROOT, "examples", name)



def attention_reference(q, k, v, scale, causal=False):
    """O and the log-sum-exp of attention, in float64 (numpy): q [B, Hq, Sq,
    D], k and v [B, Hkv, Sk, D] (query head h uses key/value head h // (Hq /
    Hkv)); causal aligned to the bottom-right corner. A row that sees no key
    gets zeros and -inf."""
    import numpy as np
    g = q.shape[1] // k.shape[1]
    k, v = (np.repeat(np.asarray(t, np.float64), g, axis=1) for t in (k, v))
    s = np.einsum("bhqd,bhkd->bhqk", np.asarray(q, np.float64), k) * scale
    if causal:
        sq, sk = s.shape[-2:]
        s = np.where(np.tril(np.ones((sq, sk), bool), sk - sq), s, -np.inf)
    seen = np.isfinite(s).any(-1, keepdims=True)
    top = np.where(seen, s.max(-1, keepdims=True, initial=-np.inf), 0.0)
    p = np.exp(s - top)
    l = np.where(seen, p.sum(-1, keepdims=True), 1.0)
    o = np.where(seen, np.einsum("bhqk,bhkd->bhqd", p, v) / l, 0.0)
    return o, np.where(seen[..., 0], top[..., 0] + np.log(l[..., 0]), -np.inf)


def varlen_attention_reference(q, k, v, cu_q, cu_k, hq, hk, d, scale, causal):
    """attention_reference over packed variable-length sequences: q [total_q,
    hq * d], k and v [total_k, hk * d], cu_q / cu_k the B + 1 offsets.
    Returns O [total_q, hq * d] and the log-sum-exp [hq, total_q]."""
    import numpy as np
    q, k, v = (np.asarray(t, dtype=np.float64) for t in (q, k, v))
    out = np.zeros((q.shape[0], hq * d))
    lse = np.full((hq, q.shape[0]), -np.inf)
    heads = lambda t, h: t.reshape(t.shape[0], h, d).transpose(1, 0, 2)[None]  # noqa: E731
    for b in range(len(cu_q) - 1):
        qa, qb, ka, kb = int(cu_q[b]), int(cu_q[b + 1]), int(cu_k[b]), int(cu_k[b + 1])
        if qb == qa or kb == ka:
            continue
        o, l = attention_reference(heads(q[qa:qb], hq), heads(k[ka:kb], hk), heads(v[ka:kb], hk),
                                   scale, causal)
        out[qa:qb] = o[0].transpose(1, 0, 2).reshape(qb - qa, hq * d)
        lse[:, qa:qb] = l[0]
    return out, lse


def _test_tile(name, arch=None):
    """python/tests/NAME compiled (for `arch` when given)."""
    return tilec.load(os.path.join(os.path.dirname(__file__), name),
                      **({"arch": arch} if arch else {}))


def shared_operand_check(torch, arch=None, device="cpu"):
    """Runs python/tests/shared_operands.tile's kernels and checks them
    against torch (the interpreter's test here, the GPU's in test_gpu.py)."""
    lib = _test_tile("shared_operands.tile", arch)
    g = torch.Generator().manual_seed(11)
    t = {n: torch.randn(*shape, generator=g).bfloat16().to(device)
         for n, shape in (("x1", (200, 130)), ("x2", (200, 130)), ("w", (130, 70)),
                          ("q", (200, 64)), ("k", (300, 64)), ("v", (64, 300)))}
    f = {n: x.float() for n, x in t.items()}
    y = torch.zeros(200, 70, device=device)
    lib.twoa(t["x1"], t["x2"], t["w"], y)
    torch.testing.assert_close(y, (f["x1"] @ f["w"]) * (f["x2"] @ f["w"]), rtol=1e-3, atol=1e-2)
    # resident2: q times the 64-row blocks of K (transposed) summed, plus q
    # times the 64-column blocks of V summed (the last blocks zero-padded).
    y2 = torch.zeros(200, 64, device=device)
    lib.resident2(t["q"], t["k"], t["v"], y2)
    ksum = torch.nn.functional.pad(f["k"], (0, 0, 0, 20)).reshape(5, 64, 64).sum(0)
    vsum = torch.nn.functional.pad(f["v"], (0, 20)).reshape(64, 5, 64).sum(1)
    torch.testing.assert_close(y2, f["q"] @ ksum.t() + f["q"] @ vsum, rtol=1e-3, atol=1e-2)
    # xxt: the 64-row blocks of x1 (200 rows: the last block 8 rows) times
    # their own transposes.
    c = torch.full((200, 64), 7.0, device=device)
    lib.xxt(t["x1"], c)
    blocks = torch.nn.functional.pad(f["x1"], (0, 0, 0, 56)).reshape(4, 64, 130)
    want = (blocks @ blocks.transpose(1, 2)).reshape(256, 64)[:200]
    torch.testing.assert_close(c, want, rtol=1e-3, atol=1e-2)
    # two_places: x1 (200 x 130) in 64-row blocks against w (130 x 70, its
    # first 64 columns) as loaded and transposed.
    a_out = torch.full((200, 64), 7.0, device=device)
    c_out = torch.full((200, 64), 7.0, device=device)
    lib.two_places(t["x1"], t["w"], a_out, c_out)
    w64 = torch.nn.functional.pad(f["w"][:, :64], (0, 0, 0, 62)).reshape(3, 64, 64)
    xb = torch.nn.functional.pad(f["x1"], (0, 62, 0, 56)).reshape(4, 64, 3, 64)
    torch.testing.assert_close(a_out, f["x1"] @ f["w"][:, :64], rtol=1e-3, atol=1e-2)
    want_c = sum(w64[k].t() @ xb[:, :, k, :] for k in range(3)).reshape(256, 64)[:200]
    torch.testing.assert_close(c_out, want_c, rtol=1e-3, atol=1e-2)


def single_mma_check(torch, arch=None, device="cpu"):
    """Runs python/tests/single_mma.tile's kernels (an mma outside any loop
    over K, at the top level and in a persistent loop over tiles) and checks
    them against torch, at shapes that are not multiples of the tiles and a
    K below the tile's."""
    lib = _test_tile("single_mma.tile", arch)
    g = torch.Generator().manual_seed(23)
    M, N, K = 300, 200, 50
    a = torch.randn(M, K, generator=g).bfloat16().to(device)
    b = torch.randn(K, N, generator=g).bfloat16().to(device)
    want = a.float() @ b.float()
    c = torch.full((M, N), 7.0, device=device)
    lib.small_k(a, b, c)
    torch.testing.assert_close(c, want + 1.0, rtol=1e-3, atol=1e-2)
    bt = b.t().contiguous()
    c2 = torch.full((M, N), 7.0, device=device).bfloat16()
    lib.small_k_persistent(a, bt, c2)
    torch.testing.assert_close(c2.float(), want, rtol=2e-2, atol=2e-2)
    a32 = torch.randn(M, K, generator=g).to(device)
    c3 = torch.full((M, N), 7.0, device=device)
    lib.small_k_cast(a32, b, c3)
    torch.testing.assert_close(c3, a32.bfloat16().float() @ b.float(), rtol=1e-3, atol=1e-2)


def chained_check(torch, arch=None, device="cpu"):
    """Runs python/tests/chained.tile against torch: gram_after (a chained
    mma with a computed, transposed b: Y's rows of block i are H_i H_i^T,
    H = X W over W's first 128 columns, rounded to bf16) and attention_proj
    (attention, then its output times Wo after the loop)."""
    lib = _test_tile("chained.tile", arch)
    g = torch.Generator().manual_seed(29)
    M, K = 300, 200
    x = (torch.randn(M, K, generator=g) / K ** 0.25).bfloat16().to(device)
    w = (torch.randn(K, 130, generator=g) / K ** 0.25).bfloat16().to(device)
    y = torch.full((M, 128), 7.0, device=device)
    lib.gram_after(x, w, y)
    h = torch.nn.functional.pad((x.float() @ w.float()[:, :128]).bfloat16().float(),
                                (0, 0, 0, 84)).reshape(3, 128, 128)
    want = (h @ h.transpose(1, 2)).reshape(384, 128)[:M]
    torch.testing.assert_close(y, want, rtol=1e-2, atol=5e-2)
    # attention_proj: softmax(q k^T / 8) v (rounded to bf16) times wo, 200
    # queries, 300 keys (the last key block masked), D = 64, DO = 128.
    q, k, v = (torch.randn(n, 64, generator=g).bfloat16().to(device) for n in (200, 300, 300))
    wo = (torch.randn(64, 128, generator=g) / 8).bfloat16().to(device)
    o = torch.full((200, 128), 7.0, device=device)
    lib.attention_proj(q, k, v, wo, o, 0.125)
    att = torch.softmax(q.float() @ k.float().t() * 0.125, dim=-1) @ v.float()
    torch.testing.assert_close(o, att.bfloat16().float() @ wo.float(), rtol=2e-2, atol=2e-2)


def computed_operand_check(torch, arch=None, device="cpu"):
    """Runs python/tests/computed_operands.tile's kernels (a computed b, a
    transposed computed a and b, read from shared memory; a computed a from
    tiles staged for that work, one at a position computed in an `if`) and
    checks them against torch, at ragged shapes."""
    lib = _test_tile("computed_operands.tile", arch)
    g = torch.Generator().manual_seed(17)

    def randn(*shape):
        return torch.randn(*shape, generator=g).bfloat16().to(device)
    x, dy, z = randn(200, 130), randn(200, 150), randn(200, 150)
    dw = torch.full((130, 150), 7.0, device=device)
    lib.wgrad_relu(x, dy, z, dw)
    want = x.float().t() @ torch.where(z > 0, dy, torch.zeros_like(dy)).float()
    torch.testing.assert_close(dw, want, rtol=1e-3, atol=1e-2)
    a, b = randn(200, 130), randn(200, 150)
    c = torch.full((130, 150), 7.0, device=device)
    lib.at_computed(a, b, c)
    torch.testing.assert_close(c, 2 * a.float().t() @ b.float(), rtol=1e-3, atol=1e-2)
    a, w = randn(200, 130), randn(150, 130)
    c = torch.full((200, 150), 7.0, device=device)
    lib.bt_computed(a, w, c)
    torch.testing.assert_close(c, a.float() @ (w.float() / 2).t(), rtol=1e-3, atol=1e-2)
    # Block k of K scales by G's block k - k % 2 (BK = 64), K ragged.
    x, gm, w = randn(200, 300), randn(200, 300), randn(300, 270)
    y = torch.full((200, 270), 7.0, device=device)
    lib.scaled_pairs(x, gm, w, y)
    cols = torch.arange(300, device=device)
    shared = cols // 128 * 128 + cols % 64
    want = (x.float() * gm.float()[:, shared]).bfloat16().float() @ w.float()
    torch.testing.assert_close(y, want, rtol=1e-3, atol=2e-2)


def _attention_f32(q, k, v, scale, causal):
    """O and the log-sum-exp of attention in f32, differentiable: q [hq,
    sq, d], k and v [hk, sk, d] (query head h uses key/value head h // (hq /
    hk)); causal aligned to the bottom-right corner. A row that sees no key
    (Sq > Sk) has zero probabilities, a log-sum-exp of -inf and zero
    gradients (the masked_fill's backward zeroes the softmax's NaNs there)."""
    import torch
    k, v = (t.repeat_interleave(q.shape[0] // k.shape[0], dim=0) for t in (k, v))
    s = (q @ k.transpose(1, 2)) * scale
    p = torch.softmax(s, dim=-1)
    if causal:
        sq, sk = q.shape[1], k.shape[1]
        keep = torch.ones(sq, sk, dtype=torch.bool).tril(sk - sq)
        s = s.masked_fill(~keep, float("-inf"))
        p = torch.where(keep.any(-1, keepdim=True), torch.softmax(s, dim=-1), 0.0)
    return p @ v, torch.logsumexp(s, dim=-1)


def attention_backward_check(torch, sq, sk, hq, hk, causal, arch=None, device="cpu",
                             d=64, defines=None):
    """Runs examples/attention_backward.tile's three kernels on the
    gradients of attention ([hq, sq, d] queries, [hk, sk, d] keys and
    values, bf16) and checks dQ, dK and dV against torch's autograd of the
    same attention in f32 (O and the log-sum-exp given to the kernels are
    that reference's)."""
    lib = tilec.load(example("attention_backward.tile"), D=d, CAUSAL=int(causal),
                     **(defines or {}), **({"arch": arch} if arch else {}))
    g = torch.Generator().manual_seed(19)
    q, k, v, do = (torch.randn(h, s, d, generator=g).bfloat16()
                   for h, s in ((hq, sq), (hk, sk), (hk, sk), (hq, sq)))
    scale = d ** -0.5
    qf, kf, vf = (t.float().requires_grad_() for t in (q, k, v))
    o, lse = _attention_f32(qf, kf, vf, scale, causal)
    dq_ref, dk_ref, dv_ref = torch.autograd.grad(o, (qf, kf, vf), do.float())
    on = lambda t: t.contiguous().to(device)  # noqa: E731
    o16, lse32 = on(o.detach().bfloat16()), on(lse.detach())
    q, k, v, do = on(q), on(k), on(v), on(do)
    delta = torch.zeros(hq, sq, device=device)
    lib.attention_bwd_delta(o16, do, delta)
    torch.testing.assert_close(delta.cpu(), (o16.float() * do.float()).sum(-1).cpu(),
                               rtol=1e-4, atol=1e-4)
    dq = torch.full((hq, sq, d), 7.0, device=device).bfloat16()
    dk = torch.full((hk, sk, d), 7.0, device=device).bfloat16()
    dv = torch.full((hk, sk, d), 7.0, device=device).bfloat16()
    lib.attention_bwd_dq(q, k, v, do, lse32, delta, dq, scale)
    lib.attention_bwd_dkdv(q, k, v, do, lse32, delta, dk, dv, scale)
    for got, want in ((dq, dq_ref), (dk, dk_ref), (dv, dv_ref)):
        torch.testing.assert_close(got.float().cpu(), want, rtol=2e-2, atol=2e-2)


def column_slice_check(torch, arch=None, device="cpu"):
    """Runs python/tests/column_slices.tile's kernels (whole columns of an
    accumulator sliced in registers) against torch, at ragged shapes."""
    lib = _test_tile("column_slices.tile", arch)
    g = torch.Generator().manual_seed(23)

    def randn(*shape):
        return (torch.randn(*shape, generator=g) / shape[0] ** 0.5).bfloat16()

    def interleave(wg, wu, block):
        # Column blocks of `block` alternating wg, wu (both padded to whole
        # blocks with zeros).
        pad = -wg.shape[1] % block
        wg, wu = (torch.nn.functional.pad(w, (0, pad)) for w in (wg, wu))
        k, n = wg.shape
        return torch.stack([wg.view(k, n // block, block), wu.view(k, n // block, block)],
                           dim=2).reshape(k, 2 * n)
    x, wg, wu = randn(200, 130), randn(130, 150), randn(130, 150)
    h = torch.full((200, 150), 7.0).bfloat16().to(device)
    lib.gate_up(x.to(device), interleave(wg, wu, 64).contiguous().to(device), h)
    want = torch.nn.functional.silu(x.float() @ wg.float()) * (x.float() @ wu.float())
    torch.testing.assert_close(h.float().cpu(), want, rtol=2e-2, atol=2e-2)
    x, wg, wu, w2 = randn(200, 64), randn(64, 100), randn(64, 100), randn(100, 70)
    y = torch.full((200, 70), 7.0).to(device)
    lib.swiglu_mlp(x.to(device), interleave(wg, wu, 32).contiguous().to(device), w2.to(device), y)
    hidden = torch.nn.functional.silu(x.float() @ wg.float()) * (x.float() @ wu.float())
    want = hidden.bfloat16().float() @ w2.float()
    torch.testing.assert_close(y.cpu(), want, rtol=2e-2, atol=2e-2)


def attention_backward_varlen_check(torch, seqs_q, seqs_k, hq, hk, causal, arch=None,
                                    device="cpu", d=64):
    """examples/attention_backward.tile's varlen kernels on sequences of
    lengths `seqs_q` / `seqs_k` packed along the rows ([total, heads * d]),
    against torch's autograd of each sequence's attention in f32."""
    lib = tilec.load(example("attention_backward.tile"), D=d, CAUSAL=int(causal),
                     **({"arch": arch} if arch else {}))
    g = torch.Generator().manual_seed(29)
    tq, tk = sum(seqs_q), sum(seqs_k)
    q, k, v, do = (torch.randn(t, h * d, generator=g).bfloat16()
                   for t, h in ((tq, hq), (tk, hk), (tk, hk), (tq, hq)))
    scale = d ** -0.5
    qf, kf, vf = (t.float().requires_grad_() for t in (q, k, v))
    outs, lses = [], []
    cq, ck = [0], [0]
    for a, b in zip(seqs_q, seqs_k):
        cq.append(cq[-1] + a)
        ck.append(ck[-1] + b)
    for i in range(len(seqs_q)):
        heads = lambda t, c, h: t[c[i]:c[i + 1]].view(-1, h, d).transpose(0, 1)  # noqa: E731
        o_i, lse_i = _attention_f32(heads(qf, cq, hq), heads(kf, ck, hk), heads(vf, ck, hk),
                                    scale, causal)
        lses.append(lse_i)
        outs.append(o_i.transpose(0, 1).reshape(-1, hq * d))
    o = torch.cat(outs)
    lse = torch.cat(lses, dim=1)
    dq_ref, dk_ref, dv_ref = torch.autograd.grad(o, (qf, kf, vf), do.float())
    on = lambda t: t.contiguous().to(device)  # noqa: E731
    o16, lse32 = on(o.detach().bfloat16()), on(lse.detach())
    q, k, v, do = on(q), on(k), on(v), on(do)
    cu_q, cu_k = (torch.tensor(c, dtype=torch.int32, device=device) for c in (cq, ck))
    delta = torch.zeros(hq, tq, device=device)
    lib.attention_bwd_delta_varlen(o16, do, delta)
    dq = torch.full((tq, hq * d), 7.0, device=device).bfloat16()
    dk = torch.full((tk, hk * d), 7.0, device=device).bfloat16()
    dv = torch.full((tk, hk * d), 7.0, device=device).bfloat16()
    lib.attention_bwd_dq_varlen(q, k, v, do, lse32, delta, dq, cu_q, cu_k, max(seqs_q), scale)
    lib.attention_bwd_dkdv_varlen(q, k, v, do, lse32, delta, dk, dv, cu_q, cu_k, max(seqs_k),
                                  scale)
    for got, want in ((dq, dq_ref), (dk, dk_ref), (dv, dv_ref)):
        torch.testing.assert_close(got.float().cpu(), want, rtol=2e-2, atol=2e-2)


def transposed_store_check(torch, arch=None, device="cpu"):
    """Runs python/tests/transposed_stores.tile's kernels (C = (A B)^T from
    the accumulator) and checks them against torch, at a ragged shape."""
    lib = _test_tile("transposed_stores.tile", arch)
    g = torch.Generator().manual_seed(13)
    a = torch.randn(200, 130, generator=g).bfloat16().to(device)
    b = torch.randn(130, 300, generator=g).bfloat16().to(device)
    want = (a.float() @ b.float()).t()
    for kernel in (lib.mm_t, lib.mm_t_general):
        c = torch.full((300, 200), 7.0, device=device)
        kernel(a, b, c)
        torch.testing.assert_close(c, want, rtol=1e-3, atol=1e-2)


# The checks of python/tests/*.tile by name (test_interpreter.py and
# test_gpu.py run each).
def loop_store_check(torch, arch=None, device="cpu"):
    """Runs python/tests/loop_stores.tile's kernels (stores and atomics in
    the mma loop) against torch: the scaled scores and the attention output
    (200 queries, 300 keys: the last key block masked, its scores past the
    keys not stored), the running product's last write, and the sum of the
    per-block products added by atomics into a zeroed C."""
    lib = _test_tile("loop_stores.tile", arch)
    g = torch.Generator().manual_seed(31)
    q, k, v = (torch.randn(n, 64, generator=g).bfloat16().to(device) for n in (200, 300, 300))
    s = torch.full((200, 300), 7.0, device=device)
    o = torch.full((200, 64), 7.0, device=device)
    lib.scores(q, k, v, s, o, 0.125)
    want_s = q.float() @ k.float().t() * 0.125
    torch.testing.assert_close(s, want_s, rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(o, torch.softmax(want_s, dim=-1) @ v.float(), rtol=2e-2, atol=2e-2)
    a = torch.randn(300, 200, generator=g).bfloat16().to(device)
    b = torch.randn(200, 100, generator=g).bfloat16().to(device)
    want = a.float() @ b.float()
    c = torch.full((300, 100), 7.0, device=device)
    lib.running(a, b, c)
    torch.testing.assert_close(c, want, rtol=1e-3, atol=1e-2)
    c2 = torch.zeros(300, 100, device=device)
    lib.per_block_atomic(a, b, c2)
    torch.testing.assert_close(c2, want, rtol=1e-3, atol=1e-2)


def sequence_check(torch, arch=None, device="cpu"):
    """Runs python/tests/sequences.tile's kernels (mma loops one after the
    other) against torch, at shapes that are not multiples of the tiles and
    loops of different lengths."""
    lib = _test_tile("sequences.tile", arch)
    g = torch.Generator().manual_seed(37)
    r = lambda *shape: torch.randn(*shape, generator=g).bfloat16().to(device)  # noqa: E731
    a, b, x, w = r(300, 200), r(200, 130), r(300, 70), r(130, 70)
    c = torch.full((300, 130), 7.0, device=device)
    lib.two_products(a, b, x, w, c)
    want = (a.float() @ b.float()) * (x.float() @ w.float().t())
    torch.testing.assert_close(c, want, rtol=1e-3, atol=5e-2)
    c = torch.full((300, 130), 7.0, device=device)
    lib.two_products_persistent(a, b, x, w, c)
    torch.testing.assert_close(c, want, rtol=1e-3, atol=5e-2)
    # The loops whose lengths change with the tile: output block (m, n) of
    # width bn is a sum of products of K-column ranges [k0, k1) of the
    # operands (p [rows, K] times q [K, cols]).
    def part(p, q, m, n, bn, k0, k1=None):
        rows, cols = slice(128 * m, 128 * m + 128), slice(bn * n, bn * n + bn)
        return p[rows, k0:k1].float() @ q[k0:k1, cols].float()

    def blocks(f, n_blocks, bn):
        out = torch.empty(300, 130, device=device)
        for m in range(3):
            for n in range(n_blocks):
                out[128 * m:128 * m + 128, bn * n:bn * n + bn] = f(m, n)
        return out
    # two_products_varying: row block m takes A's first (m + 1) * 64
    # columns, column block n X's and W's from (n % 2) * 64 on; with X of
    # one block of K, the second loop of column block 1 runs no iteration.
    for x3, w3 in ((x, w), (r(300, 50), r(130, 50))):
        c = torch.full((300, 130), 7.0, device=device)
        lib.two_products_varying(a, b, x3, w3, c)
        want_v = blocks(lambda m, n: part(a, b, m, n, 128, 0, 64 * (m + 1))
                        + part(x3, w3.t(), m, n, 128, 64 * (n % 2)), 2, 128)
        torch.testing.assert_close(c, want_v, rtol=1e-3, atol=5e-2)
    # three_products_varying and own_outer_varying: A [300, 200] (4 blocks
    # of K), B [200, 130] (3 column blocks of 64).
    c = torch.full((300, 130), 7.0, device=device)
    lib.three_products_varying(a, b, c)
    want3 = blocks(lambda m, n: part(a, b, m, n, 64, 0, 128) + 2.0 * part(a, b, m, n, 64, 0, 64 * (m + 1))
                   + 3.0 * part(a, b, m, n, 64, 64 * n), 3, 64)
    torch.testing.assert_close(c, want3, rtol=1e-3, atol=5e-2)
    c = torch.full((300, 130), 7.0, device=device)
    lib.own_outer_varying(a, b, c)
    want_own = blocks(lambda m, n: part(a, b, m, n, 64, 0, 64 * (m + 1)) - part(a, b, m, n, 64, 64 * m), 3, 64)
    torch.testing.assert_close(c, want_own, rtol=1e-3, atol=5e-2)
    q, k1, k2 = r(200, 64), r(300, 64), r(100, 64)
    s = torch.full((200, 64), 7.0, device=device)
    lib.shared_q(q, k1, k2, s)
    blocks = lambda t: torch.nn.functional.pad(t.float(), (0, 0, 0, (-t.shape[0]) % 64)).reshape(-1, 64, 64).sum(0)  # noqa: E731,E501
    want_s = q.float() @ blocks(k1).t() + 2.0 * q.float() @ blocks(k2).t()
    torch.testing.assert_close(s, want_s, rtol=1e-3, atol=5e-2)
    v = r(300, 64)
    p = torch.full((200, 300), 7.0, device=device)
    o = torch.full((200, 64), 7.0, device=device)
    lib.attention_probs(q, k1, v, p, o, 0.125)
    want_p = torch.softmax(q.float() @ k1.float().t() * 0.125, dim=-1)
    torch.testing.assert_close(p, want_p, rtol=1e-3, atol=1e-4)
    torch.testing.assert_close(o, want_p.bfloat16().float() @ v.float(), rtol=2e-2, atol=2e-2)
    p = torch.full((200, 300), 7.0, device=device)
    o = torch.full((200, 64), 7.0, device=device)
    lib.attention_probs_persistent(q, k1, v, p, o, 0.125)
    torch.testing.assert_close(p, want_p, rtol=1e-3, atol=1e-4)
    torch.testing.assert_close(o, want_p.bfloat16().float() @ v.float(), rtol=2e-2, atol=2e-2)
    # mixed: A [300, 200] B [200, 64]; X [300, 130] W [64, 130]; W3 [64, 64].
    a2, b2, x2, w2 = r(300, 200), r(200, 64) / 8, r(300, 130), r(64, 130) / 8
    w3 = r(64, 64) / 8
    y = torch.full((300, 64), 7.0, device=device)
    lib.mixed(a2, b2, x2, w2, w3, y)
    rs = torch.rsqrt((x2.float() ** 2).sum(1, keepdim=True) + 1.0)
    h = ((a2.float() @ b2.float()) * (x2.float() @ w2.float().t()) * rs).bfloat16().float()
    torch.testing.assert_close(y, h @ w3.float(), rtol=2e-2, atol=2e-2)
    # mma_before: X0 [300, 40] (K0 below the tile) W0 [40, 64], then X W.
    x0, w0 = r(300, 40), r(40, 64)
    y2 = torch.full((300, 64), 7.0, device=device)
    lib.mma_before(x2, w2.t().contiguous(), x0, w0, y2)
    want_y2 = x0.float() @ w0.float() + x2.float() @ w2.float().t()
    torch.testing.assert_close(y2, want_y2, rtol=1e-3, atol=5e-2)


def block_sparse_check(torch, arch=None, device="cpu"):
    """Runs python/tests/block_sparse.tile's kernels (mmas in an 'if',
    skipped where a block's flag is 0) against torch, at shapes that are not
    multiples of the tiles, with a random mask, an all-zero one (C is the
    accumulator's start) and an all-one one (the dense product)."""
    lib = _test_tile("block_sparse.tile", arch)
    g = torch.Generator().manual_seed(41)
    r = lambda *shape: torch.randn(*shape, generator=g).bfloat16().to(device)  # noqa: E731
    M, K, N = 300, 450, 200  # 3 row blocks, 8 k blocks (the last partial)
    a, b = r(M, K), r(K, N)

    def masked(a, mask, bm=128, bk=64):
        # A with the blocks whose flag is 0 zeroed (the padding rows too).
        keep = mask.cpu().bool().repeat_interleave(bm, 0).repeat_interleave(bk, 1)
        return a.float().cpu() * keep[:a.shape[0], :a.shape[1]]

    rows, kblocks = (M + 127) // 128, (K + 63) // 64
    masks = [torch.randint(0, 2, (rows, kblocks), generator=g, dtype=torch.int32),
             torch.zeros(rows, kblocks, dtype=torch.int32),
             torch.ones(rows, kblocks, dtype=torch.int32)]
    for mask in masks:
        md = mask.to(device)
        want = (masked(a, mask) @ b.float().cpu()).to(device)
        c = torch.full((M, N), 7.0, device=device)
        lib.block_sparse(a, b, md, c)
        torch.testing.assert_close(c, want, rtol=1e-3, atol=1e-2)
        c = torch.full((M, N), 7.0, device=device)
        lib.block_sparse_persistent(a, b, md, c)
        torch.testing.assert_close(c, want, rtol=1e-3, atol=1e-2)
        res = torch.randn(M, N, generator=g).to(device)
        c = torch.full((M, N), 7.0, device=device)
        lib.residual(a, b, md, res, c)
        torch.testing.assert_close(c, want + res, rtol=1e-3, atol=1e-2)
        w = r(K, 64)
        b64 = b[:, :64].contiguous()
        c = torch.full((M, 64), 7.0, device=device)
        lib.dense_and_sparse(a, b64, w, md, c)
        want_ds = (a.float().cpu() @ b64.float().cpu() + 2.0 * masked(a, mask) @ w.float().cpu())
        torch.testing.assert_close(c, want_ds.to(device), rtol=1e-3, atol=2e-2)
        even = mask.clone()
        even[:, 1::2] = 0
        c = torch.full((M, N), 7.0, device=device)
        lib.nested(a, b, md, c)
        torch.testing.assert_close(c, (masked(a, even) @ b.float().cpu()).to(device),
                                   rtol=1e-3, atol=1e-2)
        a16, bt16 = a.half(), b.t().contiguous().half()
        c = torch.full((M, N), 7.0, device=device)
        lib.sparse_nt(a16, bt16, md, c)
        want16 = masked(a16, mask) @ bt16.float().cpu().t()
        torch.testing.assert_close(c, want16.to(device), rtol=1e-3, atol=1e-2)

    # Block-sparse attention: query blocks of 128, key blocks of 64; the
    # reference masks the skipped blocks' scores (and keys past Sk), and a
    # row with no key left gives zeros.
    sq, sk, d, scale = 300, 450, 64, 0.125
    q, k, v = r(sq, d), r(sk, d), r(sk, d)
    qb, kb = (sq + 127) // 128, (sk + 63) // 64
    for mask in [torch.randint(0, 2, (qb, kb), generator=g, dtype=torch.int32),
                 torch.zeros(qb, kb, dtype=torch.int32), torch.ones(qb, kb, dtype=torch.int32)]:
        keep = mask.bool().repeat_interleave(128, 0).repeat_interleave(64, 1)[:sq, :sk]
        s = (q.float().cpu() @ k.float().cpu().t()) * scale
        s = s.masked_fill(~keep, float("-inf"))
        p = torch.softmax(s, dim=1).nan_to_num(0.0)
        want = p @ v.float().cpu()
        o = torch.full((sq, d), 7.0, device=device).bfloat16()
        lib.block_sparse_attention(q, k, v, mask.to(device), o, scale)
        torch.testing.assert_close(o.float().cpu(), want, rtol=2e-2, atol=2e-2)

    # flagged_mean: flags 0, 1, 2; the mean over the blocks flagged 2 of
    # A's block times B's (first 64 columns).
    flags = torch.randint(0, 3, (rows, kblocks), generator=g, dtype=torch.int32)
    b64 = b[:, :64].float().cpu()
    want = torch.zeros(M, 64)
    for i in range(rows):
        rs = slice(128 * i, min(M, 128 * i + 128))
        picked = [kk for kk in range(kblocks) if flags[i, kk] == 2]
        for kk in picked:
            ks = slice(64 * kk, min(K, 64 * kk + 64))
            want[rs] += a[rs, ks].float().cpu() @ b64[ks]
        want[rs] /= max(len(picked), 1)
    y = torch.full((M, 64), 7.0, device=device)
    lib.flagged_mean(a, b[:, :64].contiguous(), flags.to(device), y)
    torch.testing.assert_close(y.cpu(), want, rtol=1e-3, atol=1e-2)


def accumulator_argmax_check(torch, arch=None, device="cpu"):
    """Runs python/tests/accumulator_argmax.tile's kernels (argmax and argmin
    over an mma accumulator's columns, per column tile) against torch at a
    ragged shape: each picked column lies in its tile, its reference value
    is the tile's best up to the f32 sums' rounding, and the best value
    matches."""
    lib = _test_tile("accumulator_argmax.tile", arch)
    g = torch.Generator().manual_seed(31)
    M, K, N = 200, 130, 300
    x = torch.randn(M, K, generator=g).bfloat16()
    w = torch.randn(K, N, generator=g).bfloat16()
    ref = x.double() @ w.double()

    def check_picks(picks, scores, bn, better):
        for t in range(-(-N // bn)):
            lo, hi = bn * t, min(N, bn * t + bn)
            col = picks[:, t].long()
            assert ((col >= lo) & (col < hi)).all(), (t, col.min(), col.max())
            best = better(scores[:, lo:hi])
            picked = scores.gather(1, col[:, None])[:, 0]
            assert ((best - picked).abs() <= 1e-4 * best.abs().clamp(min=1)).all(), t

    tiles = -(-N // 128)
    v = torch.full((tiles, M), 7.0, device=device)
    i = torch.full((M, tiles), -1, dtype=torch.int32, device=device)
    lib.lm_head_argmax(x.to(device), w.to(device), v, i)
    check_picks(i.cpu(), ref, 128, lambda s: s.max(dim=1).values)
    want = torch.stack([ref[:, 128 * t:128 * t + 128].max(dim=1).values for t in range(tiles)])
    torch.testing.assert_close(v.cpu().double(), want, rtol=1e-4, atol=1e-3)
    w2 = (w.double() ** 2).sum(0, keepdim=True)
    i = torch.full((M, -(-N // 64)), -1, dtype=torch.int32, device=device)
    lib.nearest(x.to(device), w.to(device), w2.float().to(device), i)
    check_picks(i.cpu(), w2 - 2 * ref, 64, lambda s: s.min(dim=1).values)


CHECKS = {"chained": chained_check, "single_mma": single_mma_check, "loop_stores": loop_store_check,
          "sequences": sequence_check,
          "shared_operands": shared_operand_check, "transposed_stores": transposed_store_check,
          "column_slices": column_slice_check, "computed_operands": computed_operand_check,
          "block_sparse": block_sparse_check, "accumulator_argmax": accumulator_argmax_check}
