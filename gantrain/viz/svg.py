"""A tiny line-chart drawer that writes inline SVG text (no plotting dependency, no network).

One chart: a frame, a few tick labels on each axis, one thin polyline per series, optionally
its moving average as a second, bolder line in the same colour, dashed vertical markers
(e.g. warnings) and dashed horizontal reference lines (e.g. a real-vs-real baseline). A long
series is thinned to at most ``MAX_POINTS`` per line, keeping each bucket's lowest and highest
value, so a spike survives and a million-iteration run still gives a page of a few hundred kB.
Each polyline carries ``data-series`` and ``data-run`` attributes and a class (``raw`` or
``smooth``) so a page, or a test, can find it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import numpy as np

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#17becf", "#7f7f7f", "#bcbd22"]


@dataclass
class Line:
    """One series on a chart: ``points`` are (x, y) pairs with finite values, x ascending."""

    label: str
    points: Sequence[tuple[float, float]]
    color: str


@dataclass
class Reference:
    """A dashed horizontal line at ``y`` across the chart; ``label`` is shown on hover."""

    y: float
    label: str
    color: str = "#555"


MAX_POINTS = 800


@dataclass
class Marker:
    """A dashed vertical line at ``x``; ``label`` is shown on hover."""

    x: float
    label: str
    color: str = "#e08000"


def nice_ticks(lo: float, hi: float, n: int = 4) -> list[float]:
    """About ``n`` round tick values (1, 2 or 5 times a power of ten apart) within [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    ticks, k = [], 0
    while first + k * step <= hi + step * 1e-9:
        ticks.append(round(first + k * step, 12))
        k += 1
    return ticks


def fmt(value: float) -> str:
    """A short tick label: 3 significant digits, no trailing noise."""
    if value == 0:
        return "0"
    if abs(value) >= 1e5 or abs(value) < 1e-3:
        return f"{value:.2g}"
    if value == int(value):
        return str(int(value))
    return f"{value:.3g}"


def moving_average(ys: Sequence[float], window: int) -> list[float]:
    """Trailing mean over ``window`` values (shorter at the start), same length as ``ys``."""
    y = np.asarray(ys, dtype=np.float64)
    total = np.cumsum(y)
    total[window:] -= total[:-window].copy()
    return (total / np.minimum(np.arange(1, len(y) + 1), window)).tolist()


def thin(points: Sequence[tuple[float, float]], max_points: int = MAX_POINTS
         ) -> list[tuple[float, float]]:
    """At most ``max_points`` of ``points`` (x ascending): the first and the last, and of
    ``(max_points - 2) // 2`` runs of consecutive points each run's lowest and highest, in x
    order.

    Unlike taking every k-th point, this keeps every extreme (a loss spike, a collapse), which
    is what a user looks for in a long curve.
    """
    n = len(points)
    if n <= max_points:
        return list(points)
    ys = np.asarray([y for _, y in points], dtype=np.float64)
    buckets = max((max_points - 2) // 2, 1)
    starts = np.arange(buckets) * n // buckets
    ends = np.append(starts[1:], n)
    # index of each bucket's min and max: argmin/argmax over a padded (buckets, width) view
    width = int((ends - starts).max())
    cols = starts[:, None] + np.arange(width)[None, :]
    valid = cols < ends[:, None]
    cols = np.minimum(cols, n - 1)
    lo = np.where(valid, ys[cols], np.inf).argmin(axis=1)
    hi = np.where(valid, ys[cols], -np.inf).argmax(axis=1)
    keep = np.unique(np.concatenate([[0, n - 1], starts + lo, starts + hi]))
    return [points[i] for i in keep]


def line_chart(title: str, lines: Sequence[Line], x_range: tuple[float, float],
               markers: Sequence[Marker] = (), smooth: int = 0, width: int = 340,
               height: int = 190, refs: Sequence[Reference] = (),
               max_points: int = MAX_POINTS) -> str:
    """An ``<svg>`` element plotting ``lines`` over the shared ``x_range``.

    ``smooth`` > 1 adds each line's moving average over that many points (for lines long
    enough to need it), computed on the whole series before thinning to ``max_points``. The
    y range covers every finite value of every line and every reference line.
    """
    left, right, top, bottom = 52, 10, 22, 28
    pw, ph = width - left - right, height - top - bottom
    x0, x1 = x_range
    if x1 <= x0:
        x0, x1 = x0 - 0.5, x0 + 0.5
    ys = [y for line in lines for _, y in line.points] + [r.y for r in refs]
    y0, y1 = (min(ys), max(ys)) if ys else (0.0, 1.0)
    if y1 <= y0:
        pad = abs(y0) * 0.1 or 1.0
        y0, y1 = y0 - pad, y1 + pad

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * pw

    def py(y: float) -> float:
        return top + (1 - (y - y0) / (y1 - y0)) * ph

    out = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}">',
           f'<text x="{left}" y="14" class="title">{escape(title)}</text>',
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" class="frame"/>']
    for t in nice_ticks(x0, x1):
        out.append(f'<line x1="{px(t):.1f}" x2="{px(t):.1f}" y1="{top + ph}" '
                   f'y2="{top + ph + 4}" class="tick"/><text x="{px(t):.1f}" '
                   f'y="{top + ph + 15}" class="xl">{fmt(t)}</text>')
    for t in nice_ticks(y0, y1):
        out.append(f'<line x1="{left - 4}" x2="{left + pw}" y1="{py(t):.1f}" y2="{py(t):.1f}" '
                   f'class="grid"/><text x="{left - 6}" y="{py(t) + 3:.1f}" '
                   f'class="yl">{fmt(t)}</text>')
    for m in markers:
        if x0 <= m.x <= x1:
            out.append(f'<line x1="{px(m.x):.1f}" x2="{px(m.x):.1f}" y1="{top}" '
                       f'y2="{top + ph}" class="marker" stroke="{m.color}">'
                       f'<title>{escape(m.label)}</title></line>')
    for r in refs:
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{py(r.y):.1f}" y2="{py(r.y):.1f}" '
                   f'class="ref" stroke="{r.color}"><title>{escape(r.label)}</title></line>')
    for line in lines:
        attrs = f'data-series="{escape(title)}" data-run="{escape(line.label)}"'
        pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in thin(line.points, max_points))
        out.append(f'<polyline class="raw" {attrs} stroke="{line.color}" points="{pts}">'
                   f'<title>{escape(line.label)}</title></polyline>')
        if len(line.points) == 1:
            (x, y), = line.points
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" '
                       f'fill="{line.color}"/>')
        if smooth > 1 and len(line.points) >= 2 * smooth:
            avg = moving_average([y for _, y in line.points], smooth)
            every = max(1, -(-len(avg) // max_points))  # a moving average has no spikes
            kept = list(zip(line.points, avg))
            kept = kept[::every] + ([kept[-1]] if (len(kept) - 1) % every else [])
            pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for (x, _), y in kept)
            out.append(f'<polyline class="smooth" {attrs} stroke="{line.color}" '
                       f'points="{pts}"/>')
    if not ys:
        out.append(f'<text x="{left + pw / 2}" y="{top + ph / 2}" class="empty">'
                   "no finite values</text>")
    out.append("</svg>")
    return "".join(out)
