"""Charts of the report model as plain SVG (vector, for the PDF), with titled axes.

Sizes are in SVG user units (1 unit = 1 CSS px); text is escaped; no script, no external
reference. Scatter and line charts use linear or log10 x axes; bar charts stack their series.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from xml.sax.saxutils import escape

from planner.reports.core.model import Chart

WIDTH, HEIGHT = 720.0, 330.0
LEFT, RIGHT, TOP, BOTTOM = 78.0, 170.0, 34.0, 58.0
UPRIGHT_LABELS, SLANTED_CHARACTERS = 8, 9
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")


@dataclass(frozen=True)
class Axis:
    """Data range [low, high] drawn onto pixels [start, end] (log10 when is_log)."""

    low: float
    high: float
    start: float
    end: float
    is_log: bool = False

    def _t(self, value: float) -> float:
        return math.log10(value) if self.is_log else value

    def at(self, value: float) -> float:
        low, high = self._t(self.low), self._t(self.high)
        share = 0.5 if high == low else (self._t(value) - low) / (high - low)
        return self.start + share * (self.end - self.start)


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About `count` round tick values covering [low, high] (1, 2, 2.5 or 5 × 10^k apart)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError("ticks: the range must be finite")
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    if ticks[-1] < high:
        ticks.append(round(value, 12))
    return ticks


MAX_LOG_TICKS = 12


def log_ticks(low: float, high: float) -> list[float]:
    """Powers of two (GPU counts) from at or below `low` to at or above `high`; powers of ten
    when powers of two would be more than MAX_LOG_TICKS (durations over many decades)."""
    if low <= 0:
        raise ValueError("ticks: a log axis needs positive values")
    high = max(high, low)
    for base in (2.0, 10.0):
        first = math.floor(math.log(low, base) + 1e-9)
        last = max(math.ceil(math.log(high, base) - 1e-9), first + 1)
        if last - first + 1 <= MAX_LOG_TICKS or base == 10.0:
            break
    return [base**k for k in range(first, last + 1)]


def label(value: float) -> str:
    """A tick label: 1.2k, 3.4M, 0.25."""
    size = abs(value)
    if size < 1e4 and value == int(value):
        return str(int(value))
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if size >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


def _text(x: float, y: float, text: str, *, size: float = 11, anchor: str = "middle",
          extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size:g}" text-anchor="{anchor}"'
            f'{extra}>{escape(text)}</text>')


def _axes(chart: Chart, x: Axis, y: Axis, x_ticks: list[tuple[float, str]],
          y_ticks: list[float]) -> list[str]:
    parts = [f'<rect x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" '
             f'height="{HEIGHT - TOP - BOTTOM}" fill="none" stroke="#555"/>']
    for value in y_ticks:
        py = y.at(value)
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{py:.1f}" y2="{py:.1f}" '
                     'stroke="#ddd"/>')
        parts.append(_text(LEFT - 6, py + 4, label(value), size=10, anchor="end"))
    # Many category labels would run into each other: slanted, cut at SLANTED_CHARACTERS.
    is_slanted = len(x_ticks) > UPRIGHT_LABELS
    for value, text in x_ticks:
        px = x.at(value)
        parts.append(f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{HEIGHT - BOTTOM}" '
                     f'y2="{HEIGHT - BOTTOM + 4}" stroke="#555"/>')
        if is_slanted:
            short = text if len(text) <= SLANTED_CHARACTERS else text[:SLANTED_CHARACTERS - 1] + "…"
            ty = HEIGHT - BOTTOM + 12
            parts.append(_text(px + 3, ty, short, size=9, anchor="end",
                               extra=f' transform="rotate(-30 {px + 3:.1f} {ty:.1f})"'))
        else:
            parts.append(_text(px, HEIGHT - BOTTOM + 16, text, size=10))
    middle_y = (TOP + HEIGHT - BOTTOM) / 2
    parts.append(_text((LEFT + WIDTH - RIGHT) / 2, HEIGHT - (6 if is_slanted else 14),
                       chart.x_title, size=12))
    parts.append(_text(16, middle_y, chart.y_title, size=12,
                       extra=f' transform="rotate(-90 16 {middle_y:.1f})"'))
    parts.append(_text(LEFT, 20, chart.title, size=14, anchor="start",
                       extra=' font-weight="bold"'))
    return parts


def _legend(names: list[str]) -> list[str]:
    parts = []
    for i, name in enumerate(names[:14]):
        y = TOP + 8 + i * 17
        colour = PALETTE[i % len(PALETTE)]
        parts.append(f'<rect x="{WIDTH - RIGHT + 12}" y="{y - 8}" width="10" height="10" '
                     f'fill="{colour}"/>')
        parts.append(_text(WIDTH - RIGHT + 28, y + 1, name[:24], size=10, anchor="start"))
    return parts


def _span(values: list[float], is_log: bool = False) -> tuple[float, float]:
    finite = [v for v in values if math.isfinite(v) and (v > 0 or not is_log)]
    if not finite:
        return (1.0, 10.0) if is_log else (0.0, 1.0)
    return min(finite), max(finite)


def _points_svg(chart: Chart) -> list[str]:
    xs = [v for s in chart.series for v in s.x]
    ys = [v for s in chart.series for v in s.y]
    x_low, x_high = _span(xs, chart.is_x_log)
    y_low, y_high = _span(ys)
    if chart.is_x_log:
        x_tick_values = log_ticks(x_low, x_high)
    else:
        x_tick_values = nice_ticks(min(x_low, 0.0) if x_low > 0 and x_low < x_high / 4 else x_low,
                                   x_high)
    y_tick_values = nice_ticks(min(0.0, y_low), y_high)
    # The axis spans its ticks and every point (none drawn outside the frame).
    x = Axis(min(x_tick_values[0], x_low), max(x_tick_values[-1], x_high), LEFT, WIDTH - RIGHT,
             chart.is_x_log)
    y = Axis(y_tick_values[0], y_tick_values[-1], HEIGHT - BOTTOM, TOP)
    parts = _axes(chart, x, y, [(v, label(v)) for v in x_tick_values], y_tick_values)
    for i, series in enumerate(chart.series):
        colour = PALETTE[i % len(PALETTE)]
        points = [(x.at(a), y.at(b)) for a, b in zip(series.x, series.y, strict=True)
                  if math.isfinite(a) and math.isfinite(b) and (a > 0 or not chart.is_x_log)]
        if chart.kind == "line" and len(points) > 1:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                         'stroke-width="2"/>')
        parts.extend(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}" '
                     'fill-opacity="0.75"/>' for px, py in points)
    return parts + _legend([s.name for s in chart.series])


def _bars_svg(chart: Chart) -> list[str]:
    n = len(chart.categories)
    totals = [sum(s.y[i] for s in chart.series if i < len(s.y)) for i in range(n)]
    y_ticks = nice_ticks(0.0, max(totals, default=1.0) or 1.0)
    x = Axis(-0.5, n - 0.5, LEFT, WIDTH - RIGHT)
    y = Axis(y_ticks[0], y_ticks[-1], HEIGHT - BOTTOM, TOP)
    parts = _axes(chart, x, y, [(float(i), c) for i, c in enumerate(chart.categories)], y_ticks)
    width = 0.7 * (WIDTH - LEFT - RIGHT) / max(n, 1)
    for i in range(n):
        base = 0.0
        for k, series in enumerate(chart.series):
            value = series.y[i] if i < len(series.y) else 0.0
            top, bottom = y.at(base + value), y.at(base)
            parts.append(f'<rect x="{x.at(i) - width / 2:.1f}" y="{top:.1f}" width="{width:.1f}" '
                         f'height="{max(bottom - top, 0.0):.1f}" '
                         f'fill="{PALETTE[k % len(PALETTE)]}"/>')
            base += value
    return parts + _legend([s.name for s in chart.series])


def chart_svg(chart: Chart) -> str:
    """The chart as one standalone <svg> element (about 720 × 330 px)."""
    body = _bars_svg(chart) if chart.kind == "bar" else _points_svg(chart)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH:g} {HEIGHT:g}" '
            f'width="{WIDTH:g}" height="{HEIGHT:g}" font-family="DejaVu Sans, sans-serif" '
            f'role="img" aria-label="{escape(chart.title)}">' + "".join(body) + "</svg>")
