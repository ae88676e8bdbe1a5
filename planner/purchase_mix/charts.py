"""Plotly figures for the job-history page, built from core outputs (no requests, no ORM)."""

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from planner.core.formatting import PALETTE, log_axis
from planner.core.purchase_options import PURCHASE_OPTION_WORDS
from planner.purchase_mix.core.breakdown import (
    CostCurve,
    DurationHistogram,
    SavingsSteps,
    commitment_cost_curve,
    hourly_mix,
    savings_steps,
)
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.forecast import MIN_TREND_DAYS
from planner.purchase_mix.core.replay import MixReplay

_LAYOUT: dict[str, Any] = {
    "template": "plotly_white",
    "margin": {"l": 70, "r": 20, "t": 50, "b": 60},
    "height": 420,
    "font": {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 13},
    "legend": {"orientation": "h", "y": -0.2},
}
GPUS = "Average concurrent GPUs"
HOUR_UTC = "Hour (UTC)"
COLORS = PALETTE


def _color(index: int) -> str:
    return COLORS[index % len(COLORS)]


HOUR_MS = 3_600_000


def hourly_x(index: pd.Index) -> dict[str, Any]:
    """The x of an hourly series: its first hour and a one-hour step when the hours are
    regular (Plotly's x0/dx: every hour written out was most of a history page's megabyte),
    else every hour."""
    hour = pd.Timedelta(milliseconds=HOUR_MS)
    if (isinstance(index, pd.DatetimeIndex) and len(index) > 1
            and bool(((index[1:] - index[:-1]) == hour).all())):
        return {"x0": index[0].strftime("%Y-%m-%d %H:%M:%S"), "dx": HOUR_MS}
    return {"x": list(index)}


def demand_curve(demand: HourlyDemand, purchase: MixReplay) -> go.Figure:
    """Hourly demand per GPU type and in total; what to buy (the recommendation's committed
    GPUs) as horizontal lines. The hindsight reference is never drawn here."""
    total = demand.total_gpus
    hours = list(total.index)
    x = hourly_x(total.index)
    figure = go.Figure()
    for i, name in enumerate(demand.gpu_types):
        figure.add_trace(go.Scatter(
            name=f"{name} demand", **x, y=total[name].to_numpy(), mode="lines",
            line={"width": 1, "color": _color(i)},
            hovertemplate="%{x}<br>%{y:,.1f} GPUs<extra>" + name + "</extra>",
        ))
    if len(demand.gpu_types) > 1:
        figure.add_trace(go.Scatter(
            name="Total demand", **x, y=total.sum(axis=1).to_numpy(), mode="lines",
            line={"width": 1.5, "color": "#111827"},
        ))
    colors = {name: _color(i) for i, name in enumerate(demand.gpu_types)}
    for plan in purchase.plans:
        gpus = sum(plan.decision.levels) * plan.offer.gpus_per_instance
        if gpus == 0:
            continue
        figure.add_trace(go.Scatter(
            name=f"{plan.offer.gpu_type} committed, what to buy ({gpus} GPUs)",
            x=[hours[0], hours[-1]],
            y=[gpus, gpus], mode="lines",
            line={"dash": "dash", "width": 2, "color": colors.get(plan.offer.gpu_type)},
        ))
    figure.update_layout(
        **_LAYOUT, title={"text": "Hourly GPU demand and commitment levels"},
        xaxis={"title": {"text": HOUR_UTC}}, yaxis={"title": {"text": GPUS}, "rangemode": "tozero"},
    )
    return figure


def cost_curves(curves: Sequence[CostCurve], bought_gpus: Mapping[str, int]) -> go.Figure:
    """Total cost against the committed GPUs per type: what to buy as a vertical line, the
    lowest cost in hindsight (a reference) as a star."""
    figure = go.Figure()
    for i, curve in enumerate(curves):
        gpus = [level * curve.gpus_per_instance for level in curve.levels_instances]
        figure.add_trace(go.Scatter(
            name=f"{curve.gpu_type} ({PURCHASE_OPTION_WORDS.get(curve.term, curve.term)})",
            x=gpus, y=list(curve.cost_usd),
            mode="lines", line={"color": _color(i)},
            hovertemplate="%{x} GPUs committed<br>$%{y:,.0f}<extra></extra>",
        ))
        bought = bought_gpus.get(curve.gpu_type, 0)
        figure.add_trace(go.Scatter(
            name=f"{curve.gpu_type} what to buy ({bought} GPUs)", x=[bought, bought],
            y=[min(curve.cost_usd), max(curve.cost_usd)], mode="lines",
            line={"dash": "dash", "width": 2, "color": _color(i)},
        ))
        best = curve.best_level_instances
        figure.add_trace(go.Scatter(
            name=f"{curve.gpu_type} lowest cost in hindsight (reference)", x=[gpus[best]],
            y=[curve.cost_usd[best]],
            # The text is hover text: printed labels of several GPU types overlap.
            mode="markers", text=[f"lowest in hindsight: {gpus[best]} GPUs"],
            hovertemplate="%{text}<br>$%{y:,.0f}<extra>" + curve.gpu_type + "</extra>",
            marker={"size": 12, "symbol": "star", "color": _color(i)},
        ))
    figure.update_layout(
        **_LAYOUT, title={"text": "Total cost vs commitment level"},
        xaxis={"title": {"text": "Committed GPUs"}},
        yaxis={"title": {"text": "Total cost over the history (USD)"}},
    )
    return figure


def duration_histogram(histogram: DurationHistogram, ks_statistic: float | None) -> go.Figure:
    """Job counts per log-spaced duration bin with the fitted log-normal's expected counts."""
    edges = np.asarray(histogram.edges_hours)
    centres = np.sqrt(edges[:-1] * edges[1:])
    widths = edges[1:] - edges[:-1]
    fit_name = "Fitted log-normal"
    if ks_statistic is not None:
        fit_name += f" (KS D = {ks_statistic:.3f})"
    figure = go.Figure([
        go.Bar(name="Jobs", x=centres, y=list(histogram.counts), width=widths,
               marker={"color": "#93c5fd"},
               hovertemplate="%{x:.2f} h<br>%{y:,} jobs<extra></extra>"),
        go.Scatter(name=fit_name, x=centres, y=list(histogram.fitted_counts), mode="lines",
                   line={"color": "#dc2626", "width": 2}),
    ])
    figure.update_layout(
        **_LAYOUT, title={"text": "Job durations"}, bargap=0,
        xaxis=log_axis(list(centres), "Job duration (hours, log scale)"),
        yaxis={"title": {"text": "Jobs per bin"}},
    )
    return figure


def mix_over_time(purchase: MixReplay) -> go.Figure:
    """Stacked area: GPUs served by what to buy's commitments, on demand and spot, by hour."""
    mix = hourly_mix(purchase)
    x = hourly_x(mix.index)
    parts = (("committed_gpus", "Committed", "#059669"), ("on_demand_gpus", "On-demand",
             "#d97706"), ("spot_gpus", "Spot", "#7c3aed"))
    figure = go.Figure([
        go.Scatter(name=label, **x, y=mix[column].to_numpy(), mode="lines",
                   stackgroup="mix", line={"width": 0.5, "color": color})
        for column, label, color in parts
    ])
    figure.update_layout(
        **_LAYOUT, title={"text": "Purchase mix over time"},
        xaxis={"title": {"text": HOUR_UTC}}, yaxis={"title": {"text": GPUS}},
    )
    return figure


def savings_waterfall(steps: SavingsSteps) -> go.Figure:
    """All on-demand, minus commitment and spot savings, equals the mix's cost (USD)."""
    figure = go.Figure(go.Waterfall(
        name="Cost", orientation="v", measure=["absolute", "relative", "relative", "total"],
        x=["All on-demand", "Commitments", "Spot", "What to buy"],
        y=[steps.all_on_demand_cost_usd, -steps.commitment_savings_usd, -steps.spot_savings_usd,
           steps.cost_usd],
        texttemplate="%{y:$,.0f}", textposition="outside",
    ))
    figure.update_layout(
        **_LAYOUT, title={"text": "Savings vs all on-demand"}, showlegend=False,
        xaxis={"title": {"text": "Step"}},
        yaxis={"title": {"text": "Cost over the history (USD)"}},
    )
    return figure


def demand_trend(
    daily_gpus: pd.Series, projected_gpus: pd.Series, growth_per_year: float | None
) -> go.Figure:
    """Daily mean demand and its projection (fitted line or the chosen growth rate); no
    projection under MIN_TREND_DAYS whole days, where the sizing fits no trend either (the
    page says "too short to fit")."""
    label = "fitted trend" if growth_per_year is None else f"{growth_per_year * 100:+.0f}%/year"
    traces = [go.Scatter(name="Daily mean demand", x=list(daily_gpus.index),
                         y=daily_gpus.to_numpy(), mode="lines+markers", marker={"size": 4},
                         line={"color": "#2563eb"})]
    is_projected = len(daily_gpus) >= MIN_TREND_DAYS
    if is_projected:
        traces.append(go.Scatter(name=f"Projection ({label})", x=list(projected_gpus.index),
                                 y=projected_gpus.to_numpy(), mode="lines",
                                 line={"dash": "dot", "color": "#dc2626"}))
    figure = go.Figure(traces)
    title = "Demand trend" if is_projected else (
        f"Demand trend (under {MIN_TREND_DAYS} days: too short to project)")
    figure.update_layout(
        **_LAYOUT, title={"text": title},
        xaxis={"title": {"text": "Day (UTC)"}}, yaxis={"title": {"text": GPUS}},
    )
    return figure


def team_bar(gpu_hours_by_team: Mapping[str, float], limit: int = 20) -> go.Figure:
    """GPU-hours per team, largest first."""
    items = list(gpu_hours_by_team.items())[:limit]
    figure = go.Figure(go.Bar(
        name="GPU-hours", x=[name for name, _ in items], y=[value for _, value in items],
        marker={"color": "#059669"},
        hovertemplate="%{x}<br>%{y:,.0f} GPU-hours<extra></extra>",
    ))
    figure.update_layout(
        **_LAYOUT, title={"text": "Demand by team"}, showlegend=False,
        xaxis={"title": {"text": "Team"}}, yaxis={"title": {"text": "GPU-hours"}},
    )
    return figure


def history_figures(
    *,
    demand: HourlyDemand,
    purchase: MixReplay,
    analysis: Mapping[str, Any],
    daily_gpus: pd.Series,
    projected_gpus: pd.Series,
    growth_per_year: float | None,
) -> dict[str, go.Figure]:
    """Every figure of the history page, keyed by its element id."""
    curves = [
        curve for plan in purchase.plans
        if (curve := commitment_cost_curve(plan, purchase.demand)) is not None
    ]
    bought = {plan.offer.gpu_type: sum(plan.decision.levels) * plan.offer.gpus_per_instance
              for plan in purchase.plans}
    figures = {
        "chart-demand": demand_curve(demand, purchase),
        "chart-trend": demand_trend(daily_gpus, projected_gpus, growth_per_year),
        "chart-mix": mix_over_time(purchase),
        "chart-waterfall": savings_waterfall(savings_steps(purchase)),
    }
    if curves:
        figures["chart-cost"] = cost_curves(curves, bought)
    if analysis.get("duration_histogram"):
        durations = analysis.get("durations") or {}
        figures["chart-durations"] = duration_histogram(
            DurationHistogram(**analysis["duration_histogram"]), durations.get("ks_statistic")
        )
    if analysis.get("gpu_hours_by_team"):
        figures["chart-teams"] = team_bar(analysis["gpu_hours_by_team"])
    return figures
