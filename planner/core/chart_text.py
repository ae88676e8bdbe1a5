"""Every chart's text alternative, from its Plotly figure (the dict `to_plotly_json` gives):
a one-sentence finding and its data as rows of a table. Django-free.

A chart states its own finding in `layout.meta.finding`; without one, the finding names the
lowest and highest value of its first numeric trace, with the axis titles as units.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Any

import numpy as np

from planner.core.formatting import count, large_count, number

MAX_ROWS = 500


@dataclass(frozen=True)
class ChartData:
    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    n_points: int  # all points; rows holds at most MAX_ROWS of them


def _text(value: Any) -> str:
    if isinstance(value, dict):
        return _text(value.get("text", ""))
    return "" if value is None else str(value)


def _axis_title(layout: dict[str, Any], axis: str) -> str:
    return _text((layout.get(axis) or {}).get("title"))


def chart_title(figure: dict[str, Any]) -> str:
    """The figure's title without Plotly's HTML line breaks and tags."""
    title = _text((figure.get("layout") or {}).get("title"))
    return " ".join(title.replace("<br>", " ").replace("<br />", " ").split()) or "Chart"


def _values(trace: dict[str, Any], key: str) -> list[Any]:
    values: Any = trace.get(key)
    if isinstance(values, dict) and "bdata" in values:  # plotly's typed array (JSON-encoded)
        array = np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
        return [float(v) for v in array.reshape(-1)]
    if isinstance(values, np.ndarray):  # before encoding
        return list(values.reshape(-1).tolist())
    return list(values) if isinstance(values, list | tuple) else []


def _axis_values(trace: dict[str, Any], key: str) -> list[Any]:
    """A trace's x (or y), also when given as a start and a step (Plotly's x0/dx: on a date
    axis x0 is a date and dx milliseconds), one value per point of the other axis."""
    values = _values(trace, key)
    if values or f"{key}0" not in trace:
        return values
    count = len(_values(trace, "y" if key == "x" else "x"))
    start, step = trace[f"{key}0"], trace.get(f"d{key}", 1)
    if isinstance(start, str):
        origin = datetime.fromisoformat(start)
        return [(origin + timedelta(milliseconds=step * i)).strftime("%Y-%m-%d %H:%M")
                for i in range(count)]
    return [start + step * i for i in range(count)]


def _when(text: str) -> str:
    """An ISO date-time as people write it ("2024-01-22", "2024-01-22 15:00"); other text as
    it is."""
    if len(text) < 19 or text[4] != "-" or text[10] not in "T ":
        return text
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return text
    return moment.strftime("%Y-%m-%d" if moment.time() == time() else "%Y-%m-%d %H:%M")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _points(trace: dict[str, Any], where_title: str) -> list[tuple[str, float]]:
    """(where, value) pairs of a trace: the value axis is x for horizontal bars, else y; where
    is the point's text, its category, or its position on the other axis with that axis' title."""
    horizontal = trace.get("orientation") == "h"
    values = _axis_values(trace, "x" if horizontal else "y")
    labels = _axis_values(trace, "y" if horizontal else "x")
    texts = _values(trace, "text") or _values(trace, "hovertext")
    points = []
    for i, value in enumerate(values):
        if not _is_number(value):
            continue
        if i < len(texts) and isinstance(texts[i], str) and texts[i]:
            where = _text(texts[i]).split("<br>")[0]
        elif i < len(labels) and _is_number(labels[i]):
            where = f"{number(float(labels[i]), 2)} {where_title}".strip()
        else:
            where = _when(_text(labels[i])) if i < len(labels) else f"point {i + 1}"
        points.append((where, float(value)))
    return points


def _amount(value: float) -> str:
    if abs(value) >= 1e6:
        return large_count(value)
    return number(value, 3 if abs(value) < 10 else 1 if abs(value) < 1000 else 0)


def chart_caption(figure: dict[str, Any]) -> str:
    """Which options the chart draws (`layout.meta.caption`), "" when it does not say."""
    meta = (figure.get("layout") or {}).get("meta")
    return str(meta.get("caption") or "") if isinstance(meta, dict) else ""


def chart_finding(figure: dict[str, Any]) -> str:
    """One sentence: what the chart shows (its highest and lowest point over every series)."""
    layout = figure.get("layout") or {}
    meta = layout.get("meta")
    if isinstance(meta, dict) and meta.get("finding"):
        return str(meta["finding"])
    found: list[tuple[float, str, str]] = []  # value, series, where
    what = ""
    traces = figure.get("data") or []
    for trace in traces:
        horizontal = trace.get("orientation") == "h"
        value_axis, other_axis = ("xaxis", "yaxis") if horizontal else ("yaxis", "xaxis")
        points = _points(trace, _axis_title(layout, other_axis))
        what = what or _axis_title(layout, value_axis) or _text(trace.get("name"))
        series = _text(trace.get("name")) if len(traces) > 1 else ""
        found += [(value, series, where) for where, value in points]
    if len(found) < 2:
        return f"{chart_title(figure)}: the data is in the table below."
    high, low = max(found), min(found)

    def said(point: tuple[float, str, str]) -> str:
        value, series, where = point
        return f"{_amount(value)} ({series}, {where})" if series else f"{_amount(value)} ({where})"

    return (f"{what or 'Value'}: highest {said(high)}, lowest {said(low)}, "
            f"over {count(len(found))} points.")


def chart_data(figure: dict[str, Any]) -> ChartData:
    """The figure's points as table rows: series, x and y (with the axis titles as headers)."""
    layout = figure.get("layout") or {}
    traces = figure.get("data") or []
    # Series on a second y axis have another unit: each series' name says it.
    two_axes = any(trace.get("yaxis", "y") != "y" for trace in traces)
    y_title = "Value (unit in the series name)" if two_axes else _axis_title(layout, "yaxis")
    header = ("Series", _axis_title(layout, "xaxis") or "x", y_title or "y")
    rows: list[tuple[str, ...]] = []
    n_points = 0
    for i, trace in enumerate(traces):
        name = _text(trace.get("name")) or f"Series {i + 1}"
        xs, ys = _axis_values(trace, "x"), _axis_values(trace, "y")
        for x, y in zip(xs, ys, strict=False):
            n_points += 1
            if len(rows) < MAX_ROWS:
                rows.append((name, _cell(x, header[1]), _cell(y, header[2])))
    return ChartData(chart_title(figure), header, tuple(rows), n_points)


def _cell(value: Any, title: str = "") -> str:
    """A number as its axis reads it: money (an axis in USD) to the cent (whole dollars as
    the chart holds them, e.g. totals rounded to the dollar), else up to 4 decimals."""
    if _is_number(value) and "USD" in title:
        amount = float(value)
        return f"{amount:,.0f}" if amount == round(amount) else f"{amount:,.2f}"
    if _is_number(value):
        return number(float(value), 4)
    return _when(_text(value).replace("<br>", " "))
