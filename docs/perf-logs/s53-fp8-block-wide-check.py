import sys, torch
sys.path.insert(0, "/work/main/python")
import tilec
lib = tilec.load("/work/main/docs/perf-logs/s53-fp8-block-wide.tile")
g = torch.Generator().manual_seed(3)
for (m, n, k) in [(130, 300, 260), (64, 256, 128), (200, 520, 384)]:
    a = torch.randn(m, k, generator=g).to(torch.bfloat16)
    b = torch.randn(n, k, generator=g).to(torch.bfloat16)
    kb, nb = (k + 127) // 128, (n + 127) // 128
    sa = torch.rand(m, kb, generator=g) + 0.5
    sb = torch.rand(nb, kb, generator=g) + 0.5
    c = torch.zeros(m, n, dtype=torch.bfloat16)
    lib.fp8_block_wide.with_defines(T="bf16", U="bf16")(a, b, c, sa, sb)
    af = a.float() * sa.repeat_interleave(128, 1)[:, :k]
    bf = b.float() * sb.repeat_interleave(128, 0)[:n].repeat_interleave(128, 1)[:, :k]
    ref = af @ bf.t()
    err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
    print(m, n, k, "max rel error", err)
    assert err < 1e-2
