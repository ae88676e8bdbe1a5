"""The purchase-mix report from documents old and new: the what-to-buy lines, when the
document has them, become the main table; an older document still gives a report."""

import pytest

from planner.reports.core.purchase_mix import report_from_history

LINE = {"gpu_type": "=H100", "provider": "aws", "region": "us-east-1",
        "instance_type": "p5.48xlarge", "term": "reserved_1y", "term_words": "1-year reserved",
        "payment_option": "no_upfront", "payment_words": "no upfront", "count": 2, "gpus": 16,
        "upfront_usd": 0.0, "usd_per_hour": 70.5, "recurring_usd_per_hour": 70.5,
        "starting": "now; review at renewal in 12 months"}
TYPE = {"gpu_type": "=H100", "spot_share_pct": 10.0, "committed_share_pct": 70.0,
        "on_demand_share_pct": 20.0, "off_spot_gpu_hours": 5.0,
        "alternative": {"usd_per_hour": 98.3, "words": "on-demand in aws us-east-1"}}
DOCUMENT = {
    "hindsight_reference": {"plans": [], "total": {"cost_usd": 900.0, "savings_usd": 350.0},
                            "n_hours": 48, "words": "knowing the future"},
    "hourly_demand": {"firm": {"hours": ["2024-01-01T00:00:00+00:00"],
                               "series": {"=H100": [16.0]}},
                      "interruptible": {"hours": [], "series": {}}},
}


def _report(document: dict) -> object:
    return report_from_history({"name": "jobs.csv", "document": document}, subject_id=4,
                               generated_at="2026-12-01T00:00:00")


def test_what_to_buy_lines_are_the_main_table() -> None:
    buy = {"lines": [LINE], "types": [TYPE], "upfront_usd": 0.0, "usd_per_hour": 70.5,
           "first_year_worst_case_usd": 700_000.0,
           "replay": {"plans": [], "total": {"cost_usd": 1000.0, "savings_usd": 250.0},
                      "n_hours": 48}}
    report = _report({**DOCUMENT, "what_to_buy": buy})
    main = report.main_table
    assert main.key == "what_to_buy"
    assert main.column("count") == (2,) and main.column("usd_per_hour") == (70.5,)
    assert [c.header for c in main.columns][6:10] == [
        "Instances (count)", "GPUs (count)", "Upfront (USD)", "Effective (USD/h)"]
    assert report.table("buy_types").column("committed_share_pct") == (70.0,)
    figures = {f.label: f.value for f in report.summary}
    assert figures["What to buy now: per hour"] == 70.5
    # The worst case is a saving, and the P10-week risk says over which hours.
    assert figures["What to buy now: first-year savings, worst case (mean of the worst 10 %)"] == (
        700_000.0)
    assert "Risk: savings over the hours replayed if every week were the P10 week" in figures
    assert figures["What to buy, replayed: cost over the history"] == 1000.0
    assert report.table("hindsight").note == "knowing the future"


@pytest.mark.parametrize("buy", [None, {"lines": [], "types": []}])
def test_without_purchases_the_mix_is_the_main_table(buy: dict | None) -> None:
    document = DOCUMENT if buy is None else {**DOCUMENT, "what_to_buy": buy}
    report = _report(document)
    assert report.main_table.key == "mix"
    assert report.table("demand").column("firm:=H100") == (16.0,)


def test_a_history_without_a_finished_analysis_has_no_report() -> None:
    with pytest.raises(ValueError, match="result: the history has no finished analysis"):
        report_from_history({"document": None}, subject_id=1, generated_at="x")


def test_sources_tell_two_reservations_of_one_term_and_payment_apart() -> None:
    row = {"gpu_type": "A100", "provider": "aws", "region": "us-east-1",
           "instance_type": "p4de.24xlarge", "purchase_option": "reserved_1y",
           "purchase_words": "1-year reservation", "payment_words": "all upfront",
           "usd_per_gpu_hour": 2.03, "basis": "listed", "as_of": "2025-11-30"}
    prices = [{**row, "offering_class": "standard"},
              {**row, "offering_class": "convertible", "usd_per_gpu_hour": 2.44},
              {**row, "purchase_option": "on_demand", "purchase_words": "on-demand",
               "payment_words": "no upfront", "offering_class": ""}]
    sources = _report({**DOCUMENT, "prices": prices}).table("sources")
    assert sources.column("purchase_option") == (
        "1-year reservation, all upfront, standard", "1-year reservation, all upfront, convertible",
        "on-demand")
    assert sources.column("basis") == ("listed",) * 3


def test_the_report_has_the_pages_duration_team_and_bought_charts() -> None:
    analysis = {"duration_histogram": {"edges_hours": [0.5, 2.0, 8.0],
                                       "counts": [3, 1], "fitted_counts": [2.5, 1.5]},
                "durations": {"ks_statistic": 0.125},
                "gpu_hours_by_team": {f"team-{i:02d}": float(i) for i in range(25)}}
    report = _report({**DOCUMENT, "analysis": analysis})
    charts = {chart.key: chart for chart in report.charts}
    assert list(charts) == ["demand", "costs", "bought", "durations", "teams"]
    durations = charts["durations"]
    assert durations.is_x_log and durations.series[0].x == (1.0, 4.0)  # bin centres (h)
    assert durations.title == "Job durations and the fitted log-normal (KS D = 0.125)"
    teams = charts["teams"]
    assert teams.title == "GPU-hours by team (top 20 of 25)"
    assert teams.categories[0] == "team-24" and teams.series[0].y[0] == 24.0
    assert [s.name for s in charts["bought"].series] == ["Committed", "On demand", "Spot"]


def test_a_usage_history_report_has_no_duration_or_team_chart() -> None:
    report = _report({**DOCUMENT, "analysis": {"duration_histogram": None}})
    assert [chart.key for chart in report.charts] == ["demand", "costs", "bought"]
