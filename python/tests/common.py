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
