"""The GPU launch path's argument checks and packing, without a GPU: CUDA
tensors are stood in for by objects with torch's tensor interface (real
torch dtypes, shapes and strides of a CPU tensor, a device index)."""
import os
import types

import pytest

torch = pytest.importorskip("torch")
from common import example, tilec  # noqa: E402,F401

SAXPY = example("saxpy.tile")


class FakeCuda:
    """A CUDA tensor as far as the launch path looks at one."""

    def __init__(self, t, index=0):
        self.t, self.index = t, index
        self.device = types.SimpleNamespace(type="cuda", index=index)
        self.dtype, self.shape = t.dtype, t.shape
        self.is_cuda = True

    def dim(self):
        return self.t.dim()

    def stride(self):
        return self.t.stride()

    def get_device(self):
        return self.index

    def data_ptr(self):
        return self.t.data_ptr()


def gpu(*shape, dtype=torch.float32, index=0):
    return FakeCuda(torch.zeros(*shape, dtype=dtype), index)


def test_mismatches_name_the_kernel_and_parameter():
    with pytest.raises(tilec.ArgumentError, match=r"kernel 'saxpy': type parameter T is f16 "
                                                  r"from argument 2 \('x'\) but f32 from "
                                                  r"argument 3 \('y'\)"):
        tilec.load(SAXPY).saxpy(1.0, gpu(8, dtype=torch.float16), gpu(8))
    k = tilec.load(SAXPY, T="f32").saxpy
    with pytest.raises(tilec.ArgumentError, match=r"kernel 'saxpy': argument 2 \('x'\) must be "
                                                  r"a tensor<f32, 1>, got a tensor of f16"):
        k(1.0, gpu(8, dtype=torch.float16), gpu(8))
    with pytest.raises(tilec.ArgumentError, match=r"argument 3 \('y'\) must be a tensor<f32, 1>, "
                                                  r"got a tensor of rank 2"):
        k(1.0, gpu(8), gpu(2, 4))
    with pytest.raises(tilec.ArgumentError, match=r"argument 3 \('y'\) is on the CPU, but the "
                                                  r"launch is on the GPU"):
        k(1.0, gpu(8), torch.zeros(8))
    with pytest.raises(tilec.ArgumentError, match=r"argument 3 \('y'\) is on cuda:1, the tensors "
                                                  r"before it on cuda:0"):
        k(1.0, gpu(8), gpu(8, index=1))
    with pytest.raises(tilec.ArgumentError, match=r"argument 1 \('a'\) must be a scalar f32, "
                                                  r"got str"):
        k("2", gpu(8), gpu(8))
    with pytest.raises(tilec.ArgumentError, match=r"takes 3 arguments \(a, x, y\), got 2"):
        k(1.0, gpu(8))
    with pytest.raises(tilec.ArgumentError, match=r"bind needs CUDA tensors"):
        k.bind(1.0, torch.zeros(8), torch.zeros(8))


def test_packing_matches_tilec_arg():
    k = tilec.load(SAXPY).saxpy
    x = torch.zeros(10, 6)[:, 1]  # strided: every 6th element
    y = gpu(10)
    packed, device = k._pack((2.5, FakeCuda(x), y))
    assert device == 0
    args = (tilec._capi._Arg * 3).from_buffer_copy(packed)
    assert args[0].kind == 1 and args[0].f == 2.5
    assert args[1].kind == 2 and args[1].rank == 1 and args[1].ptr == x.data_ptr()
    assert list(args[1].sizes)[:1] == [10] and list(args[1].strides)[:1] == [6]
    assert args[1].dtype == b"f32"
    # The fast path of a plain call packs the same bytes.
    assert k._fast_pack((2.5, FakeCuda(x), y), 0) == bytes(packed)
    assert k._fast_pack((2.5, FakeCuda(x, index=1), y), 0) is None


def test_a_launch_without_a_gpu_is_a_clear_error():
    if os.path.exists("/dev/nvidia0"):
        pytest.skip("this machine has a GPU")
    k = tilec.load(SAXPY).saxpy
    with pytest.raises(RuntimeError) as e:
        k(1.0, gpu(8), gpu(8))
    assert "tilec" in str(e.value) or "CUDA" in str(e.value)


def test_torch_op_on_cpu_tensors_runs_the_interpreter():
    import tilec.torch as tt
    lib = tilec.load(SAXPY)
    op = tt.op(lib.saxpy, name="saxpy_cpu_check")
    x = torch.arange(100, dtype=torch.float32)
    y = torch.ones(100)
    op(2.0, x, y)
    assert torch.equal(y, 2 * x + 1)
    # The schema says which tensor the kernel writes (from the compiler).
    schema = str(torch.ops.tilec.saxpy_cpu_check.default._schema)
    assert schema == "tilec::saxpy_cpu_check(float a, Tensor x, Tensor(a!) y) -> ()", schema
    with pytest.raises(ValueError, match="has no parameter 'z'"):
        tt.op(lib.saxpy, name="saxpy_bad", mutates=["z"])
