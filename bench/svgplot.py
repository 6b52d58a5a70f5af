"""Shared SVG pieces of the bench/plot_*.py charts (no plotting library)."""


def line_elements(pts, x, y, color, r=3):
    """The SVG elements of one line of a chart: {size: value} points joined
    by a polyline with a dot at each, placed by the x and y scales."""
    path = " ".join(f"{x(s):.1f},{y(pts[s]):.1f}" for s in sorted(pts))
    out = [f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{path}"/>']
    out += [f'<circle cx="{x(s):.1f}" cy="{y(pts[s]):.1f}" r="{r}" fill="{color}"/>'
            for s in sorted(pts)]
    return out
