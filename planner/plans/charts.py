"""Plotly figures of a plan: time vs cost with the Pareto front, cost parts, scaling, memory.

The figures carry no template of their own: the page ships plotly_white once for all of them
(presenters.figure_template_script); setting it on each figure took most of a page's build.
"""

from typing import Any

import numpy as np
import plotly.graph_objects as go

from planner.core.chart_sets import breakdown_set, carbon_set, pareto_set
from planner.core.formatting import (
    PALETTE,
    count,
    duration,
    label,
    layout_label,
    log_axis,
    log_range,
    rate,
    series_style,
    usd,
)
from planner.core.purchase_options import PURCHASE_OPTION_COLOURS
from planner.plans.core.ranking import pareto_mask

# Up to this many points the time-cost cloud is drawn as SVG, which every browser shows;
# beyond it WebGL keeps the page responsive (a browser without WebGL shows Plotly's notice).
SVG_POINT_LIMIT = 5000



def _style(figure: go.Figure, title: str, **layout: Any) -> go.Figure:
    figure.update_layout(title=title, **{
        "height": 420, "margin": {"l": 70, "r": 20, "t": 50, "b": 60},
        "colorway": list(PALETTE), **layout})
    return figure


def _hover(row: dict[str, Any]) -> str:
    return (
        f"{label(row['provider'])} {row['region']} {row['instance_type']} × "
        f"{count(row['nodes'])}"
        f"<br>{count(row['gpus'])} × {row['gpu']} · {label(row['purchase_option'])}"
        f"<br>{layout_label(row)}"
        f"<br>{duration(row['time_to_train_hours'])} · {usd(row['total_usd'])}"
    )


def _position(value: float) -> float:
    # A marker's position to 5 significant digits (sub-pixel on a log axis): the hover text
    # gives the exact figures, and 17-digit floats were a third of the page's chart data.
    # From 1,000 up, whole units, as the cards print dollars and kg: the chart's caption and
    # data table read these, and 5 digits made $223,569 on a card $223,570 under the chart.
    return float(round(value)) if abs(value) >= 1000 else float(f"{value:.5g}")


def _markers(rows: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    """The offers of pareto_set (each in its cheapest region), their hover text naming the
    other regions, cheapest first."""
    return [{**row, "hover": _hover(row) + _also_in([r for r, _ in row["other_regions"]])}
            for row in rows]


def _ids(rows: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> list[str]:
    # Each point's option (row_index of the plan document): the report charts the same ones.
    return [str(r.get("row_index", "")) for r in rows]


def _also_in(regions: list[str], per_line: int = 4) -> str:
    lines = [", ".join(regions[i:i + per_line]) for i in range(0, len(regions), per_line)]
    return "<br>also in " + ",<br>".join(lines) if regions else ""


def pareto_figure(options: list[dict[str, Any]]) -> go.Figure:
    """Every feasible offer as time (days) vs total cost (USD), in its cheapest region; the
    Pareto front as a line. SVG up to SVG_POINT_LIMIT markers, WebGL beyond."""
    figure = go.Figure()
    chosen = pareto_set(options)
    feasible = list(chosen.options)
    points = _markers(chosen.options)
    trace = go.Scatter if len(points) <= SVG_POINT_LIMIT else go.Scattergl
    for option in sorted({o["purchase_option"] for o in points}):
        rows = [o for o in points if o["purchase_option"] == option]
        figure.add_trace(
            trace(
                x=[_position(r["time_to_train_hours"] / 24) for r in rows],
                y=[_position(r["total_usd"]) for r in rows],
                mode="markers",
                name=label(option),
                marker={"color": PURCHASE_OPTION_COLOURS.get(option), "size": 6, "opacity": 0.6},
                text=[r["hover"] for r in rows],
                hoverinfo="text",
                ids=_ids(rows),
            )
        )
    # The front of the plotted markers themselves, so it runs through points on the chart.
    on_front = pareto_mask(np.array([p["time_to_train_hours"] for p in points], dtype=float),
                           np.array([p["total_usd"] for p in points], dtype=float))
    front = sorted((p for p, keep in zip(points, on_front, strict=True) if keep),
                   key=lambda o: o["time_to_train_hours"])
    figure.add_trace(
        go.Scatter(
            x=[_position(r["time_to_train_hours"] / 24) for r in front],
            y=[_position(r["total_usd"]) for r in front],
            mode="lines+markers",
            name="Pareto front",
            line={"color": "#cc0000"},
            text=[r["hover"] for r in front],
            hoverinfo="text",
        )
    )
    return _style(
        figure,
        chosen.title,
        meta={"caption": chosen.caption},
        xaxis=log_axis([r["time_to_train_hours"] / 24 for r in feasible], "Time to train (days)"),
        yaxis=log_axis([r["total_usd"] for r in feasible], "Total cost (USD)"),
    )


def cost_breakdown_figure(options: list[dict[str, Any]]) -> go.Figure:
    """Compute (useful steps, then failures, restarts and overhead), storage and egress USD of
    breakdown_set's offers (one offer sold in ten regions is one bar, its other regions in
    the hover text)."""
    chosen = breakdown_set(options)
    rows = list(chosen.options)
    # Short rank labels on the axis (long names overlapped); the option in the hover text.
    labels = [f"#{count(r['rank'])}" for r in rows]
    hover = [_hover(r) + _also_in([region for region, _ in r["other_regions"]]) for r in rows]
    figure = go.Figure()
    overhead = [r.get("overhead_usd") or 0.0 for r in rows]
    columns = {"steady": [r["compute_usd"] - o for r, o in zip(rows, overhead, strict=True)],
               "overhead": overhead, "storage": [r["storage_usd"] for r in rows],
               "egress": [r["egress_usd"] for r in rows]}
    for key, name in (
        ("steady", "Compute (useful steps)"),
        ("overhead", "Failures, restarts and overhead"),
        ("storage", "Storage"),
        ("egress", "Egress"),
    ):
        figure.add_trace(go.Bar(
            name=name, x=labels, y=columns[key], customdata=hover, ids=_ids(rows),
            hovertemplate="%{customdata}<br>" + name + ": $%{y:,.0f}<extra></extra>"))
    return _style(
        figure,
        chosen.title,
        meta={"caption": chosen.caption},
        barmode="stack",
        xaxis_title="Option (rank in the table below)",
        yaxis_title="Cost (USD)",
    )


def scaling_figure(points: list[dict[str, Any]]) -> go.Figure:
    """Best throughput per GPU model against GPU count (tokens/s): one colour and marker
    shape per model, every name in full (legend and hover), nothing past the plot."""
    figure = go.Figure()
    gpus = sorted({p["gpu"] for p in points})
    for i, gpu in enumerate(gpus):
        series = sorted((p["gpus"], p["tokens_per_second"]) for p in points if p["gpu"] == gpu)
        colour, symbol = series_style(i)
        figure.add_trace(
            go.Scatter(
                x=[s[0] for s in series], y=[s[1] for s in series], mode="lines+markers",
                name=gpu, line={"color": colour, "width": 1.5},
                marker={"color": colour, "symbol": symbol, "size": 7},
                cliponaxis=True,
                # The name in the body: Plotly cuts a trace name in the side box at 15 chars.
                hovertemplate="<b>" + gpu + "</b><br>%{x:,.0f} GPUs: %{y:,.0f} tokens/s"
                              "<extra></extra>",
            )
        )
    counts = [p["gpus"] for p in points]
    rates = [p["tokens_per_second"] for p in points]
    return _style(
        figure,
        "Throughput vs GPU count, per GPU model",
        xaxis={**log_axis(counts, "GPUs (count)"), "range": log_range(counts)},
        yaxis={**log_axis(rates, "Throughput (tokens/s)"), "range": log_range(rates)},
        # Tall enough for the whole legend beside the plot (it scrolled, hiding names).
        height=max(420, 110 + 21 * len(gpus)),
        legend={"title": {"text": "GPU model", "side": "top"}},
        meta={"finding": _scaling_finding(points)},
    )


def _scaling_finding(points: list[dict[str, Any]]) -> str:
    if not points:
        return "No GPU model fits this workload."
    best = max(points, key=lambda p: p["tokens_per_second"])
    models = len({p["gpu"] for p in points})
    return (f"Highest throughput {rate(best['tokens_per_second'], 'tokens/s')} on "
            f"{count(best['gpus'])} × {best['gpu']}, over {count(models)} GPU models and "
            f"{count(len(points))} configurations.")


def memory_figure(memory: dict[str, Any], label: str, title: str) -> go.Figure:
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
        title,
        barmode="stack",
        xaxis_title="Memory per GPU (GiB)",
    )


_CARD_MARKERS = {"cheapest_meeting_deadline": ("Cheapest acceptable", "diamond"),
                 "lowest_carbon": ("Lowest carbon", "star")}


def _power_trade(row: dict[str, Any]) -> str:
    """The power cap's trade against the same option uncapped ("" when uncapped)."""
    cap = row.get("power_cap")
    return f"<br>{cap['trade']['text']}" if cap else ""


def carbon_figure(options: list[dict[str, Any]],
                  recommendations: list[dict[str, Any]]) -> go.Figure:
    """carbon_set's options as expected CO2e (kg) vs total cost (USD), one trace per provider
    (each region its own point: the grid is what differs), the cheapest acceptable and
    lowest-carbon picks marked."""
    chosen = carbon_set(options)
    rows = list(chosen.options)
    figure = go.Figure()
    for provider in sorted({r["provider"] for r in rows}):
        mine = [r for r in rows if r["provider"] == provider]
        figure.add_trace(go.Scatter(
            x=[_position(r["co2e_kg"]) for r in mine], y=[_position(r["total_usd"]) for r in mine],
            mode="markers", name=label(provider), marker={"size": 6, "opacity": 0.6},
            text=[f"{_hover(r)} · {count(r['co2e_kg'])} kg CO2e" for r in mine],
            hoverinfo="text", ids=_ids(mine)))
    front = sorted((r for r in rows if r.get("is_carbon_pareto")), key=lambda r: r["co2e_kg"])
    figure.add_trace(go.Scatter(
        x=[_position(r["co2e_kg"]) for r in front], y=[_position(r["total_usd"]) for r in front],
        mode="lines+markers", name="Cost–emissions front", line={"color": "#4e9a06"},
        text=[f"{_hover(r)} · {count(r['co2e_kg'])} kg CO2e" for r in front], hoverinfo="text"))
    by_index = {o["row_index"]: o for o in rows}
    for card in recommendations:
        picked = by_index.get(card["row_index"])
        if card["key"] in _CARD_MARKERS and picked is not None:
            name, symbol = _CARD_MARKERS[card["key"]]
            figure.add_trace(go.Scatter(
                x=[_position(picked["co2e_kg"])], y=[_position(picked["total_usd"])],
                mode="markers", name=name, marker={"size": 14, "symbol": symbol,
                                                   "color": "#cc0000"},
                text=[f"{name}: {_hover(picked)} · {count(picked['co2e_kg'])} kg CO2e"
                      + _power_trade(picked)],
                hoverinfo="text"))
    capped = next((r["power_cap"] for r in rows if r.get("power_cap")), None)
    return _style(
        figure,
        chosen.title
        + (f" (GPUs capped at {capped['pct']:g} % power)" if capped else ""),
        meta={"caption": chosen.caption},
        xaxis=log_axis([r["co2e_kg"] for r in rows], "Expected emissions (kg CO2e)"),
        yaxis=log_axis([r["total_usd"] for r in rows], "Total cost (USD)"),
    )
