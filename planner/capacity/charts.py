"""Plotly figures of a capacity sweep, from its document (no requests, no ORM)."""

from typing import Any

import plotly.graph_objects as go

from planner.core.formatting import PALETTE, number, round_ticks, usd
from planner.reports.core.capacity import curve_name

_LAYOUT: dict[str, Any] = {
    "template": "plotly_white",
    "margin": {"l": 80, "r": 20, "t": 50, "b": 60},
    "height": 440,
    "font": {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 13},
    "legend": {"orientation": "h", "y": -0.22},
}


def frontier_figure(document: dict[str, Any]) -> go.Figure:
    """Total cost against P95 wait, one line per discipline x policy x T (points in pool-size
    order), the recommended point and the references (all on demand, no-wait commitment)."""
    curves: dict[str, list[dict[str, Any]]] = {}
    for point in document["points"]:
        curves.setdefault(curve_name(point), []).append(point)
    figure = go.Figure()
    for i, (name, points) in enumerate(curves.items()):
        figure.add_trace(go.Scatter(
            name=name, x=[p["p95_wait_hours"] for p in points],
            y=[p["total_usd"] for p in points], mode="lines+markers",
            line={"color": PALETTE[i % len(PALETTE)], "width": 1.5},
            customdata=[[p["pool_gpus"], p["mean_wait_hours"], p["jobs_burst"]]
                        for p in points],
            hovertemplate="%{customdata[0]} GPUs<br>P95 wait %{x:.2f} h, mean "
                          "%{customdata[1]:.2f} h<br>$%{y:,.0f}<br>%{customdata[2]:,} jobs "
                          "burst<extra>" + name + "</extra>"))
    for item in document.get("against") or []:
        ref = item["reference"]
        figure.add_trace(go.Scatter(
            name=f"{item['name']} ({ref['pool_gpus']} GPUs)", x=[ref["p95_wait_hours"]],
            y=[ref["total_usd"]], mode="markers",
            marker={"symbol": "diamond", "size": 11, "color": "#6b7280"}))
    best = document["recommended"]
    figure.add_trace(go.Scatter(
        name=f"Recommended: {best['pool_gpus']} GPUs", x=[best["p95_wait_hours"]],
        y=[best["total_usd"]], mode="markers",
        marker={"symbol": "star", "size": 18, "color": "#111827"}))
    target = float(document["target_p95_wait_hours"])
    finding = (f"The cheapest point with P95 wait at most {target:g} h is {best['pool_gpus']:,} "
               f"GPUs ({curve_name(best)}) at {usd(best['total_usd'])}, P95 wait "
               f"{number(best['p95_wait_hours'], 2)} h.")
    figure.add_vline(x=target, line={"dash": "dot", "color": "#9ca3af"},
                     annotation_text=f"P95 target {target:g} h")
    layout = {**_LAYOUT, "height": 520, "margin": {**_LAYOUT["margin"], "r": 10},
              "legend": {"orientation": "v", "x": 1.02, "y": 1, "font": {"size": 11}}}
    figure.update_layout(**layout,
                         title="Cost against P95 wait, per waiting policy",
                         meta={"finding": finding},
                         xaxis_title="P95 wait (h)",
                         yaxis_title="Total cost over the history (USD)")
    return figure


def queue_figure(document: dict[str, Any]) -> go.Figure:
    """Jobs and GPUs waiting over time at the recommended point."""
    queue = document.get("queue") or {}
    figure = go.Figure()
    figure.add_trace(go.Scatter(name="Jobs waiting", x=queue.get("hours", []),
                                y=queue.get("jobs", []), mode="lines",
                                line={"color": PALETTE[0], "width": 1}))
    figure.add_trace(go.Scatter(name="GPUs waited for", x=queue.get("hours", []),
                                y=queue.get("gpus", []), mode="lines", yaxis="y2",
                                line={"color": PALETTE[1], "width": 1}))
    best = document["recommended"]
    jobs = queue.get("jobs") or [0]
    finding = (f"At {best['pool_gpus']:,} GPUs at most {max(jobs):,.0f} jobs wait at once; "
               f"the mean wait is {number(best['mean_wait_hours'], 2)} h.")
    title = f"Queue at the recommended point: {best['pool_gpus']} GPUs, {curve_name(best)}"
    if not best["pool_gpus"]:
        finding = "Nothing is committed: every job runs in the cloud at once and none waits."
        title = "Queue at the recommended point: none (nothing committed, no job waits)"
    figure.update_layout(
        **{**_LAYOUT, "legend": {"orientation": "h", "y": -0.2, "x": 0}},
        meta={"finding": finding},
        title=title,
        xaxis_title="Time since the first submit (h)",
        yaxis=_round_axis(jobs, "Jobs waiting (count)"),
        yaxis2={**_round_axis(queue.get("gpus") or [0], "GPUs waited for"),
                "overlaying": "y", "side": "right", "showgrid": False})
    return figure


def _round_axis(values: list[float], title: str) -> dict[str, Any]:
    """A linear axis from 0 with round ticks (Plotly's second axis took the first one's tick
    count: 22.9, 45.7, 68.6 GPUs)."""
    ticks = round_ticks(max(values, default=0.0) or 4.0)  # nothing waits: 0 to 4, flat at 0
    return {"title": {"text": title}, "tickmode": "array", "tickvals": ticks,
            "ticktext": [number(t, 2) for t in ticks], "range": [0, ticks[-1] * 1.02]}
