#!/usr/bin/env python3
"""Draws TF/s against problem size from bench_matmul.py --csv output as an
SVG line chart (no plotting library needed): the best tilec configuration,
cuBLAS and Triton per square size.

usage: bench/plot_matmul.py RESULTS.csv OUT.svg [GPU]
(GPU: the title's name of the machine the CSV was measured on; H200 by default)
"""
import csv, math, sys

from svgplot import line_elements


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    gpu = sys.argv[3] if len(sys.argv) > 3 else "H200"
    series = {"tilec (best config)": {}, "cuBLAS": {}, "Triton": {}}
    for r in rows:
        m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
        if not (m == n == k):
            continue
        tf = float(r["tflops"])
        impl = r["impl"]
        key = ("tilec (best config)" if impl.startswith("tilec ") and "gelu" not in impl
               else "cuBLAS" if impl.startswith("cuBLAS") else "Triton" if impl == "Triton" else None)
        if key:
            series[key][m] = max(series[key].get(m, 0.0), tf)
    sizes = sorted({s for v in series.values() for s in v})
    if not sizes:
        sys.exit("no square sizes in the CSV")
    W, H, L, R, T, B = 640, 400, 60, 170, 30, 50
    top = max(max(v.values()) for v in series.values() if v) * 1.1
    x = lambda s: L + (math.log2(s) - math.log2(sizes[0])) / max(1e-9, math.log2(sizes[-1]) - math.log2(sizes[0])) * (W - L - R)
    y = lambda t: H - B - t / top * (H - T - B)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{L}" y="18" font-size="14">bf16 matmul on {gpu}, TF/s vs M = N = K</text>',
           f'<line x1="{L}" y1="{H-B}" x2="{W-R}" y2="{H-B}" stroke="black"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H-B}" stroke="black"/>']
    for t in range(0, int(top) + 1, 100):
        out.append(f'<line x1="{L-4}" y1="{y(t):.1f}" x2="{W-R}" y2="{y(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L-8}" y="{y(t)+4:.1f}" text-anchor="end">{t}</text>')
    for s in sizes:
        out.append(f'<text x="{x(s):.1f}" y="{H-B+18}" text-anchor="middle">{s}</text>')
    colors = {"tilec (best config)": "#d62728", "cuBLAS": "#1f77b4", "Triton": "#2ca02c"}
    for i, (name, pts) in enumerate(series.items()):
        if not pts:
            continue
        out += line_elements(pts, x, y, colors[name])
        out.append(f'<text x="{W-R+10}" y="{T+20+18*i}" fill="{colors[name]}">{name}</text>')
    out.append(f'<text x="{(L+W-R)/2}" y="{H-10}" text-anchor="middle">M = N = K</text>')
    out.append("</svg>")
    open(sys.argv[2], "w").write("\n".join(out))


if __name__ == "__main__":
    main()
