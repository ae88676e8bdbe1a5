"""Plotly figures for the catalog and price pages, built from plain data (no requests, no ORM)."""

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.colors import qualitative

from planner.core.formatting import PALETTE, label, log_axis
from pricing.selectors import GpuPeaks, GpuPoint, RegionPrice, precision_unit

_LAYOUT = {
    "template": "plotly_white",
    "margin": {"l": 60, "r": 20, "t": 60, "b": 60},
    "height": 460,
    "font": {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 12},
    "title": {"font": {"size": 14}, "x": 0.01},
}
USD_PER_GPU_HOUR = "$/GPU-hour"


def _style(figure: go.Figure, title: str, **layout: object) -> go.Figure:
    figure.update_layout(_LAYOUT)
    figure.update_layout(title_text=title, **layout)
    return figure


def peak_title(points: Sequence[GpuPoint], note: str = "") -> str:
    """'Peak dense BF16 (TFLOPS)', or 'Peak dense BF16 or FP16 (TFLOPS)' when some fall back;
    a note joins the unit: 'Peak dense BF16 (TFLOPS, log scale)'."""
    precisions = list(dict.fromkeys(p.precision for p in points)) or ["bf16"]
    unit = precision_unit(precisions[0]) + (f", {note}" if note else "")
    return f"Peak dense {' or '.join(p.upper() for p in precisions)} ({unit})"


def price_performance_scatter(points: Sequence[GpuPoint]) -> go.Figure:
    """Peak throughput against the cheapest on-demand $/GPU-hour, one labelled point per GPU."""
    unit = precision_unit(points[0].precision) if points else "TFLOPS"
    points = [p for p in points if p.usd_per_gpu_hour > 0]  # a log axis has no 0
    figure = go.Figure(go.Scatter(
        name="GPUs",
        x=[p.usd_per_gpu_hour for p in points],
        y=[p.peak_tflops for p in points],
        text=[p.name for p in points],
        customdata=[[p.precision.upper(), p.offer] for p in points],
        # Names in the hover text only: printed labels of neighbouring cheap GPUs overlap.
        mode="markers",
        marker={"size": 10, "color": "#2563eb", "line": {"width": 1, "color": "#fff"}},
        hovertemplate=(
            "<b>%{text}</b><br>%{y:,.1f} " + unit + " %{customdata[0]}<br>"
            "$%{x:.3f}/GPU-hour<br>%{customdata[1]}<extra></extra>"
        ),
    ))
    return _style(
        figure,
        "Peak throughput vs cheapest on-demand price",
        # Log axes: prices span 0.1-10 $/GPU-hour and peaks 60-2,500 TFLOPS.
        xaxis={**log_axis([p.usd_per_gpu_hour for p in points],
                          f"Cheapest on-demand price ({USD_PER_GPU_HOUR}, log scale)"),
               "automargin": True},
        yaxis={**log_axis([p.peak_tflops for p in points], peak_title(points, "log scale")),
               "automargin": True},
        showlegend=False,
    )


def tflops_per_dollar_bar(points: Sequence[GpuPoint]) -> go.Figure:
    """Peak throughput per $/GPU-hour as horizontal bars, best at the top."""
    unit = precision_unit(points[0].precision) if points else "TFLOPS"
    priced = [p for p in points if p.usd_per_gpu_hour > 0]  # never divide by a bad price
    ranked = sorted(priced, key=lambda p: p.peak_tflops / p.usd_per_gpu_hour, reverse=True)
    figure = go.Figure(go.Bar(
        name=f"{unit} per $/GPU-hour",
        orientation="h",
        y=[p.name for p in ranked],
        x=[p.peak_tflops / p.usd_per_gpu_hour for p in ranked],
        customdata=[[p.precision.upper(), p.usd_per_gpu_hour] for p in ranked],
        marker={"color": "#059669"},
        hovertemplate=(
            "<b>%{y}</b><br>%{x:,.0f} " + unit + " %{customdata[0]} per $/GPU-hour"
            "<br>at $%{customdata[1]:.3f}/GPU-hour<extra></extra>"
        ),
    ))
    return _style(
        figure,
        f"{peak_title(points)} per cheapest on-demand $/GPU-hour",
        xaxis={"title": {"text": f"{unit} per {USD_PER_GPU_HOUR}"}, "automargin": True},
        yaxis={"title": {"text": "GPU"}, "autorange": "reversed", "automargin": True},
        height=max(460, 60 + 24 * len(ranked)),
        showlegend=False,
    )


def compare_peaks_bar(gpus: Sequence[GpuPeaks]) -> go.Figure:
    """Dense peak per precision, one bar group per precision and one colour per GPU."""
    keys = list(gpus[0].peaks) if gpus else []
    labels = [f"{key.upper()} ({precision_unit(key)})" for key in keys]
    figure = go.Figure([
        go.Bar(
            name=gpu.name, x=labels, y=[gpu.peaks[key] for key in keys],
            marker={"color": PALETTE[i % len(PALETTE)]},
            hovertemplate="<b>" + gpu.name + "</b><br>%{x}: %{y:,.1f}<extra></extra>",
        )
        for i, gpu in enumerate(gpus)
    ])
    return _style(
        figure,
        "Peak dense throughput by precision",
        barmode="group",
        xaxis={"title": {"text": "Precision (unit)"}, "automargin": True},
        yaxis={"title": {"text": "Peak dense throughput (TFLOPS; INT8 in TOPS)"},
               "automargin": True},
        legend={"orientation": "h", "y": -0.25},
    )


def instance_prices_bar(prices: Sequence[RegionPrice]) -> go.Figure:
    """Current $/instance-hour per region, one bar per purchase option."""
    options = list(dict.fromkeys(p.purchase_option for p in prices))
    # A colour per series (a dozen payment options outnumber the 10-colour palette).
    colours = qualitative.Dark24
    figure = go.Figure([
        go.Bar(
            name=label(option),
            x=[p.region for p in prices if p.purchase_option == option],
            y=[p.usd_per_hour for p in prices if p.purchase_option == option],
            marker={"color": colours[i % len(colours)]},
            hovertemplate="%{x}<br>$%{y:,.3f}/hour<extra>" + label(option) + "</extra>",
        )
        for i, option in enumerate(options)
    ])
    return _style(
        figure,
        "Current price per region and purchase option",
        # Side by side, one bar per purchase and payment option: never stacked (a stack read
        # as one price several times the on-demand rate).
        barmode="group",
        height=560,
        xaxis={"title": {"text": "Region"}, "tickangle": -40, "automargin": True},
        yaxis={"title": {"text": "Price ($/instance-hour)"}, "automargin": True,
               "rangemode": "tozero"},
        # Below the plot: a dozen payment options as a legend above it ran into the title.
        legend={"orientation": "h", "x": 0, "y": -0.3, "yanchor": "top"},
    )
