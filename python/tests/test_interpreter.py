"""tilec from Python on the CPU reference interpreter (numpy arrays)."""
import os

import numpy as np
import pytest

from common import CHECKS, attention_reference, example, tilec, varlen_attention_reference  # noqa: E402,F401


def test_saxpy_runs_on_numpy_arrays():
    lib = tilec.load(example("saxpy.tile"))
    x = np.arange(3000, dtype=np.float32)
    y = np.ones(3000, dtype=np.float32)
    lib.saxpy(2.0, x, y)
    np.testing.assert_array_equal(y, 2 * np.arange(3000, dtype=np.float32) + 1)


def test_compile_time_parameters_as_keywords_and_strided_arrays():
    lib = tilec.load(example("saxpy.tile"))
    base = np.arange(2000, dtype=np.float32)
    x = base[::2]  # a strided view: every other element
    y = np.zeros(1000, dtype=np.float32)
    lib.saxpy(3.0, x, y, BLOCK=256)
    np.testing.assert_array_equal(y, 3 * base[::2])
    assert lib.with_defines(BLOCK=256) is lib.with_defines(BLOCK=256)  # compiled once


def test_f16_and_type_parameters():
    lib = tilec.load(example("saxpy.tile"), T="f16")
    x = np.linspace(-1, 1, 500).astype(np.float16)
    y = np.ones(500, dtype=np.float16)
    lib.saxpy(0.5, x, y)
    want = (0.5 * x.astype(np.float32) + 1).astype(np.float16)
    np.testing.assert_array_equal(y, want)


def test_two_dimensional_kernel():
    lib = tilec.load(example("transpose.tile"))
    sig = lib.transpose.signature
    assert [p["rank"] for p in sig["params"] if p["tensor"]] == [2, 2]
    x = np.random.default_rng(0).standard_normal((70, 130)).astype(np.float32)
    y = np.zeros((130, 70), dtype=np.float32)
    lib.transpose(x, y)
    np.testing.assert_array_equal(y, x.T)


def test_mismatches_are_errors_before_anything_runs():
    lib = tilec.load(example("saxpy.tile"))
    x = np.zeros(10, dtype=np.float32)
    with pytest.raises(tilec.ArgumentError, match=r"takes 3 arguments \(a, x, y\), got 2"):
        lib.saxpy(1.0, x)
    with pytest.raises(tilec.ArgumentError,
                       match=r"type parameter T is f64 from argument 2 \('x'\) but f32 from "
                             r"argument 3 \('y'\)"):
        lib.saxpy(1.0, np.zeros(10), x)
    fixed = tilec.load(example("saxpy.tile"), T="f32")  # T given: nothing to infer
    with pytest.raises(tilec.ArgumentError,
                       match=r"argument 2 \('x'\) must be a tensor<f32, 1>, got an array of f64"):
        fixed.saxpy(1.0, np.zeros(10), x)
    with pytest.raises(tilec.ArgumentError, match=r"got an array of rank 2"):
        lib.saxpy(1.0, np.zeros((2, 5), dtype=np.float32), x)
    with pytest.raises(tilec.ArgumentError, match=r"argument 1 \('a'\) must be a scalar f32, got str"):
        lib.saxpy("2", x, x)
    with pytest.raises(AttributeError, match="no kernel named 'saxpi'"):
        lib.saxpi


def test_compile_error_has_the_located_diagnostic():
    with pytest.raises(tilec.CompileError) as e:
        tilec.compile("kernel k(x: tensor<f32, 1>) grid(1) {\n    store(x, [0], y);\n}\n",
                      file_name="bad.tile")
    text = str(e.value)
    assert "bad.tile:2:19: error: unknown name 'y'" in text
    assert "^" in text


def test_runtime_failures_raise():
    src = """kernel k(x: tensor<f32, 1>) grid(1) {
    assert(load(x, [0], [16]) > 0.0, "x must be positive");
}
"""
    lib = tilec.compile(src, file_name="a.tile")
    lib.k(np.ones(16, dtype=np.float32))
    with pytest.raises(RuntimeError, match="x must be positive"):
        lib.k(np.zeros(16, dtype=np.float32))


def test_type_parameters_are_inferred_from_the_arrays():
    lib = tilec.load(example("saxpy.tile"))
    x = np.linspace(-1, 1, 300).astype(np.float16)
    y = np.ones(300, dtype=np.float16)
    lib.saxpy(2.0, x, y)  # T = f16, compiled once for it
    np.testing.assert_allclose(y.astype(np.float32), 2 * x.astype(np.float32) + 1, atol=2e-3)
    assert lib.with_defines(T="f16").saxpy.params[1]["dtype"] == "f16"
    sig = lib.saxpy.signature
    assert [(c["name"], c["kind"], c["default"]) for c in sig["compile_time"]] == [
        ("BLOCK", "int", "1024"), ("T", "type", "f32")]
    assert sig["params"][1]["declared"] == "tensor<T, 1>"
    assert sig["grid_as_written"] == ["cdiv(x.shape[0], BLOCK)"]
    assert sig["grid"] == ["cdiv(x.shape[0], 1024)"]


def test_signature_of_defaults_that_are_expressions():
    lib = tilec.load(example("attention.tile"))
    bn = [c for c in lib.attention.signature["compile_time"] if c["name"] == "BN"][0]
    assert bn["default"] == "where(arch() < 90 && D > 128, where(D == 256 && CAUSAL == 0, 64, 32), where(arch() < 90 && D == 128 && CAUSAL == 0, 64, 256 / ((D + 63) / 64) / 16 * 16))"
    tuned = tilec.load(example("matmul.tile")).matmul.signature["tune"]
    assert tuned[1] == {"name": "BN", "values": ["128", "192", "256"]}


def test_cache_info_and_clear():
    src = "kernel c(x: tensor<f32, 1>) grid(1) {\n    store(x, [0], load(x, [0], [16]) + 1.0);\n}\n"
    tilec.compile(src, file_name="c.tile")
    info = tilec.cache.info()
    assert info["directory"] == os.environ["TILEC_CACHE_DIR"]
    assert info["entries"] >= 1 and info["bytes"] > 0
    tilec.compile(src, file_name="c.tile")  # the same source again: a hit
    assert tilec.cache.info()["memory_hits"] >= 1
    tilec.cache.clear()
    assert tilec.cache.info()["entries"] == 0


def test_a_second_process_hits_the_disk_cache():
    # The compile cache is on disk (TILEC_CACHE_DIR, set by conftest): a new
    # process compiling the same source finds it there.
    import subprocess
    import sys
    src = "kernel d(x: tensor<f32, 1>) grid(1) {\n    store(x, [0], load(x, [0], [32]) * 3.0);\n}\n"
    code = ("import sys, tilec; tilec.compile(sys.argv[1], file_name='d.tile'); "
            "print(tilec.cache.info()['disk_hits'], tilec.cache.info()['misses'])")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(tilec.__file__))] + sys.path))
    runs = [subprocess.run([sys.executable, "-c", code, src], capture_output=True, text=True,
                           env=env, check=True).stdout.split() for _ in range(2)]
    assert runs[0] == ["0", "1"], runs  # the first process compiles it
    assert runs[1] == ["1", "0"], runs  # the second reads it from disk


def test_numpy_scalars_are_scalars():
    lib = tilec.load(example("saxpy.tile"))
    x = np.arange(8, dtype=np.float32)
    y = np.ones(8, dtype=np.float32)
    lib.saxpy(np.float32(2.0), x, y)
    np.testing.assert_array_equal(y, 2 * x + 1)
    with pytest.raises(tilec.ArgumentError, match=r"argument 1 \('a'\) must be a scalar f32, got bool_"):
        lib.saxpy(np.bool_(True), x, y)


def test_writes_and_the_interpreter_check():
    lib = tilec.load(example("attention.tile"))
    assert lib.attention.signature["writes"] == ["O", "L"]
    lib = tilec.load(example("saxpy.tile"))
    x = np.arange(100, dtype=np.float32)
    y = np.ones(100, dtype=np.float32)
    tilec.testing.assert_close_to_interpreter(lib.saxpy, 2.0, x, y)
    np.testing.assert_array_equal(y, 2 * x + 1)


def test_the_interpreter_check_reports_a_difference():
    lib = tilec.load(example("saxpy.tile"))

    class Drifting:  # a "GPU" run that is off by one, then the real kernel
        def __init__(self, k):
            self.k, self.calls = k, 0
            self.name, self.params, self.writes = k.name, k.params, k.writes

        def __call__(self, *args):
            self.k(*args)
            self.calls += 1
            if self.calls == 1:
                args[2][7] += 1.0

    x = np.arange(10, dtype=np.float32)
    y = np.zeros(10, dtype=np.float32)
    with pytest.raises(AssertionError, match=r"parameter 'y' differs from the interpreter: at "
                                             r"\(7,\) GPU 15.0 vs interpreter 14.0"):
        tilec.testing.assert_close_to_interpreter(Drifting(lib.saxpy), 2.0, x, y)


def test_prelude_functions():
    src = """kernel act(x: tensor<f32, 1>, g: tensor<f32, 1>, t: tensor<f32, 1>, s: tensor<f32, 1>,
            p: tensor<f32, 1>, l: tensor<f32, 1>, r: tensor<f32, 1>) grid(1) {
    let v = load(x, [0], [256]);
    store(g, [0], gelu(v));
    store(t, [0], gelu_tanh(v));
    store(s, [0], silu(v));
    store(p, [0], softplus(v));
    store(l, [0], logsumexp(v) + zeros<f32>([1]));
    store(r, [0], logsumexp_rows(reshape(v, [4, 64])));
}
"""
    k = tilec.compile(src, file_name="prelude.tile").act
    x = np.linspace(-30, 30, 256).astype(np.float32)
    outs = [np.zeros(256, np.float32) for _ in range(4)] + [np.zeros(1, np.float32),
                                                            np.zeros(4, np.float32)]
    k(x, *outs)
    xd = x.astype(np.float64)
    from math import erf
    want_gelu = 0.5 * xd * (1 + np.array([erf(v / np.sqrt(2)) for v in xd]))
    want_tanh = 0.5 * xd * (1 + np.tanh(np.sqrt(2 / np.pi) * (xd + 0.044715 * xd ** 3)))
    np.testing.assert_allclose(outs[0], want_gelu, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[1], want_tanh, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[2], xd / (1 + np.exp(-xd)), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[3], np.logaddexp(0, xd), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[4], [np.logaddexp.reduce(xd)], rtol=1e-6)
    np.testing.assert_allclose(outs[5], np.logaddexp.reduce(xd.reshape(4, 64), axis=1), rtol=1e-6)


def test_a_programs_own_helper_replaces_the_prelude():
    src = """fn gelu(x) { return x * 2.0; }
kernel k(x: tensor<f32, 1>) grid(1) {
    store(x, [0], gelu(load(x, [0], [16])));
}
"""
    x = np.arange(16, dtype=np.float32)
    tilec.compile(src).k(x)
    np.testing.assert_array_equal(x, 2 * np.arange(16, dtype=np.float32))


def test_sin_and_cos():
    src = """kernel k(x: tensor<f32, 1>, s: tensor<f32, 1>, c: tensor<f32, 1>) grid(1) {
    let v = load(x, [0], [64]);
    store(s, [0], sin(v));
    store(c, [0], cos(v));
}
"""
    x = np.linspace(-3.14, 3.14, 64).astype(np.float32)
    s, c = np.zeros(64, np.float32), np.zeros(64, np.float32)
    tilec.compile(src).k(x, s, c)
    np.testing.assert_allclose(s, np.sin(x.astype(np.float64)), atol=1e-6)
    np.testing.assert_allclose(c, np.cos(x.astype(np.float64)), atol=1e-6)


def test_requirements_in_the_signature_and_at_the_launch():
    lib = tilec.load(example("softmax.tile"))
    assert lib.softmax.signature["requires"] == [
        {"condition": "x.shape[1] <= BN",
         "message": "softmax: the rows are wider than BN; compile with a larger -D BN"}]
    x = np.zeros((4, 2000), np.float32)
    with pytest.raises(tilec.ArgumentError, match=r"@require\(x.shape\[1\] <= 1024\) does not hold: "
                                           r"x.shape\[1\] = 2000"):
        lib.softmax(x, np.zeros_like(x))


def test_errors_have_a_kind():
    src = """kernel k(x: tensor<f32, 1>) grid(1) {
    assert(load(x, [0], [16]) > 0.0, "x must be positive");
}
"""
    lib = tilec.compile(src)
    with pytest.raises(tilec.ArgumentError):          # the argument list
        lib.k(np.ones(16, np.float32), 1)
    with pytest.raises(RuntimeError) as e:            # while running
        lib.k(np.zeros(16, np.float32))
    assert not isinstance(e.value, tilec.ArgumentError)
    with pytest.raises(tilec.CompileError):           # the source
        tilec.compile("kernel k() grid(1) { let a = ; }")


def test_print_reaches_sys_stdout(capsys):
    src = """kernel k(x: tensor<f32, 1>) grid(2) {
    print("block", block_id(0));
}
"""
    tilec.compile(src).k(np.arange(4, dtype=np.float32))
    out = capsys.readouterr().out
    assert out.splitlines() == ["pid (0, 0, 0): block 0", "pid (1, 0, 0): block 1"], out


def test_bf16_cpu_tensors_run_on_the_interpreter():
    torch = pytest.importorskip("torch")
    lib = tilec.load(example("saxpy.tile"))
    x = torch.linspace(-4, 4, 1000).to(torch.bfloat16)
    y = torch.linspace(1, 2, 1000).to(torch.bfloat16)
    want = (2.0 * x.float() + y.float()).to(torch.bfloat16)
    lib.saxpy(2.0, x, y)           # T inferred as bf16 from the tensors
    assert y.dtype == torch.bfloat16
    torch.testing.assert_close(y, want, rtol=0, atol=0)
    with pytest.raises(tilec.ArgumentError, match=r"must be a tensor<bf16, 1>, got a tensor of f32"):
        lib.saxpy(2.0, x, torch.zeros(1000), T="bf16")


def test_ptx_cubin_and_header_from_python():
    lib = tilec.load(example("saxpy.tile"))
    assert ".entry saxpy" in lib.ptx
    header = lib.header()
    assert "namespace saxpy_kernels {" in header and "saxpy.tile" in header
    assert "namespace mine {" in lib.header(namespace="mine")
    # A @heuristic's values each get a variant that the header's launcher
    # picks (as tilec -emit=header does); fixed with a define, none.
    src = """
@heuristic(BLOCK = where(x.shape[0] <= 1000, 256, 1024))
kernel scale<BLOCK: int = 512>(a: f32, x: tensor<f32, 1>) grid(cdiv(x.shape[0], BLOCK)) {
    store(x, [block_id(0)], a * load(x, [block_id(0)], [BLOCK]));
}
"""
    header = tilec.compile(src, file_name="h.tile").header()
    assert "namespace scale_variants {" in header and "/// BLOCK = 1024" in header
    assert "scale_choice(float a, const tilec::TensorArg &x)" in header
    assert "scale_variants" not in tilec.compile(src, BLOCK=128).header()
    with pytest.raises(tilec.ArgumentError, match="not a C\\+\\+ name"):
        lib.header(namespace="1bad")
    with pytest.raises(tilec.ArgumentError, match="reserved C\\+\\+ name 'class'"):
        lib.header(namespace="a::class")
    import shutil
    if shutil.which("ptxas") or os.path.exists("/usr/local/cuda/bin/ptxas"):
        cubin = lib.cubin()
        assert cubin[:4] == b"\x7fELF"
    else:
        with pytest.raises(tilec.ToolError, match="ptxas"):
            lib.cubin()


def test_tune_needs_cuda_tensors():
    lib = tilec.load(example("vadd.tile"))
    x = np.zeros(16, np.float32)
    with pytest.raises(tilec.ArgumentError, match="tune needs CUDA tensors"):
        lib.vadd.tune(x, x, x)


def _random_qkv(torch, seed, q_shape, kv_shape):
    """Random bf16 Q of q_shape and K, V of kv_shape (torch, seeded)."""
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g).bfloat16() for shape in (q_shape, kv_shape, kv_shape))


def test_decode_with_gqa_and_splits_on_the_interpreter():
    torch = pytest.importorskip("torch")
    B, Hq, Hkv, Sq, Sk, D = 2, 8, 2, 1, 300, 64
    G = Hq // Hkv
    for splits in (1, 3, 8):  # 8 splits of 2 key blocks: some get none
        lib = tilec.load(example("attention.tile"), D=D, BN=64, SPLITS=splits)
        q, k, v = _random_qkv(torch, splits, (B, Hq, Sq, D), (B, Hkv, Sk, D))
        R = G * Sq
        op = torch.zeros(B * Hkv * splits, R, D)
        lp = torch.zeros(B * Hkv * splits, R)
        scale = D ** -0.5
        lib.attention_decode(q.view(B * Hkv, R, D), k.view(B * Hkv, Sk, D),
                             v.view(B * Hkv, Sk, D), op, lp, scale)
        comb = lib.with_defines(R=R).attention_combine
        o = torch.zeros(B * Hkv, R, D).bfloat16()
        lse = torch.zeros(B * Hkv, R)
        comb(op.view(B * Hkv, splits, R, D), lp.view(B * Hkv, splits, R), o, lse)
        want, want_lse = attention_reference(q.float().numpy(), k.float().numpy(),
                                              v.float().numpy(), scale)
        got = o.float().numpy().reshape(B, Hq, Sq, D)
        np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2)
        np.testing.assert_allclose(lse.numpy().reshape(B, Hq, Sq), want_lse, rtol=1e-3, atol=1e-3)


def test_shapes_that_do_not_fit_are_refused_before_running():
    # Before @require on the matmul and attention kernels, a mismatched K or
    # head dimension ran and gave a wrong result silently.
    torch = pytest.importorskip("torch")
    mm = tilec.load(example("matmul.tile"), T="f32", BM=64, BN=64, BK=32)
    a, c = np.zeros((8, 16), np.float32), np.zeros((8, 8), np.float32)
    with pytest.raises(tilec.ArgumentError, match=r"kernel 'matmul': matmul: A is M x K, so B "
                                                  r"must have K rows .*B.shape\[0\] = 20, "
                                                  r"A.shape\[1\] = 16"):
        mm.matmul(a, np.zeros((20, 8), np.float32), c)
    with pytest.raises(tilec.ArgumentError, match="C must be M x N"):
        mm.matmul(a, np.zeros((16, 8), np.float32), np.zeros((8, 9), np.float32))
    att = tilec.load(example("attention.tile"))
    q = torch.zeros(2, 10, 128).bfloat16()
    with pytest.raises(tilec.ArgumentError, match=r"head dimension of Q, K and V must be D.*"
                                                  r"Q.shape\[2\] = 128"):
        att.attention(q, q, q, torch.zeros_like(q), torch.zeros(2, 10), 0.1)
    mlp = tilec.load(example("mlp.tile"), DIN=64)
    x = torch.zeros(4, 100).bfloat16()
    with pytest.raises(tilec.ArgumentError, match="the input is wider than DIN"):
        mlp.mlp(x, torch.zeros(100, 64).bfloat16(), torch.zeros(64), torch.zeros(64, 32).bfloat16(),
                torch.zeros(4, 32).bfloat16())


def _attention_on_interpreter(lib, q, k, v, causal):
    """`lib.attention` on [B, H, S, D] tensors (viewed [B * H, S, D]; O
    starts as 7s) at scale D^-1/2, and attention_reference's answer: O and
    the log-sum-exp [B, Hq, Sq] of each (numpy)."""
    (B, Hq, Sq, D), Hkv, Sk = q.shape, k.shape[1], k.shape[2]
    o = q.new_full(q.shape, 7.0)
    lse = q.new_zeros(B * Hq, Sq, dtype=q.float().dtype)
    lib.attention(q.reshape(B * Hq, Sq, D), k.reshape(B * Hkv, Sk, D),
                  v.reshape(B * Hkv, Sk, D), o.view(B * Hq, Sq, D), lse, D ** -0.5)
    want, want_lse = attention_reference(q.float().numpy(), k.float().numpy(),
                                         v.float().numpy(), D ** -0.5, causal)
    return o.float().numpy(), lse.numpy().reshape(B, Hq, Sq), want, want_lse


def test_grouped_query_attention_on_the_interpreter():
    torch = pytest.importorskip("torch")
    B, Hq, Hkv, S, D = 1, 4, 2, 70, 64
    for causal in (0, 1):
        lib = tilec.load(example("attention.tile"), D=D, BN=64, CAUSAL=causal)
        q, k, v = _random_qkv(torch, causal, (B, Hq, S, D), (B, Hkv, S, D))
        o, _, want, _ = _attention_on_interpreter(lib, q, k, v, causal)
        np.testing.assert_allclose(o, want, rtol=2e-2, atol=2e-2)
    with pytest.raises(tilec.ArgumentError, match="key/value heads must divide the query heads"):
        lib.attention(torch.zeros(3, S, D).bfloat16(), torch.zeros(2, S, D).bfloat16(),
                      torch.zeros(2, S, D).bfloat16(), torch.zeros(3, S, D).bfloat16(),
                      torch.zeros(3, S), 0.1)



@pytest.mark.parametrize("sq,sk", [(130, 97), (100, 150), (64, 64)])
def test_attention_with_key_blocks_smaller_than_query_blocks_on_the_interpreter(sq, sk):
    # sm_80's tile above D = 128 (BM = 64, BN = 32): each query block meets
    # the diagonal in two key blocks, the mask of the second and of the
    # ragged last block, causal (bottom-right) and not. D = 32 keeps the
    # interpreter quick; the blocks' logic does not depend on D.
    torch = pytest.importorskip("torch")
    B, H, D = 1, 2, 32
    for causal in (0, 1):
        lib = tilec.load(example("attention.tile"), D=D, BM=64, BN=32, CAUSAL=causal)
        q, k, v = _random_qkv(torch, sq + sk + causal, (B, H, sq, D), (B, H, sk, D))
        o, got_lse, want, want_lse = _attention_on_interpreter(lib, q, k, v, causal)
        np.testing.assert_allclose(o, want, rtol=2e-2, atol=2e-2, err_msg=f"causal={causal}")
        seen = np.isfinite(want_lse)
        np.testing.assert_allclose(got_lse[seen], want_lse[seen], rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("sq,sk", [(150, 40), (300, 20), (70, 0)])
def test_causal_attention_with_more_queries_than_keys_on_the_interpreter(sq, sk):
    # Aligned to the bottom-right corner (FlashAttention-2): the first sq - sk
    # rows see no key and get zeros and a log-sum-exp of -inf; at (300, 20)
    # whole blocks of 128 rows run no iteration, at (150, 40) a block holds
    # rows with and without keys; (70, 0) has no keys at all.
    torch = pytest.importorskip("torch")
    B, H, D = 1, 2, 64
    lib = tilec.load(example("attention.tile"), D=D, BN=64, CAUSAL=1)
    q, k, v = _random_qkv(torch, sq + sk, (B, H, sq, D), (B, H, sk, D))
    o, got_lse, want, want_lse = _attention_on_interpreter(lib, q, k, v, True)
    np.testing.assert_allclose(o, want, rtol=2e-2, atol=2e-2)
    assert (got_lse[..., :sq - sk] == -np.inf).all()
    np.testing.assert_allclose(got_lse[..., sq - sk:], want_lse[..., sq - sk:], rtol=1e-3,
                               atol=1e-3)


def test_attention_on_bshd_tensors_on_the_interpreter():
    # torch's [B, S, H, D] layout (LAYOUT = 1: rows of H * D), GQA, causal.
    torch = pytest.importorskip("torch")
    B, Hq, Hkv, S, D = 2, 4, 2, 70, 64
    for causal in (0, 1):
        lib = tilec.load(example("attention.tile"), D=D, BN=64, CAUSAL=causal, LAYOUT=1)
        q, k, v = _random_qkv(torch, 10 + causal, (B, S, Hq, D), (B, S, Hkv, D))
        o = torch.zeros_like(q)
        lse = torch.zeros(B * Hq, S)
        scale = D ** -0.5
        lib.attention(q.view(B, S, Hq * D), k.view(B, S, Hkv * D), v.view(B, S, Hkv * D),
                      o.view(B, S, Hq * D), lse, scale)
        bhsd = [t.float().numpy().transpose(0, 2, 1, 3) for t in (q, k, v)]  # [B, H, S, D]
        want, want_lse = attention_reference(*bhsd, scale, causal)
        np.testing.assert_allclose(o.float().numpy().transpose(0, 2, 1, 3), want, rtol=2e-2,
                                   atol=2e-2)
        np.testing.assert_allclose(lse.numpy().reshape(B, Hq, S), want_lse, rtol=1e-3, atol=1e-3)
    with pytest.raises(tilec.ArgumentError, match="head dimension of Q, K and V must be D"):
        tilec.load(example("attention.tile"), D=D).attention(
            q.view(B, S, Hq * D), k.view(B, S, Hkv * D), v.view(B, S, Hkv * D),
            o.view(B, S, Hq * D), lse, 0.1)


def test_require_conditions_short_circuit():
    # `n == 0 || ...` holds for n = 0 without evaluating m % n.
    src = """@require(n == 0 || x.shape[0] % n == 0, "x must split into n parts")
kernel k(x: tensor<f32, 1>, n: i64) grid(1) { store(x, [0], load(x, [0], [4]) + 1.0); }
"""
    k = tilec.compile(src).k
    x = np.zeros(4, np.float32)
    k(x, 0)
    k(x, 2)
    assert (x == 2).all()
    with pytest.raises(tilec.ArgumentError, match=r"x must split into n parts .*n = 3"):
        k(x, 3)



def test_signature_text_of_conditions_with_greater_than():
    # The text of a condition is cut at '>' only inside compile-time
    # parameter lists (it was cut after x.shape[0]).
    src = """@require(x.shape[0] > 0 && x.shape[0] >= 2, "need two")
kernel k<B: int = 4>(x: tensor<f32, 1>) grid(cdiv(x.shape[0], B)) {
    store(x, [0], load(x, [0], [B]));
}
"""
    sig = tilec.compile(src).k.signature
    assert sig["requires"] == [{"condition": "x.shape[0] > 0 && x.shape[0] >= 2",
                                "message": "need two"}]
    assert sig["compile_time"][0]["default"] == "4"


@pytest.mark.parametrize("causal", [0, 1])
def test_varlen_attention_on_the_interpreter(causal):
    # Packed sequences of different lengths (one shorter than a tile, one
    # over it, an empty one, more queries than keys), grouped-query heads.
    lib = tilec.load(example("attention.tile"), D=64, CAUSAL=causal)
    rng = np.random.default_rng(causal)
    seq_q, seq_k = [5, 130, 0, 77], [300, 1, 10, 40]
    cu_q = np.concatenate([[0], np.cumsum(seq_q)]).astype(np.int32)
    cu_k = np.concatenate([[0], np.cumsum(seq_k)]).astype(np.int32)
    hq, hk, d = 4, 2, 64
    q = rng.standard_normal((cu_q[-1], hq * d)).astype(np.float16)
    k, v = (rng.standard_normal((cu_k[-1], hk * d)).astype(np.float16) for _ in range(2))
    o = np.full_like(q, 7)
    lse = np.zeros((hq, cu_q[-1]), np.float32)
    lib.attention_varlen(q, k, v, o, lse, cu_q, cu_k, max(seq_q), d ** -0.5)
    want, want_lse = varlen_attention_reference(q, k, v, cu_q, cu_k, hq, hk, d, d ** -0.5, causal)
    np.testing.assert_allclose(o.astype(np.float64), want, atol=2e-2, rtol=2e-2)
    seen = np.isfinite(want_lse)
    np.testing.assert_allclose(lse[seen], want_lse[seen], atol=1e-3, rtol=1e-3)
    assert np.all(lse[~seen] < -1e30)


def test_varlen_offsets_are_checked_on_the_interpreter():
    # examples/attention.tile's varlen_check: good offsets pass (also no
    # sequence at all, and more sequences than one program's BLOCK); each
    # rule's violation raises its message, in any program.
    lib = tilec.load(example("attention.tile"))

    def offsets(lengths):
        return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    lens_q = np.arange(600) % 7
    lens_k = np.arange(600) % 5 + 1
    cu_q, cu_k = offsets(lens_q), offsets(lens_k)
    rows_q, rows_k = int(cu_q[-1]), int(cu_k[-1])
    lib.varlen_check(cu_q, cu_k, rows_q, rows_k, 6, 5)
    lib.varlen_check(np.zeros(1, np.int32), np.zeros(1, np.int32), 0, 0, 0, 0)
    bad = cu_q.copy()
    bad[513] = bad[512] - 1  # sequence 512 of negative length
    with pytest.raises(RuntimeError, match="cu_q or cu_k decreases"):
        lib.varlen_check(bad, cu_k, rows_q, rows_k, 6, 5)
    with pytest.raises(RuntimeError, match="outside the packed rows"):
        lib.varlen_check(cu_q, cu_k, rows_q, rows_k - 1, 6, 5)
    with pytest.raises(RuntimeError, match="longer than max_sq or max_sk"):
        lib.varlen_check(cu_q, cu_k, rows_q, rows_k, 5, 5)


def test_grouped_mm_on_the_interpreter():
    # Row groups of different sizes (an empty one, one over a tile, one of
    # a single row), each with its own B[g]; rows outside every group are
    # left alone.
    # More than eight groups: the walk to a tile's group steps eight at a
    # time, then picks the group within the chunk of eight that holds it.
    # N = 300 gives two column tiles of 256: grouped_mm takes a group's tiles
    # column by column. Exactly 8, 9 and 16 groups put a tile at the end of
    # the walk's chunks of eight; all-empty groups leave every program past
    # the last tile.
    lib = tilec.load(example("matmul.tile"))
    rng = np.random.default_rng(1)
    for rows, n in (([5, 0, 130, 64, 1], 72), ([3, 0, 0, 7, 200, 1, 1, 1, 1, 1, 129, 0, 0, 5, 0, 0, 0, 0, 1, 17], 72),
                    ([0] * 17 + [300], 72), ([130, 0, 257, 1], 300), ([128] * 8, 72), ([128] * 9, 72),
                    ([1] * 16, 72), ([0, 0, 0], 72)):
        g, k = len(rows), 96
        offs = np.concatenate([[0], np.cumsum(rows)]).astype(np.int32)
        a = rng.standard_normal((offs[-1] + 3, k)).astype(np.float16)
        b = rng.standard_normal((g, k, n)).astype(np.float16)
        c = np.full((offs[-1] + 3, n), 7, np.float16)
        want = np.concatenate([a[offs[i]:offs[i + 1]].astype(np.float64) @ b[i].astype(np.float64)
                               for i in range(g)])
        for kernel in (lib.grouped_mm, lib.grouped_mm_persistent):
            c = np.full((offs[-1] + 3, n), 7, np.float16)
            kernel(a, b, c, offs)
            np.testing.assert_allclose(c[:offs[-1]].astype(np.float64), want, atol=0.05, rtol=1e-2)
            assert np.all(c[offs[-1]:] == 7)


def test_kernel_with_defines_compiles_it_alone():
    # BM = 16 (the skinny tile, multiplied as B^T A^T) suits matmul but not
    # matmul_tn or matmul_persistent, whose general pipeline needs 64-row
    # blocks: the whole file does not compile with it, the one kernel does.
    mm = tilec.load(example("matmul.tile"), T="f16")
    with pytest.raises(tilec.CompileError, match="kernel 'matmul_(tn|persistent)'"):
        mm.with_defines(BM=16, BN=64)
    k = mm.matmul.with_defines(BM=16, BN=64, CLUSTER=1)
    assert list(k.program.kernels) == ["matmul"]
    assert k is mm.matmul.with_defines(BM=16, BN=64, CLUSTER=1)  # compiled once
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 40)).astype(np.float16)
    b = rng.standard_normal((40, 70)).astype(np.float16)
    c = np.zeros((5, 70), np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3,
                               atol=1e-3)


def test_tf32_heuristic_chooses_the_tile_and_order():
    # examples/matmul.tile's matmul_tf32 on sm_90a: 256 rows of A per
    # program from 2048 x 2048 outputs (above 128 rows), grouped order above
    # 1024 rows with K > 2048; on sm_80 the 128 x 128 tile in launch order.
    def arrays(m, n, kk):
        return (np.zeros((m, kk), np.float32), np.zeros((kk, n), np.float32),
                np.zeros((m, n), np.float32))
    k = tilec.load(example("matmul.tile")).matmul_tf32
    assert k.heuristics == ["BM", "GROUP"]
    assert k.choose(*arrays(2048, 2048, 64)) == {"BM": 256, "GROUP": 0}
    assert k.choose(*arrays(2048, 2048, 4096)) == {"BM": 256, "GROUP": 8}
    assert k.choose(*arrays(1024, 1024, 4096)) == {"BM": 128, "GROUP": 0}
    assert k.choose(*arrays(1100, 1024, 4096)) == {"BM": 128, "GROUP": 8}
    assert k.choose(*arrays(128, 32768, 64)) == {"BM": 128, "GROUP": 0}
    k80 = tilec.load(example("matmul.tile"), arch="sm_80").matmul_tf32
    assert k80.choose(*arrays(2048, 2048, 4096)) == {"BM": 128, "GROUP": 0}
    a = np.random.default_rng(0).standard_normal((40, 24)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((24, 36)).astype(np.float32)
    c = np.zeros((40, 36), np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=2e-2, atol=2e-2)


def test_heuristic_reads_the_element_type_through_bits():
    # examples/matmul.tile's @heuristic takes bits<T>(): f32 operands (the
    # SGEMM on the CUDA cores) get 128 x 128 tiles in the launch order, the
    # tile of its measured figures, where f16 above 128 rows gets 128 x 256
    # in grouped order; T is inferred from the arrays at the call.
    k = tilec.load(example("matmul.tile")).matmul

    def arrays(m, n, kk, dtype):
        rng = np.random.default_rng(m)
        return (rng.standard_normal((m, kk)).astype(dtype),
                rng.standard_normal((kk, n)).astype(dtype), np.zeros((m, n), np.float32))
    assert k.with_defines(T="f32").choose(*arrays(1000, 320, 2112, np.float32)) == {
        "BM": 128, "BN": 128, "CLUSTER": 1, "GROUP": 0, "PERSISTENT": 0}
    assert k.with_defines(T="f32").choose(*arrays(100, 64, 64, np.float32)) == {
        "BM": 64, "BN": 128, "CLUSTER": 1, "GROUP": 0, "PERSISTENT": 0}
    assert k.with_defines(T="f16").choose(*arrays(1000, 320, 2112, np.float16)) == {
        "BM": 128, "BN": 256, "CLUSTER": 1, "GROUP": 8, "PERSISTENT": 0}
    a, b, c = arrays(200, 72, 40, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    # Nothing fixed (the file's T is bf16): the heuristic reads the T that
    # the call infers from the arrays, and the call compiles that T with
    # those values (before, it chose bf16's 128 x 256 persistent tile for
    # f32 arrays, which spills).
    plain = tilec.load(example("matmul.tile")).matmul
    assert plain.choose(*arrays(1000, 320, 2112, np.float32)) == {
        "BM": 128, "BN": 128, "CLUSTER": 1, "GROUP": 0, "PERSISTENT": 0}
    a, b, c = arrays(200, 72, 40, np.float32)
    plain(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    (chosen,) = plain._chosen.values()
    assert {n: chosen.program.defines[n] for n in ("T", "BN", "PERSISTENT")} == {
        "T": "f32", "BN": "128", "PERSISTENT": "0"}


def test_heuristic_chooses_the_tile_from_the_shapes():
    # examples/matmul.tile's @heuristic: BM 16 up to 16 rows, 64 up to 128,
    # BN 64 up to 64 rows; rows not on 128-byte boundaries (a pitch of 32
    # f16) take BN = 192 above 128 rows and CLUSTER = 2 above 64; a call
    # runs the variant it names (here on the interpreter), remembered per
    # shapes and strides.
    mm = tilec.load(example("matmul.tile"), T="f16")
    k = mm.matmul
    assert k.heuristics == ["BM", "BN", "CLUSTER", "GROUP", "PERSISTENT"]
    assert k.signature["heuristics"] == ["BM", "BN", "CLUSTER", "GROUP", "PERSISTENT"]

    def arrays(m, n, kk):
        rng = np.random.default_rng(m)
        return (rng.standard_normal((m, kk)).astype(np.float16),
                rng.standard_normal((kk, n)).astype(np.float16),
                np.zeros((m, n), np.float32))
    assert k.choose(*arrays(16, 64, 64)) == {"BM": 16, "BN": 64, "CLUSTER": 1, "GROUP": 0, "PERSISTENT": 0}
    assert k.choose(*arrays(17, 64, 64)) == {"BM": 64, "BN": 64, "CLUSTER": 1, "GROUP": 0, "PERSISTENT": 0}
    assert k.choose(*arrays(100, 64, 64)) == {"BM": 64, "BN": 256, "CLUSTER": 1, "GROUP": 0, "PERSISTENT": 0}
    assert k.choose(*arrays(200, 64, 64)) == {"BM": 128, "BN": 256, "CLUSTER": 1, "GROUP": 8, "PERSISTENT": 1}
    assert k.choose(*arrays(200, 64, 32)) == {"BM": 128, "BN": 192, "CLUSTER": 2, "GROUP": 0, "PERSISTENT": 0}
    assert k.choose(*arrays(100, 64, 32)) == {"BM": 64, "BN": 256, "CLUSTER": 2, "GROUP": 0, "PERSISTENT": 0}
    assert k.choose(*arrays(16, 64, 32)) == {"BM": 16, "BN": 64, "CLUSTER": 1, "GROUP": 0, "PERSISTENT": 0}
    a, b, c = arrays(16, 40, 24)
    k(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3,
                               atol=1e-3)
    # The variant is remembered for these shapes; other shapes choose again.
    assert len(k._chosen) == 1
    a2, b2, c2 = arrays(70, 40, 24)
    k(a2, b2, c2)
    k(a, b, c)
    assert len(k._chosen) == 2
    np.testing.assert_allclose(c2, a2.astype(np.float32) @ b2.astype(np.float32), rtol=1e-3,
                               atol=1e-3)
    # A value the program fixes is not chosen; neither is one given per call.
    assert mm.with_defines(BN=64).matmul.choose(*arrays(100, 64, 32)) == {
        "BM": 64, "CLUSTER": 2, "GROUP": 0, "PERSISTENT": 0}
    assert mm.with_defines(BM=64, BN=64, CLUSTER=1, GROUP=0, PERSISTENT=0).matmul.heuristics == []
    # Above 128 rows the tiles go in grouped order for K > 2048, and with
    # K <= 512 the compiler also makes the kernel persistent (a loop over
    # the tiles in each program): every tile once, on the interpreter too.
    assert k.choose(*arrays(1000, 320, 2112)) == {"BM": 128, "BN": 256, "CLUSTER": 1,
                                                  "GROUP": 8, "PERSISTENT": 0}
    assert k.choose(*arrays(1000, 320, 1088))["GROUP"] == 0
    for m, n, kk in ((200, 64, 64), (300, 1000, 64), (1000, 320, 2112)):
        a3, b3, c3 = arrays(m, n, kk)
        c3[:] = 7.0
        k(a3, b3, c3)
        np.testing.assert_allclose(c3, a3.astype(np.float32) @ b3.astype(np.float32),
                                   rtol=1e-2, atol=1e-2)
    # The arguments are checked first.
    with pytest.raises(tilec.ArgumentError, match="takes 3 arguments"):
        k.choose(a, b)


def test_launch_persistent_and_grouped_cover_every_program_once(tmp_path):
    # @launch(persistent = 1) loops each program over the grid's programs;
    # @launch(group_rows = G) numbers them in grouped order. Either way each
    # (block_id(0), block_id(1)) of the original grid runs once, and
    # num_blocks reads the original grid (here 7 x 5 programs of 4 x 3).
    src = tmp_path / "order.tile"
    src.write_text("""
@launch(persistent = P, group_rows = G)
kernel mark<P: int = 0, G: int = 0>(out: tensor<i32, 2>)
    grid(cdiv(out.shape[0], 4), cdiv(out.shape[1], 3))
{
    let seen = load(out, [block_id(0), block_id(1)], [4, 3]);
    store(out, [block_id(0), block_id(1)],
          seen + 1000 * num_blocks(0) + 10 * num_blocks(1) + 1);
}
""")
    for p, g in ((0, 0), (0, 2), (0, 3), (1, 0), (1, 1), (1, 3), (1, 8)):
        out = np.zeros((26, 14), np.int32)
        tilec.load(str(src), P=p, G=g).mark(out)
        np.testing.assert_array_equal(out, np.full((26, 14), 7051, np.int32))


def colstats_reference(y, bm):
    """Per block of bm rows: the column sums and sums of squares of y (f32)."""
    import math
    blocks = math.ceil(y.shape[0] / bm)
    s = np.stack([y[i * bm:(i + 1) * bm].sum(0) for i in range(blocks)])
    q = np.stack([(y[i * bm:(i + 1) * bm] ** 2).sum(0) for i in range(blocks)])
    return s, q


def test_matmul_column_statistics_on_the_interpreter():
    # Reductions over an accumulator's rows (axis = 0): ragged M, N and K.
    lib = tilec.load(example("matmul_stats.tile"))
    rng = np.random.default_rng(3)
    m, k, n = 200, 96, 264
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    y = np.zeros((m, n), np.float16)
    s = np.zeros((2, n), np.float32)
    q = np.zeros((2, n), np.float32)
    lib.matmul_colstats(a, b, y, s, q, BN=128)
    prod = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(y.astype(np.float32), prod.astype(np.float16).astype(np.float32),
                               rtol=2e-3, atol=2e-2)
    ws, wq = colstats_reference(prod, 128)
    np.testing.assert_allclose(s, ws, rtol=1e-4, atol=1e-2)
    np.testing.assert_allclose(q, wq, rtol=1e-4, atol=1e-1)
    with pytest.raises(tilec.ArgumentError, match=r"S and Q hold one row per BM rows of Y"):
        lib.matmul_colstats(a, b, y, np.zeros((1, n), np.float32), q, BN=128)


def test_matmul_with_column_block_scales_on_the_interpreter():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("this torch has no float8 tensors (Debian 12's); the GPU machine's has")
    lib = tilec.load(example("matmul_stats.tile"))
    g = torch.Generator().manual_seed(5)
    a = torch.randn(150, 64, generator=g).to(torch.bfloat16)
    b = torch.randn(64, 136, generator=g).to(torch.bfloat16)
    b[:, 7] = 0  # a column of zeros: scale 1
    y = torch.zeros(150, 136, dtype=torch.float8_e4m3fn)
    sy = torch.zeros(2, 136)
    lib.matmul_quant_cols(a, b, y, sy, BM=128, BN=128)  # 136 columns: an edge tile
    acc = a.float() @ b.float()
    amax = torch.stack([acc[:128].abs().amax(0), acc[128:].abs().amax(0)])
    want_scale = torch.where(amax > 0, amax / 448.0, torch.ones_like(amax))
    torch.testing.assert_close(sy, want_scale, rtol=1e-5, atol=0)
    assert sy[0, 7] == 1.0 and sy[1, 7] == 1.0
    rows = torch.arange(150) // 128
    # e4m3 keeps 3 bits: dequantized, within half a unit (1/16) of the product.
    torch.testing.assert_close(y.float() * sy[rows], acc, rtol=0.07, atol=1e-3 * float(amax.max()))
    assert y.float().abs().amax() <= 448.0


def test_row_reductions_on_the_interpreter():
    # The kernels of row_reductions.tile (test_gpu.py runs them on the GPU)
    # against numpy.
    with open(os.path.join(os.path.dirname(__file__), "row_reductions.tile")) as f:
        lib = tilec.compile(f.read())
    rng = np.random.default_rng(7)
    x = rng.standard_normal((13, 50)).astype(np.float32)
    y = np.empty_like(x)
    lib.rowsoftmax(x, y)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
    x = rng.integers(-5, 5, (9, 30)).astype(np.float32)
    best = np.empty(9, np.int32)
    lib.rowargmax8(x, best)
    np.testing.assert_array_equal(best, x.argmax(1))
    x = rng.standard_normal((3, 5000)).astype(np.float32)
    out = np.empty((3, 1), np.float32)
    lib.rowabsmax(x, out)
    np.testing.assert_array_equal(out[:, 0], np.abs(x).max(1))
    x = rng.standard_normal((7, 32)).astype(np.float32)
    y = np.empty_like(x)
    s = np.empty(7, np.int32)
    lib.rowcenter(x, y, s)
    np.testing.assert_allclose(y, x - x.sum(1, keepdims=True) / 32.0, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(s, (x > 0).sum(1))
    x = rng.standard_normal((5, 77)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    s = np.empty(5, np.float32)
    lib.rowsum_bias(x, b, s)
    np.testing.assert_allclose(s, x.sum(1) + b, rtol=1e-5, atol=1e-5)


def test_swiglu_on_the_interpreter_against_torch():
    # x feeds two mmas (the gate and up projections) in one loop.
    torch = pytest.importorskip("torch")
    lib = tilec.load(example("mlp.tile"))
    g = torch.Generator().manual_seed(3)
    M, K, N = 130, 200, 70
    x = torch.randn(M, K, generator=g).bfloat16()
    wg, wu = (torch.randn(N, K, generator=g).bfloat16() / K ** 0.5 for _ in range(2))
    h = torch.zeros(M, N).bfloat16()
    lib.swiglu(x, wg, wu, h)
    want = torch.nn.functional.silu(x.float() @ wg.float().t()) * (x.float() @ wu.float().t())
    torch.testing.assert_close(h.float(), want, rtol=2e-2, atol=2e-2)
    with pytest.raises(tilec.ArgumentError, match="Wg and Wu must be \\[hidden, input\\]"):
        lib.swiglu(x, wg.t().contiguous(), wu, h)


def test_matmul_tn_on_the_interpreter_against_torch():
    # C = A^T B with A stored K x M (a weight gradient X^T dY).
    torch = pytest.importorskip("torch")
    lib = tilec.load(example("matmul.tile"), BM=64, BN=64)
    g = torch.Generator().manual_seed(5)
    K, M, N = 150, 70, 90
    a = torch.randn(K, M, generator=g).bfloat16()
    b = torch.randn(K, N, generator=g).bfloat16()
    c = torch.zeros(M, N)
    lib.matmul_tn(a, b, c)
    torch.testing.assert_close(c, a.float().t() @ b.float(), rtol=1e-4, atol=1e-3)
    with pytest.raises(tilec.ArgumentError, match="A is K x M and B is K x N"):
        lib.matmul_tn(a, b[:100], c)


@pytest.mark.parametrize("check", list(CHECKS))
def test_tile_checks_on_the_interpreter(check):
    # python/tests/*.tile's kernels against torch (common.CHECKS).
    torch = pytest.importorskip("torch")
    CHECKS[check](torch)


def test_attention_without_the_log_sum_exp_on_the_interpreter():
    # -D LSE=0: O only; L may be any f32 tensor (here empty) and is not
    # written. attention and attention_varlen.
    torch = pytest.importorskip("torch")
    B, H, S, D = 1, 2, 70, 64
    lib = tilec.load(example("attention.tile"), D=D, BN=64, LSE=0)
    q, k, v = _random_qkv(torch, 21, (B, H, S, D), (B, H, S, D))
    o = torch.zeros_like(q)
    empty = torch.zeros(0, 0)
    lib.attention(q.view(B * H, S, D), k.view(B * H, S, D), v.view(B * H, S, D),
                  o.view(B * H, S, D), empty, D ** -0.5)
    want, _ = attention_reference(q.float().numpy(), k.float().numpy(), v.float().numpy(),
                                  D ** -0.5)
    np.testing.assert_allclose(o.float().numpy(), want, rtol=2e-2, atol=2e-2)
    cu = torch.tensor([0, 30, 70], dtype=torch.int32)
    qp, kp, vp = (t.transpose(1, 2).reshape(S, H * D).contiguous() for t in (q, k, v))
    op = torch.zeros_like(qp)
    lib.attention_varlen(qp, kp, vp, op, empty, cu, cu, 40, D ** -0.5)
    want, _ = varlen_attention_reference(qp.float().numpy(), kp.float().numpy(),
                                         vp.float().numpy(), cu.numpy(), cu.numpy(), H, H, D,
                                         D ** -0.5, 0)
    np.testing.assert_allclose(op.float().numpy(), want, rtol=2e-2, atol=2e-2)
    with pytest.raises(tilec.ArgumentError, match="L needs one value per query row"):
        tilec.load(example("attention.tile"), D=D, BN=64).attention(
            q.view(B * H, S, D), k.view(B * H, S, D), v.view(B * H, S, D), o.view(B * H, S, D),
            empty, D ** -0.5)


@pytest.mark.parametrize("sq,sk,hq,hk,causal,d", [(200, 150, 2, 1, False, 64),
                                                  (150, 200, 2, 2, True, 64),
                                                  (130, 130, 1, 1, True, 64),
                                                  (100, 90, 2, 1, True, 128)])
def test_attention_backward_on_the_interpreter(sq, sk, hq, hk, causal, d):
    torch = pytest.importorskip("torch")
    from common import attention_backward_check
    attention_backward_check(torch, sq, sk, hq, hk, causal, d=d)


@pytest.mark.parametrize("seqs_q,seqs_k,hq,hk,causal", [((70, 150, 1), (90, 40, 0), 2, 1, False),
                                                        ((70, 150, 30), (90, 40, 30), 2, 2, True)])
def test_attention_backward_varlen_on_the_interpreter(seqs_q, seqs_k, hq, hk, causal):
    torch = pytest.importorskip("torch")
    from common import attention_backward_varlen_check
    attention_backward_varlen_check(torch, seqs_q, seqs_k, hq, hk, causal)


def test_tuned_table_overrides_the_heuristic_for_its_shapes():
    # A @tuned row whose key matches the call's shapes (and the compile's
    # type and arch) sets its parameters; other shapes keep the heuristic.
    # The call runs the row's variant (here on the interpreter).
    src = """
@heuristic(BLOCK = where(x.shape[0] <= 1000, 256, 1024))
@tuned(key = (T, arch(), x.shape[0]),
       (f32, 90, 640) -> (BLOCK = 128, TWICE = 1),
       (f32, 80, 640) -> (BLOCK = 64))
kernel scale<BLOCK: int = 512, TWICE: int = 0, T: type = f32>(x: tensor<T, 1>)
    grid(cdiv(x.shape[0], BLOCK)) {
    let i = block_id(0);
    store(x, [i], load(x, [i], [BLOCK]) * cast<T>(1 + TWICE));
}
"""
    k = tilec.compile(src).scale
    assert k.heuristics == ["BLOCK", "TWICE"]
    assert k.choose(np.zeros(640, np.float32)) == {"BLOCK": 128, "TWICE": 1}
    assert k.choose(np.zeros(641, np.float32)) == {"BLOCK": 256, "TWICE": 0}
    assert k.choose(np.zeros(5000, np.float32)) == {"BLOCK": 1024, "TWICE": 0}
    x = np.arange(640, dtype=np.float32)
    k(x)
    np.testing.assert_array_equal(x, 2 * np.arange(640, dtype=np.float32))
    y = np.arange(641, dtype=np.float32)
    k(y)
    np.testing.assert_array_equal(y, np.arange(641, dtype=np.float32))
    k80 = tilec.compile(src, arch="sm_80").scale
    assert k80.choose(np.zeros(640, np.float32)) == {"BLOCK": 64}
