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


def varlen_attention_reference(q, k, v, cu_q, cu_k, hq, hk, d, scale, causal):
    """Attention over packed variable-length sequences in float64 (numpy):
    q [total_q, hq * d], k and v [total_k, hk * d], cu_q / cu_k the B + 1
    offsets; causal aligned to the bottom-right corner. Returns O
    [total_q, hq * d] and the log-sum-exp [hq, total_q]; a row that sees
    no key gets zeros and -inf."""
    import numpy as np
    q, k, v = (np.asarray(t, dtype=np.float64) for t in (q, k, v))
    out = np.zeros((q.shape[0], hq * d))
    lse = np.full((hq, q.shape[0]), -np.inf)
    for b in range(len(cu_q) - 1):
        qa, qb, ka, kb = int(cu_q[b]), int(cu_q[b + 1]), int(cu_k[b]), int(cu_k[b + 1])
        sq, sk = qb - qa, kb - ka
        if sq == 0 or sk == 0:
            continue
        for h in range(hq):
            g = h // (hq // hk)
            s = q[qa:qb, h * d:(h + 1) * d] @ k[ka:kb, g * d:(g + 1) * d].T * scale
            if causal:
                s = np.where(np.arange(sk)[None, :] <= np.arange(sq)[:, None] + sk - sq, s, -np.inf)
            seen = np.isfinite(s).any(axis=1)
            mx = np.where(seen, s.max(axis=1), 0.0)
            p = np.exp(s - mx[:, None])
            l = p.sum(axis=1)
            o = p @ v[ka:kb, g * d:(g + 1) * d] / np.where(seen, l, 1.0)[:, None]
            out[qa:qb, h * d:(h + 1) * d] = np.where(seen[:, None], o, 0.0)
            lse[h, qa:qb] = np.where(seen, mx + np.log(np.where(seen, l, 1.0)), -np.inf)
    return out, lse
