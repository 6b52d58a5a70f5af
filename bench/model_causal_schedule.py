#!/usr/bin/env python3
"""A model of how a persistent causal attention kernel's programs end: the
(query block, head) tiles of the sweep's shapes (16k tokens, H = 2048 / D,
BM = 128) with a cost of key blocks + 1 each (the +1: Q's load and O's
store), dealt to 132 programs by the persistent loop. Prints the longest
program over the mean for: the launch order (block_id(0) first, blocks
ascending), every 132nd tile in launch order with blocks n-1, 0, n-2, 1, ...
taken two at a time (pair_tiles), a snake order (odd waves reversed) over
descending blocks, and the hardware's dynamic order for one program per
tile (each tile to the first free SM). 1.03 is the wave quantization.

usage: python3 bench/model_causal_schedule.py [--programs 132]
"""
import argparse
import heapq

ap = argparse.ArgumentParser()
ap.add_argument("--programs", type=int, default=132)
P = ap.parse_args().programs


def cost(m, bn):
    return ((m + 1) * 128 + bn - 1) // bn + 1.0


def zigzag(n):
    order = []
    for i in range(n // 2):
        order += [n - 1 - i, i]
    return order + ([n // 2] if n % 2 else [])


def dealt(costs, place):
    loads = [0.0] * P
    for i, c in enumerate(costs):
        loads[place(i)] += c
    return max(loads)


def dynamic(costs):
    free = [0.0] * P
    for c in costs:
        heapq.heappush(free, heapq.heappop(free) + c)
    return max(free)


print(f"{'D':>4} {'S':>6} {'launch order':>13} {'pairs':>6} {'snake':>6} {'one per tile':>13}")
for d, bn in ((64, 256), (128, 128)):
    for s in (512, 1024, 2048, 4096, 8192, 16384):
        n, heads = s // 128, 16384 // s * (2048 // d)
        ascending = [cost(m, bn) for _ in range(heads) for m in range(n)]
        descending = [cost(m, bn) for _ in range(heads) for m in reversed(range(n))]
        paired = [cost(m, bn) for _ in range(heads) for m in zigzag(n)]
        mean = sum(ascending) / P
        rows = (dealt(ascending, lambda i: i % P),
                dealt(paired, lambda i: (i // 2) % P),
                dealt(descending, lambda i: i % P if (i // P) % 2 == 0 else P - 1 - i % P),
                dynamic(descending))
        print(f"{d:>4} {s:>6} " + " ".join(f"{r / mean:>{w}.3f}" for r, w in zip(rows, (13, 6, 6, 13))))
