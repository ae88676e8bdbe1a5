import json

import pytest
from plotly.utils import PlotlyJSONEncoder

from pricing import charts
from pricing.selectors import GpuPeaks, GpuPoint, RegionPrice

POINTS = [
    GpuPoint("H100 SXM5-80GB", "bf16", 989.5, 2.0, "Lambda us-east-1 gpu_8x_h100"),
    GpuPoint("A100 SXM4-80GB", "bf16", 312.0, 1.2, "AWS us-east-1 p4de.24xlarge"),
    GpuPoint("V100 SXM2-16GB", "fp16", 125.0, 0.5, "Vast.ai somewhere 1x-V100"),
]


def test_scatter_names_each_gpu_in_its_hover_text_not_on_the_plot() -> None:
    figure = charts.price_performance_scatter(POINTS)
    [trace] = figure.data
    assert trace.type == "scatter"
    assert list(trace.text) == [p.name for p in POINTS]
    assert list(trace.x) == [2.0, 1.2, 0.5]
    assert list(trace.y) == [989.5, 312.0, 125.0]
    # Printed labels of neighbouring cheap GPUs overlapped; names show on hover.
    assert trace.mode == "markers"
    assert "%{text}" in trace.hovertemplate


def test_scatter_log_axes_have_readable_ticks() -> None:
    figure = charts.price_performance_scatter(POINTS)
    assert figure.layout.xaxis.type == "log" and figure.layout.yaxis.type == "log"
    # Not Plotly's "2 3 4 5 ... 1 2" minor digits: 1-2-5 steps within two decades.
    assert list(figure.layout.xaxis.ticktext) == ["0.5", "1", "2"]
    assert list(figure.layout.yaxis.ticktext) == ["100", "200", "500", "1k"]


def test_scatter_axis_titles_carry_units_and_the_fp16_fallback() -> None:
    figure = charts.price_performance_scatter(POINTS)
    # one unit, said once: not "$/GPU-hour (USD) (log scale)"
    assert figure.layout.xaxis.title.text == "Cheapest on-demand price ($/GPU-hour, log scale)"
    assert "(TFLOPS, log scale)" in figure.layout.yaxis.title.text
    assert "BF16 or FP16" in figure.layout.yaxis.title.text


def test_scatter_labels_a_single_precision_plainly() -> None:
    figure = charts.price_performance_scatter(POINTS[:2])
    assert figure.layout.yaxis.title.text == "Peak dense BF16 (TFLOPS, log scale)"


def test_int8_is_labelled_in_tops() -> None:
    points = [GpuPoint("H100 SXM5-80GB", "int8", 1979.0, 2.0, "x")]
    figure = charts.price_performance_scatter(points)
    assert "(TOPS, log scale)" in figure.layout.yaxis.title.text


def test_tflops_per_dollar_bars_are_ranked_best_first() -> None:
    figure = charts.tflops_per_dollar_bar(POINTS)
    [trace] = figure.data
    assert trace.type == "bar" and trace.orientation == "h"
    assert list(trace.y) == ["H100 SXM5-80GB", "A100 SXM4-80GB", "V100 SXM2-16GB"]
    assert list(trace.x) == pytest.approx([494.75, 260.0, 250.0])
    assert figure.layout.xaxis.title.text == "TFLOPS per $/GPU-hour"
    assert figure.layout.yaxis.title.text == "GPU"


def test_empty_inputs_still_build_figures() -> None:
    assert len(charts.price_performance_scatter([]).data) == 1
    assert len(charts.tflops_per_dollar_bar([]).data) == 1


def test_compare_chart_has_one_trace_per_gpu_and_a_group_per_precision() -> None:
    gpus = [
        GpuPeaks("H100", {"fp16": 989.5, "int8": 1979.0}),
        GpuPeaks("A100", {"fp16": 312.0, "int8": 624.0}),
    ]
    figure = charts.compare_peaks_bar(gpus)
    assert [t.name for t in figure.data] == ["H100", "A100"]
    assert list(figure.data[0].x) == ["FP16 (TFLOPS)", "INT8 (TOPS)"]
    assert figure.layout.barmode == "group"
    assert "TFLOPS" in figure.layout.yaxis.title.text


def test_instance_chart_groups_regions_by_purchase_option() -> None:
    prices = [
        RegionPrice("us-east-1", "On-demand", 32.77),
        RegionPrice("us-west-2", "On-demand", 32.77),
        RegionPrice("us-east-1", "Spot / preemptible", 12.0),
    ]
    figure = charts.instance_prices_bar(prices)
    assert [t.name for t in figure.data] == ["On-demand", "Spot / preemptible"]
    assert list(figure.data[0].x) == ["us-east-1", "us-west-2"]
    assert list(figure.data[1].y) == [12.0]
    assert figure.layout.barmode == "group"
    assert figure.layout.yaxis.title.text == "Price ($/instance-hour)"
    assert figure.layout.xaxis.title.text == "Region"


def test_figures_serialize_with_plotlys_encoder() -> None:
    figure = charts.price_performance_scatter(POINTS)
    payload = json.loads(json.dumps(figure, cls=PlotlyJSONEncoder))
    assert payload["data"][0]["type"] == "scatter"
    assert payload["layout"]["xaxis"]["type"] == "log"
