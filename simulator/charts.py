"""Plotly figures of a stored simulation result (plain dicts in, figures out)."""

from typing import Any

import plotly.graph_objects as go

from planner.core.formatting import PALETTE, log_axis

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
    figure.update_layout(
        title=title,
        template="plotly_white",
        height=340,
        margin={"l": 60, "r": 20, "t": 50, "b": 50},
        colorway=list(PALETTE),
        **extra,
    )
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
        xaxis_title="Seconds per optimizer step (s)",
    )


def scaling_figure(points: list[dict[str, Any]]) -> go.Figure:
    """Throughput and time to train against GPU count."""
    fits = [p for p in points if p["is_fit"]]
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=[p["gpus"] for p in fits],
            y=[p["tokens_per_second"] for p in fits],
            mode="lines+markers",
            name="Throughput (tokens/s)",
        )
    )
    timed = [p for p in fits if p.get("time_to_train_hours") is not None]
    figure.add_trace(
        go.Scatter(
            x=[p["gpus"] for p in timed],
            y=[p["time_to_train_hours"] / 24 for p in timed],
            mode="lines+markers",
            name="Time to train (days)",
            yaxis="y2",
        )
    )
    return _layout(
        figure,
        "Scaling with GPU count",
        xaxis=log_axis([p["gpus"] for p in fits], "GPUs (count)"),
        yaxis_title="Throughput (tokens/s)",
        yaxis2={"title": "Time to train (days)", "overlaying": "y", "side": "right"},
    )
