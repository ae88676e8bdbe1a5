"""Plan charts: distinct colours for many lines, readable log ticks, names in words."""

from planner.core.chart_text import chart_data, chart_finding
from planner.core.formatting import usd
from planner.plans import charts


def _option(rank: int, option: str, hours: float, usd: float) -> dict:
    return {"rank": rank, "provider": "aws", "region": "us-east-1", "instance_type": "p5.48xlarge",
            "nodes": 2.0, "gpus": 16.0, "gpu": "H100", "purchase_option": option, "tp": 1.0,
            "pp": 1.0, "dp": 16.0, "zero_stage": 1.0, "time_to_train_hours": hours,
            "total_usd": usd, "compute_usd": usd, "storage_usd": 0.0, "egress_usd": 0.0,
            "infeasible_reason": "", "is_pareto": rank == 1}


def test_throughput_of_eighteen_gpus_gets_eighteen_colours_and_readable_ticks() -> None:
    points = [{"gpu": f"GPU {i}", "gpus": float(n), "tokens_per_second": 1000.0 * n * (i + 1)}
              for i in range(18) for n in (8, 64, 512)]
    figure = charts.scaling_figure(points)
    assert len(figure.data) == 18
    assert len(set(figure.layout.colorway[:18])) == 18
    assert list(figure.layout.yaxis.ticktext) == ["10k", "100k", "1M", "10M"]
    # 8 to 512 GPUs spans under two decades: 1-2-5 steps, not Plotly's "2 3 4 5" digits.
    assert list(figure.layout.xaxis.ticktext) == ["5", "10", "20", "50", "100", "200", "500",
                                                  "1k"]


def test_pareto_names_purchase_options_in_words_and_ticks_in_days() -> None:
    options = [_option(1, "on_demand", 240.0, 100_000.0), _option(2, "spot", 480.0, 60_000.0)]
    figure = charts.pareto_figure(options)
    assert {t.name for t in figure.data} == {"On-demand", "Spot / preemptible", "Pareto front"}
    assert figure.layout.xaxis.type == "log"
    assert list(figure.layout.xaxis.ticktext) == ["10", "15", "20"]  # narrow: round steps
    assert "10.0 days" in figure.data[0].text[0] and "$100,000" in figure.data[0].text[0]


def test_the_pareto_front_runs_through_plotted_points_and_none_lies_below_it() -> None:
    # A stale is_pareto flag (from rows not plotted) must not pull the line off the markers.
    options = [_option(1, "on_demand", 240.0, 100_000.0), _option(2, "spot", 480.0, 60_000.0),
               {**_option(3, "on_demand", 300.0, 150_000.0), "is_pareto": True},
               {**_option(4, "on_demand", 200.0, 90_000.0), "is_pareto": False}]
    figure = charts.pareto_figure(options)
    front = next(t for t in figure.data if t.name == "Pareto front")
    plotted = {(x, y) for t in figure.data if t.name != "Pareto front"
               for x, y in zip(t.x, t.y, strict=True)}
    assert set(zip(front.x, front.y, strict=True)) <= plotted
    assert (float(f"{200.0 / 24:.5g}"), 90_000.0) in set(zip(front.x, front.y, strict=True))
    for x, y in plotted:
        assert not any(fx > x and fy > y for fx, fy in zip(front.x, front.y, strict=True))


def test_cheapest_offers_are_distinct_offers_not_one_offer_in_many_regions() -> None:
    east = _option(1, "on_demand", 240.0, 100_000.0)
    same_elsewhere = [{**east, "rank": 2 + i, "region": f"region-{i}"} for i in range(9)]
    others = [{**_option(20 + i, "on_demand", 240.0, 110_000.0 + i), "nodes": 3.0 + i}
              for i in range(12)]
    figure = charts.cost_breakdown_figure([east, *same_elsewhere, *others])
    labels = list(figure.data[0].x)
    assert len(labels) == len(set(labels)) == 10
    assert labels[:2] == ["#1", "#20"]
    assert "also in region-0" in figure.data[0].customdata[0]
    assert figure.layout.title.text == "Cost breakdown of the 10 cheapest acceptable offers"


def test_cost_breakdown_labels_are_short_ranks_with_the_option_on_hover() -> None:
    figure = charts.cost_breakdown_figure([_option(1, "on_demand", 240.0, 100_000.0)])
    assert list(figure.data[0].x) == ["#1"]
    assert "p5.48xlarge" in figure.data[0].customdata[0]


def test_pareto_draws_each_offer_once_in_its_cheapest_region_as_svg() -> None:
    east = _option(1, "on_demand", 240.0, 100_000.0)
    regions = ["us-west-2", "eu-west-1", "eu-central-1", "ap-south-1", "sa-east-1"]
    others = [{**east, "rank": 2 + i, "region": r, "is_pareto": False, "total_usd": 100_001.0 + i}
              for i, r in enumerate(regions)]
    other_layout = {**east, "rank": 9, "tp": 2.0, "dp": 8.0, "total_usd": 120_000.0}
    figure = charts.pareto_figure([*reversed(others), east, other_layout])
    markers = figure.data[0]
    assert markers.type == "scatter"  # SVG: shown without WebGL
    assert list(markers.y) == [100_000.0, 120_000.0]  # the cheapest region stands for the rest
    assert markers.text[0].startswith("AWS us-east-1 ")
    assert markers.text[0].endswith("also in us-west-2, eu-west-1, eu-central-1, ap-south-1,"
                                     "<br>sa-east-1")
    assert "also in" not in markers.text[1]


def test_throughput_series_differ_in_colour_and_shape_and_stay_inside_the_plot() -> None:
    names = ["Instinct MI300X OAM-192GB", "GeForce RTX 4090 PCIe-24GB"] + [
        f"GPU {i}" for i in range(28)]
    points = [{"gpu": name, "gpus": float(n), "tokens_per_second": 900.0 * n * (i + 1)}
              for i, name in enumerate(names) for n in (1, 8, 2048)]
    figure = charts.scaling_figure(points)
    styles = [(t.marker.color, t.marker.symbol) for t in figure.data]
    assert len(set(styles)) == 30  # 30 series: more than the 24 colours, still no two alike
    assert len({t.marker.color for t in figure.data[:24]}) == 24
    mi300x = next(t for t in figure.data if t.name == names[0])
    assert "<b>Instinct MI300X OAM-192GB</b>" in mi300x.hovertemplate  # never cut at 15
    assert mi300x.hovertemplate.endswith("<extra></extra>")
    x_low, x_high = figure.layout.xaxis.range
    y_low, y_high = figure.layout.yaxis.range
    assert x_low < 0 < 3.3113 < x_high  # log10(1) and log10(2048), with room
    assert y_low < 2.9542 and y_high > 7.7436  # log10(900) and log10(900 * 2048 * 30)
    assert figure.layout.height >= 110 + 21 * 30  # the whole legend, no scrolling
    assert "Highest throughput 55.3 M tokens/s on 2,048 × GPU 27" in figure.layout.meta[
        "finding"]


def test_the_caption_and_data_table_give_the_cards_dollars() -> None:
    # The worked example's card said $223,569 and the chart under it "lowest 223,570".
    figure = charts.pareto_figure([_option(1, "on_demand", 240.0, 223_569.4),
                                   {**_option(2, "on_demand", 120.0, 519_041.2), "nodes": 4.0}])
    document = figure.to_plotly_json()
    finding = chart_finding(document)
    assert "223,569" in finding and "519,041" in finding
    assert any(row[2] == usd(223_569.4).lstrip("$") for row in chart_data(document).rows)
