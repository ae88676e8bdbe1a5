import numpy as np
import pandas as pd
import pytest

from planner.purchase_mix import charts
from planner.purchase_mix.core.breakdown import DurationHistogram, savings_steps
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.hindsight import hindsight_replay
from planner.purchase_mix.core.offers import CommitmentOption, GpuOffer
from planner.purchase_mix.core.replay import TypeDecision, replay_mix


@pytest.fixture
def recommendation():
    hours = pd.date_range("2024-01-01", periods=24 * 14, freq="h", tz="UTC", name="hour")
    base = 16 + 8 * np.sin(np.arange(len(hours)) / 24 * 2 * np.pi)
    firm = pd.DataFrame({"A100": base, "L4": np.full(len(hours), 2.0)}, index=hours)
    spare = pd.DataFrame({"A100": np.full(len(hours), 4.0), "L4": np.zeros(len(hours))},
                         index=hours)
    demand = HourlyDemand(firm, spare, {"A100": 8.0})
    offers = [
        GpuOffer("A100", "aws", "us-east-1", "p4d", 8, 32.0,
                 (CommitmentOption("reserved_1y", 1.0, 20.0),), 10.0, 0.0001),
        GpuOffer("L4", "gcp", "us-central1", "g2", 1, 1.0),
    ]
    return hindsight_replay(demand, offers)


def _titles(figure):
    return figure.layout.xaxis.title.text, figure.layout.yaxis.title.text


def test_demand_curve_has_types_total_and_commitment_lines(recommendation):
    figure = charts.demand_curve(recommendation.demand, recommendation)
    names = [trace.name for trace in figure.data]
    assert names[:3] == ["A100 demand", "L4 demand", "Total demand"]
    committed = [trace for trace in figure.data if "committed" in trace.name]
    assert len(committed) == 1 and committed[0].y[0] == committed[0].y[1] > 0
    assert _titles(figure) == ("Hour (UTC)", "Average concurrent GPUs")


def test_charts_draw_what_to_buy_and_label_the_hindsight_optimum_as_reference(recommendation):
    hindsight = recommendation.plans[0]
    offers = [plan.offer for plan in recommendation.plans]
    bought = replay_mix([TypeDecision("A100", (1,), True), TypeDecision("L4", (), False)],
                        recommendation.demand, offers)
    figures = charts.history_figures(
        demand=bought.demand, purchase=bought, analysis={},
        daily_gpus=pd.Series([1.0]), projected_gpus=pd.Series([1.0]), growth_per_year=None,
    )
    figure = figures["chart-cost"]
    curve, to_buy, reference = figure.data
    assert to_buy.name == "A100 what to buy (8 GPUs)" and set(to_buy.x) == {8}
    assert reference.name == "A100 lowest cost in hindsight (reference)"
    assert reference.x[0] == sum(hindsight.decision.levels) * 8 != 8
    assert min(curve.y) == reference.y[0]
    assert _titles(figure) == ("Committed GPUs", "Total cost over the history (USD)")
    assert "chart-durations" not in figures
    committed = [t for t in figures["chart-demand"].data if "committed" in t.name]
    assert [(t.name, list(t.y)) for t in committed] == [
        ("A100 committed, what to buy (8 GPUs)", [8, 8])]


def test_mix_is_stacked_and_adds_up_to_demand(recommendation):
    figure = charts.mix_over_time(recommendation)
    assert [trace.name for trace in figure.data] == ["Committed", "On-demand", "Spot"]
    assert {trace.stackgroup for trace in figure.data} == {"mix"}
    stacked = sum(np.asarray(trace.y) for trace in figure.data)
    total = recommendation.demand.total_gpus.sum(axis=1).to_numpy()
    np.testing.assert_allclose(stacked, total)
    assert figure.layout.yaxis.title.text == "Average concurrent GPUs"


def test_waterfall_ends_at_the_mix_cost(recommendation):
    figure = charts.savings_waterfall(savings_steps(recommendation))
    (trace,) = figure.data
    assert list(trace.measure) == ["absolute", "relative", "relative", "total"]
    assert trace.y[0] + trace.y[1] + trace.y[2] == pytest.approx(recommendation.total.cost_usd)
    assert figure.layout.yaxis.title.text == "Cost over the history (USD)"


def test_duration_histogram_with_fit_and_ks_in_legend():
    histogram = DurationHistogram((0.1, 1.0, 10.0), (5, 3), (4.5, 3.2))
    figure = charts.duration_histogram(histogram, 0.042)
    bars, fit = figure.data
    assert list(bars.y) == [5, 3] and list(fit.y) == [4.5, 3.2]
    assert "KS D = 0.042" in fit.name
    assert figure.layout.xaxis.type == "log"
    assert _titles(figure) == ("Job duration (hours, log scale)", "Jobs per bin")


def test_trend_and_team_charts_have_units():
    days = pd.date_range("2024-01-01", periods=3, freq="D", tz="UTC")
    figure = charts.demand_trend(pd.Series([1.0, 2, 3], index=days),
                                 pd.Series([4.0], index=days[:1]), 0.25)
    assert figure.data[1].name == "Projection (+25%/year)"
    assert _titles(figure) == ("Day (UTC)", "Average concurrent GPUs")
    bar = charts.team_bar({"ml": 10.0, "cv": 5.0})
    assert list(bar.data[0].x) == ["ml", "cv"]
    assert bar.layout.yaxis.title.text == "GPU-hours"


def test_the_trend_chart_projects_only_what_the_page_says_it_fits():
    """Under 3 whole days the sizing fits no trend ("too short to fit") and the chart draws
    no projection; from 3 days both fit and the projection is drawn."""
    def days(n):
        index = pd.date_range("2025-01-01", periods=n, freq="D", tz="UTC")
        return pd.Series(np.linspace(10, 12, n), index=index)

    future = days(30)
    short = charts.demand_trend(days(2), future, None)
    assert [trace.name for trace in short.data] == ["Daily mean demand"]
    assert "too short to project" in short.layout.title.text
    long = charts.demand_trend(days(5), future, None)
    assert [trace.name for trace in long.data] == ["Daily mean demand",
                                                   "Projection (fitted trend)"]
