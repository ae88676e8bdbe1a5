"""One pick per plan: with no acceptable option the plan's pick is the lowest-risk card (the
plan list, compare and memory chart say so), and the storage plan, power cap and the
report's "Recommended" figures show that card's option, not the first card's (Fastest)."""

from typing import Any

from planner.core.chart_sets import pick_position
from planner.reports.core import plan_report
from planner.reports.core.plan_levers import lever_lines, lever_summary

STORAGE = {"tiers": [], "policy": "S3 Standard (checkpoints (hot))", "total_usd": 10.0,
           "flat_usd": 12.0, "checkpoints_written": 3, "checkpoint_gb": 100.0,
           "stall_seconds_per_checkpoint": 30.0, "retention": "keep-last=2"}


def _document() -> dict[str, Any]:
    """Nothing acceptable: no cheapest card; Fastest first, Lowest risk last."""
    options = [{"row_index": i, "gpu": "H100 SXM5-80GB", "total_usd": 100.0 * (i + 1),
                "storage_plan": {**STORAGE, "total_usd": float(i)}} for i in range(3)]
    cards = [{"key": "fastest_within_budget", "title": "Fastest", "row_index": 0},
             {"key": "lowest_carbon", "title": "Lowest carbon", "row_index": 1},
             {"key": "lowest_risk", "title": "Lowest risk", "row_index": 2}]
    return {"options": options, "recommendations": cards}


def test_the_pick_is_the_cheapest_card_else_the_lowest_risk_else_the_first() -> None:
    assert pick_position(["fastest_within_budget", "cheapest_meeting_deadline"]) == 1
    assert pick_position(["fastest_within_budget", "lowest_risk"]) == 1
    assert pick_position(["lowest_carbon", "fastest_within_budget"]) == 0
    assert pick_position([]) is None


def test_levers_and_the_report_headline_show_the_pick_when_nothing_is_acceptable() -> None:
    document = _document()
    summary = lever_summary(document)
    assert summary is not None
    assert summary["card"] == "Lowest risk" and summary["option"]["row_index"] == 2
    assert summary["storage"]["total_usd"] == 2.0
    assert lever_lines(document)[0].startswith("Storage (lowest risk)")
    recommended = plan_report._recommended(document)
    assert recommended is not None and recommended["row_index"] == 2
