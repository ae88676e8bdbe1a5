"""Every chart's text alternative: a one-sentence finding and its data as a table."""

import json

import numpy as np
import plotly.graph_objects as go
from plotly.utils import PlotlyJSONEncoder

from planner.core.chart_text import MAX_ROWS, chart_data, chart_finding, chart_title


def _encoded(figure: go.Figure) -> dict:
    """The figure as a page receives it (typed arrays and all)."""
    return json.loads(json.dumps(figure.to_plotly_json(), cls=PlotlyJSONEncoder))


def test_finding_names_the_lowest_and_highest_point_with_the_axis_unit() -> None:
    figure = go.Figure(go.Bar(x=["A100", "H100", "L4"], y=np.array([1.5, 3.25, 0.5])),
                       layout={"title": {"text": "Price<br>per GPU"},
                               "yaxis": {"title": {"text": "$/GPU-hour"}}})
    finding = chart_finding(_encoded(figure))
    assert finding == "$/GPU-hour: highest 3.25 (H100), lowest 0.5 (L4), over 3 points."
    assert chart_title(_encoded(figure)) == "Price per GPU"


def test_horizontal_bars_read_their_values_on_x_and_a_stated_finding_wins() -> None:
    bars = go.Figure(go.Bar(y=["a", "b"], x=[10, 20], orientation="h"),
                     layout={"xaxis": {"title": {"text": "TFLOPS per $"}}})
    assert chart_finding(_encoded(bars)) == (
        "TFLOPS per $: highest 20 (b), lowest 10 (a), over 2 points.")
    bars.update_layout(meta={"finding": "b gives twice the compute per dollar of a."})
    assert chart_finding(_encoded(bars)) == "b gives twice the compute per dollar of a."


def test_several_series_name_the_series_and_the_position_on_the_other_axis() -> None:
    figure = go.Figure([go.Scatter(x=[8, 1024], y=[2e4, 1.73e7], name="B200"),
                        go.Scatter(x=[8, 64], y=[3000.0, 9000.0], name="T4")],
                       layout={"xaxis": {"title": {"text": "GPUs (count)"}},
                               "yaxis": {"title": {"text": "Throughput (tokens/s)"}}})
    assert chart_finding(_encoded(figure)) == (
        "Throughput (tokens/s): highest 17.3 M (B200, 1,024 GPUs (count)), lowest 3,000 "
        "(T4, 8 GPUs (count)), over 4 points.")


def test_data_table_has_a_row_per_point_capped_and_counts_them_all() -> None:
    n = MAX_ROWS + 20
    figure = go.Figure([go.Scatter(x=np.arange(n), y=np.arange(n) * 0.5, name="demand"),
                        go.Scatter(x=[1], y=[2], name="peak")],
                       layout={"xaxis": {"title": {"text": "Hour"}},
                               "yaxis": {"title": {"text": "GPUs"}}})
    data = chart_data(_encoded(figure))
    assert data.header == ("Series", "Hour", "GPUs")
    assert len(data.rows) == MAX_ROWS and data.n_points == n + 1
    assert data.rows[3] == ("demand", "3", "1.5")


def test_a_figure_without_numbers_still_gets_a_sentence() -> None:
    assert chart_finding({"data": [], "layout": {"title": {"text": "Empty"}}}) == (
        "Empty: the data is in the table below.")


def test_an_hourly_series_given_as_start_and_step_reads_as_dates() -> None:
    figure = {"data": [{"type": "scatter", "name": "A100 demand", "x0": "2024-01-01 04:00:00",
                        "dx": 3_600_000, "y": [3.0, 9.5, 1.0]},
                       {"type": "scatter", "name": "Daily mean",
                        "x": ["2024-01-01T00:00:00+00:00", "2024-01-02T00:00:00+00:00"],
                        "y": [2.0, 4.0]}],
              "layout": {"title": {"text": "Demand"}, "xaxis": {"title": {"text": "Hour (UTC)"}},
                         "yaxis": {"title": {"text": "GPUs"}}}}
    data = chart_data(figure)
    assert [row[1] for row in data.rows] == ["2024-01-01 04:00", "2024-01-01 05:00",
                                             "2024-01-01 06:00", "2024-01-01", "2024-01-02"]
    assert chart_finding(figure) == (
        "GPUs: highest 9.5 (A100 demand, 2024-01-01 05:00), lowest 1 (A100 demand, "
        "2024-01-01 06:00), over 5 points.")


def test_a_finding_counts_its_points_with_a_separator() -> None:
    # the purchase-mix demand chart said "over 1404 points"
    figure = go.Figure(go.Scatter(x=list(range(1404)), y=[float(i) for i in range(1404)]),
                       layout={"yaxis": {"title": {"text": "Average concurrent GPUs"}}})
    assert chart_finding(_encoded(figure)).endswith("over 1,404 points.")
