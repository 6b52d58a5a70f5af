"""Checking a kernel's GPU result against the CPU reference interpreter."""
import numpy as np


def _host_copy(a):
    """A host copy of a torch tensor (CUDA or CPU: a CPU tensor, so bf16
    stays bf16 on the interpreter) or of a numpy array."""
    if hasattr(a, "detach"):
        return a.detach().cpu().clone()
    if isinstance(a, np.ndarray):
        return a.copy()
    return a


def _as_float64(a):
    if hasattr(a, "detach"):
        return a.detach().cpu().double().numpy()
    return np.asarray(a, dtype=np.float64)


def assert_close_to_interpreter(kernel, *args, rtol=1e-5, atol=1e-6, **defines):
    """Runs `kernel(*args, **defines)` as given (on the GPU for CUDA
    tensors) and on the CPU reference interpreter with host copies of the
    same inputs, then compares every parameter the kernel writes
    (kernel.signature["writes"]); an AssertionError names the parameter and
    the largest difference. The GPU arguments hold the GPU result after."""
    host = [_host_copy(a) for a in args]
    kernel(*args, **defines)
    if any(hasattr(a, "is_cuda") and a.is_cuda for a in args):
        import torch
        torch.cuda.synchronize()
    kernel(*host, **defines)
    names = [p["name"] for p in kernel.params]
    for name in kernel.writes:
        i = names.index(name)
        got, want = _as_float64(args[i]), _as_float64(host[i])
        if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
            diff = np.abs(got - want)
            worst = np.unravel_index(np.nanargmax(diff), diff.shape)
            raise AssertionError(
                f"kernel '{kernel.name}': parameter '{name}' differs from the interpreter: "
                f"at {tuple(int(x) for x in worst)} GPU {got[worst]} vs interpreter "
                f"{want[worst]} (rtol={rtol}, atol={atol})")
