"""Shared timing helper of the bench/*.py harnesses."""
import torch


def median_ms(fn, iters, warmup=10):
    """Median GPU time of fn() over `iters` runs after `warmup`, with CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iters):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]
