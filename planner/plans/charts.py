"""Plotly figures of a plan: time vs cost with the Pareto front, cost parts, scaling, memory."""

from typing import Any

import plotly.graph_objects as go

_COLORS = {
    "on_demand": "#3465a4",
    "spot": "#e07b00",
    "reserved_1y": "#4e9a06",
    "reserved_3y": "#2e6a00",
    "committed_1y": "#4e9a06",
    "committed_3y": "#2e6a00",
    "savings_plan_1y": "#75507b",
    "savings_plan_3y": "#5c3566",
}


def _style(figure: go.Figure, title: str, **layout: Any) -> go.Figure:
    figure.update_layout(
        title=title,
        template="plotly_white",
        height=420,
        margin={"l": 70, "r": 20, "t": 50, "b": 60},
        **layout,
    )
    return figure


def _hover(row: dict[str, Any]) -> str:
    return (
        f"{row['provider']} {row['region']} {row['instance_type']} × {row['nodes']:.0f}"
        f"<br>{row['gpus']:.0f} × {row['gpu']} · {row['purchase_option']}"
        f"<br>TP{row['tp']:.0f} PP{row['pp']:.0f} DP{row['dp']:.0f} ZeRO{row['zero_stage']:.0f}"
        f"<br>{row['time_to_train_hours'] / 24:,.1f} days · ${row['total_usd']:,.0f}"
    )


def pareto_figure(options: list[dict[str, Any]]) -> go.Figure:
    """Every feasible option as time (days) vs total cost (USD); the Pareto front as a line."""
    figure = go.Figure()
    feasible = [o for o in options if not o["infeasible_reason"]]
    for option in sorted({o["purchase_option"] for o in feasible}):
        rows = [o for o in feasible if o["purchase_option"] == option]
        figure.add_trace(
            go.Scattergl(
                x=[r["time_to_train_hours"] / 24 for r in rows],
                y=[r["total_usd"] for r in rows],
                mode="markers",
                name=option,
                marker={"color": _COLORS.get(option), "size": 6, "opacity": 0.6},
                text=[_hover(r) for r in rows],
                hoverinfo="text",
            )
        )
    front = sorted((o for o in feasible if o["is_pareto"]), key=lambda o: o["time_to_train_hours"])
    figure.add_trace(
        go.Scatter(
            x=[r["time_to_train_hours"] / 24 for r in front],
            y=[r["total_usd"] for r in front],
            mode="lines+markers",
            name="Pareto front",
            line={"color": "#cc0000"},
            text=[_hover(r) for r in front],
            hoverinfo="text",
        )
    )
    return _style(
        figure,
        "Time to train vs total cost",
        xaxis_title="Time to train (days)",
        yaxis_title="Total cost (USD)",
        xaxis_type="log",
        yaxis_type="log",
    )


def cost_breakdown_figure(options: list[dict[str, Any]]) -> go.Figure:
    """Compute, storage and egress USD of the ten cheapest feasible options."""
    rows = [o for o in options if not o["infeasible_reason"]][:10]
    labels = [
        f"#{r['rank']:.0f} {r['instance_type']}×{r['nodes']:.0f} {r['purchase_option']}"
        for r in rows
    ]
    figure = go.Figure()
    for key, name in (
        ("compute_usd", "Compute"),
        ("storage_usd", "Storage"),
        ("egress_usd", "Egress"),
    ):
        figure.add_trace(go.Bar(name=name, x=labels, y=[r[key] for r in rows]))
    return _style(
        figure,
        "Cost breakdown of the 10 cheapest options",
        barmode="stack",
        yaxis_title="Cost (USD)",
    )


def scaling_figure(points: list[dict[str, Any]]) -> go.Figure:
    """Best throughput per GPU model against GPU count (tokens/s)."""
    figure = go.Figure()
    for gpu in sorted({p["gpu"] for p in points}):
        series = sorted((p["gpus"], p["tokens_per_second"]) for p in points if p["gpu"] == gpu)
        figure.add_trace(
            go.Scatter(
                x=[s[0] for s in series], y=[s[1] for s in series], mode="lines+markers", name=gpu
            )
        )
    return _style(
        figure,
        "Throughput vs GPU count, per GPU model",
        xaxis_title="GPUs (count)",
        yaxis_title="Throughput (tokens/s)",
        xaxis_type="log",
        yaxis_type="log",
    )


def memory_figure(memory: dict[str, Any], label: str) -> go.Figure:
    """GiB per GPU by part for the recommended configuration, against capacity."""
    parts = [
        ("weights_gib", "Weights"),
        ("gradients_gib", "Gradients"),
        ("optimizer_gib", "Optimizer states"),
        ("activations_gib", "Activations"),
        ("overhead_gib", "Framework overhead"),
    ]
    figure = go.Figure()
    for key, name in parts:
        figure.add_trace(go.Bar(name=name, x=[memory[key]], y=[label], orientation="h"))
    figure.add_vline(
        x=memory["capacity_gib"],
        line_dash="dash",
        line_color="#b00",
        annotation_text=f"capacity {memory['capacity_gib']:.0f} GiB",
    )
    return _style(
        figure,
        "Memory per GPU of the cheapest option",
        barmode="stack",
        xaxis_title="Memory per GPU (GiB)",
    )
