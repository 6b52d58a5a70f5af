#!/usr/bin/env python3
"""Draws TF/s against sequence length from bench_attention_sweep.py's CSV as
an SVG of line charts (no plotting library needed), one panel per head
dimension and mask: tilec, cuDNN, FLASH_ATTENTION (FlashAttention-2) and
Triton, each point the mean of the CSV's rounds.

usage: bench/plot_attention.py RESULTS.csv OUT.svg [GPU]
(GPU: the title's name of the machine the CSV was measured on; H200 by default)
"""
import csv
import math
import sys
from collections import defaultdict

from svgplot import line_elements

COLORS = {"tilec": "#d62728", "cuDNN": "#1f77b4", "FLASH_ATTENTION": "#ff7f0e",
          "Triton": "#2ca02c"}


def main():
    points = defaultdict(list)  # (d, causal, impl, seq) -> [tflops]
    for r in csv.DictReader(open(sys.argv[1])):
        if r["round"] != "sustained":  # burst figures only
            points[(int(r["d"]), int(r["causal"]), r["impl"], int(r["seq"]))].append(float(r["tflops"]))
    gpu = sys.argv[3] if len(sys.argv) > 3 else "H200"
    panels = sorted({(d, c) for d, c, _, _ in points})
    seqs = sorted({s for _, _, _, s in points})
    if not panels:
        sys.exit("no rows in the CSV")
    top = max(sum(v) / len(v) for v in points.values()) * 1.1
    PW, PH, L, T, B = 360, 260, 50, 40, 40
    W = PW * 2 + 160
    H = PH * ((len(panels) + 1) // 2) + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="10" y="18" font-size="14">bf16 FlashAttention forward on {gpu}, TF/s vs '
           'sequence length (16k tokens, H = 2048 / D)</text>']
    for idx, (d, causal) in enumerate(panels):
        ox, oy = (idx % 2) * PW, 30 + (idx // 2) * PH
        x = lambda s: ox + L + (math.log2(s) - math.log2(seqs[0])) / max(
            1e-9, math.log2(seqs[-1]) - math.log2(seqs[0])) * (PW - L - 20)
        y = lambda t: oy + PH - B - t / top * (PH - T - B)
        out.append(f'<text x="{ox + L}" y="{oy + 22}" font-size="12">D = {d}'
                   f'{", causal" if causal else ""}</text>')
        out.append(f'<line x1="{ox+L}" y1="{oy+PH-B}" x2="{ox+PW-20}" y2="{oy+PH-B}" stroke="black"/>')
        out.append(f'<line x1="{ox+L}" y1="{oy+T}" x2="{ox+L}" y2="{oy+PH-B}" stroke="black"/>')
        for t in range(0, int(top) + 1, 100):
            out.append(f'<line x1="{ox+L-4}" y1="{y(t):.1f}" x2="{ox+PW-20}" y2="{y(t):.1f}" stroke="#ddd"/>')
            out.append(f'<text x="{ox+L-8}" y="{y(t)+4:.1f}" text-anchor="end">{t}</text>')
        for s in seqs:
            out.append(f'<text x="{x(s):.1f}" y="{oy+PH-B+16}" text-anchor="middle">{s}</text>')
        for name, color in COLORS.items():
            pts = {s: sum(v) / len(v) for (dd, cc, n, s), v in points.items()
                   if (dd, cc, n) == (d, causal, name)}
            if not pts:
                continue
            out += line_elements(pts, x, y, color, r=2.5)
    for i, (name, color) in enumerate(COLORS.items()):
        out.append(f'<text x="{2 * PW + 10}" y="{60 + 18 * i}" fill="{color}">{name}</text>')
    out.append("</svg>")
    open(sys.argv[2], "w").write("\n".join(out))


if __name__ == "__main__":
    main()
