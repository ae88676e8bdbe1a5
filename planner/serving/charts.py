"""The serving plan's Plotly figures, from its document (no requests, no ORM)."""

from typing import Any

import plotly.graph_objects as go

from planner.core.formatting import series_style, serving_layout_label
from planner.reports.core.serving import DAY_CONFIGURATIONS, day_configurations


def latency_throughput_figure(document: dict[str, Any]) -> go.Figure:
    """P99 TPOT against output tokens/s of one replica, per configuration, knee marked."""
    figure = go.Figure()
    for i, curve in enumerate(document["curves"]):
        points = curve["points"]
        colour, marker = series_style(i)
        figure.add_scatter(x=[p["output_tokens_per_s"] for p in points],
                           y=[p["tpot_p99_ms"] for p in points], mode="lines+markers",
                           name=curve["label"], line={"color": colour},
                           marker={"symbol": marker, "size": 5})
        knee = [p for p in points if p["is_knee"]]
        if knee:
            figure.add_scatter(x=[knee[0]["output_tokens_per_s"]],
                               y=[knee[0]["tpot_p99_ms"]], mode="markers",
                               name=f"knee, {curve['label']}",
                               marker={"color": colour, "size": 13, "symbol": "star"})
    target = document["input"].get("tpot_p99_ms")
    if target:
        figure.add_hline(y=target, line_dash="dot", annotation_text="TPOT target")
    figure.update_layout(
        title="Latency against load, one replica",
        xaxis_title="Output tokens/s per replica", yaxis_title="P99 time per output token (ms)",
        meta={"finding": "Past the knee (star) more load mostly adds latency."})
    return figure


def cost_latency_figure(document: dict[str, Any]) -> go.Figure:
    """Cost per million tokens against P99 TTFT of every ranked option."""
    options = document["options"]
    figure = go.Figure()
    figure.add_scatter(
        x=[o["ttft_p99_ms"] for o in options],
        y=[o["usd_per_million_tokens"]["all"] for o in options], mode="markers",
        name="options",
        text=[f"{o['provider']} {o['instance_type']} {serving_layout_label(o)} "
              f"x{o['replicas']}" for o in options])
    figure.update_layout(
        title="Cost per million tokens against time to first token",
        xaxis_title="P99 time to first token (ms)",
        yaxis_title="USD per million tokens (prompt + output)",
        meta={"finding": "Each point is one configuration meeting the targets."})
    return figure


def replicas_day_figure(document: dict[str, Any]) -> go.Figure:
    """Replicas in service each hour of the day for the cheapest configurations (whole
    instances), with the request rate they carry on a second axis."""
    figure = go.Figure()
    hours = list(range(24))
    for index, (name, option) in enumerate(day_configurations(document["options"])):
        colour, marker = series_style(index)
        figure.add_scatter(x=hours, y=option["replicas_by_hour"], mode="lines+markers",
                           line={"shape": "hv", "color": colour},
                           marker={"symbol": marker, "size": 6}, name=name)
    rates = (document.get("traffic") or {}).get("hourly_rate_per_s")
    if rates:
        figure.add_scatter(x=hours, y=rates, mode="lines", yaxis="y2", name="request rate",
                           line={"dash": "dot", "color": series_style(DAY_CONFIGURATIONS)[0]})
    figure.update_layout(
        title="Replicas over the day",
        xaxis={"title": {"text": "Hour of the day"}, "dtick": 2},
        yaxis={"title": {"text": "Replicas in service"}, "rangemode": "tozero"},
        yaxis2={"title": {"text": "Requests/s"}, "overlaying": "y", "side": "right",
                "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.22, "x": 0},
        meta={"finding": "Replicas follow the traffic hour by hour: the peak hour sets the "
                         "most, the trough the fewest (at least one)."})
    return figure
