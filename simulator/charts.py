"""Plotly figures of a stored simulation result (plain dicts in, figures out)."""

from typing import Any

import plotly.graph_objects as go

from planner.core.formatting import PALETTE, count, duration, log_axis, rate, time_scale

# Part of the key of a finished run's cached figures (simulator.views): raise it whenever a
# figure here changes, or pages keep drawing the old one for a day.
FIGURES_VERSION = 2

_MEMORY_PARTS = [
    ("weights_gib", "Weights"),
    ("gradients_gib", "Gradients"),
    ("optimizer_gib", "Optimizer states"),
    ("activations_gib", "Activations"),
    ("overhead_gib", "Framework overhead"),
]
_TIME_PARTS = [
    ("compute_seconds", "Compute"),
    ("tp_comm_seconds", "TP all-reduce (exposed)"),
    ("pp_comm_seconds", "Pipeline sends (exposed)"),
    ("dp_comm_seconds", "DP / ZeRO comm (exposed)"),
    ("bubble_seconds", "Pipeline bubble"),
    ("optimizer_seconds", "Optimizer step"),
]


def _layout(figure: go.Figure, title: str, **extra: Any) -> go.Figure:
    layout: dict[str, Any] = {"height": 340, "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
                              "colorway": list(PALETTE), **extra}
    figure.update_layout(title=title, template="plotly_white", **layout)
    return figure


def memory_figure(memory: dict[str, Any]) -> go.Figure:
    """Stacked bar of GiB per GPU by component against the GPU's capacity."""
    figure = go.Figure()
    for key, label in _MEMORY_PARTS:
        figure.add_trace(go.Bar(name=label, x=[memory[key]], y=["per GPU"], orientation="h"))
    figure.add_vline(
        x=memory["capacity_gib"],
        line_dash="dash",
        line_color="#b00",
        annotation_text=f"capacity {memory['capacity_gib']:.0f} GiB",
    )
    return _layout(figure, "Memory per GPU", barmode="stack", xaxis_title="Memory per GPU (GiB)")


def time_figure(time: dict[str, Any]) -> go.Figure:
    """Bar of one optimizer step's seconds by part (exposed communication only)."""
    labels = [label for _, label in _TIME_PARTS]
    values = [time[key] for key, _ in _TIME_PARTS]
    figure = go.Figure(go.Bar(x=values, y=labels, orientation="h", marker_color="#3465a4"))
    return _layout(
        figure,
        f"Step time breakdown ({time['step_seconds']:.3f} s per step)",
        xaxis_title="Time per optimizer step (s)",
    )


def scaling_figure(points: list[dict[str, Any]]) -> go.Figure:
    """Throughput (tokens/s, left) and time to train (right, in hours or days by its size,
    round ticks) against GPU count; the finding says how both move."""
    fits = sorted((p for p in points if p["is_fit"]), key=lambda p: p["gpus"])
    timed = [p for p in fits if p.get("time_to_train_hours") is not None]
    scale = time_scale([p["time_to_train_hours"] for p in timed])
    figure = go.Figure()
    figure.add_trace(go.Scatter(
        x=[p["gpus"] for p in fits], y=[p["tokens_per_second"] for p in fits],
        mode="lines+markers", name="Throughput (tokens/s)", marker={"color": PALETTE[0]},
        line={"color": PALETTE[0]},
        hovertemplate="%{x:,.0f} GPUs: %{y:,.0f} tokens/s<extra></extra>"))
    figure.add_trace(go.Scatter(
        x=[p["gpus"] for p in timed],
        y=[p["time_to_train_hours"] / scale.hours_per_unit for p in timed],
        mode="lines+markers", name=f"Time to train ({scale.unit})", yaxis="y2",
        marker={"color": PALETTE[1], "symbol": "square"}, line={"color": PALETTE[1]},
        hovertemplate="%{x:,.0f} GPUs: %{y:,.1f} " + scale.unit + "<extra></extra>"))
    rates = [p["tokens_per_second"] for p in fits]
    return _layout(
        figure,
        "Scaling with GPU count",
        xaxis=log_axis([p["gpus"] for p in fits], "GPUs (count)"),
        yaxis={"title": {"text": "Throughput (tokens/s)"}, "rangemode": "tozero",
               "range": [0, max(rates, default=1.0) * 1.08]},
        yaxis2={"title": {"text": f"Time to train ({scale.unit})"}, "overlaying": "y",
                "side": "right", "showgrid": False, "tickmode": "array",
                "tickvals": scale.values, "ticktext": scale.texts,
                "range": [0, scale.values[-1] * 1.02]},
        # Under the plot: at the right it covered the time axis' ticks.
        legend={"orientation": "h", "x": 0, "y": -0.3, "yanchor": "top"},
        margin={"l": 70, "r": 70, "t": 50, "b": 90},
        height=380,
        meta={"finding": _scaling_finding(fits, timed)},
    )


def _scaling_finding(fits: list[dict[str, Any]], timed: list[dict[str, Any]]) -> str:
    if len(fits) < 2:
        return "Scaling with GPU count: too few configurations fit to compare."
    first, last = fits[0], fits[-1]
    text = (f"From {count(first['gpus'])} to {count(last['gpus'])} GPUs throughput goes from "
            f"{rate(first['tokens_per_second'], 'tokens/s')} to "
            f"{rate(last['tokens_per_second'], 'tokens/s')}")
    if len(timed) >= 2:
        text += (f" and time to train from {duration(timed[0]['time_to_train_hours'])} to "
                 f"{duration(timed[-1]['time_to_train_hours'])}")
    return text + "."
