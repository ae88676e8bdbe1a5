"""Offers as a user can buy them: node limits, spot capacity, price basis, horizon, caveats."""

import datetime as dt

import pandas as pd
import pytest

from planner.core.cloud import default_checkpoint_gb, default_dataset_gb
from planner.core.providers import offer_facts
from planner.plans.core.assumptions import PlanAssumptions, PlanConstraints
from planner.plans.core.plan import plan, price_dates
from planner.plans.core.ranking import collapse_regions
from tests.planner.plans.core.test_plan import _config, _price


def _run(configs, prices, **constraints):
    return plan(pd.DataFrame(configs), pd.DataFrame(prices), PlanAssumptions(),
                PlanConstraints(**constraints))


def test_a_marketplace_machine_is_never_assembled_into_a_cluster() -> None:
    configs = [_config(1, 100.0, nodes=1), _config(1, 13.0, nodes=8)]
    price = {**_price(1, "on_demand", 2.0, provider="vast"), "offer_kind": "marketplace_machine",
             "max_nodes": 1.0}
    result = _run(configs, [price])
    assert list(result.table["nodes"]) == [1.0]
    assert result.infeasible["larger than the offer allows"] == 1


def test_spot_beyond_its_node_limit_is_flagged_and_not_recommended() -> None:
    configs = [_config(1, 100.0, nodes=1), _config(1, 13.0, nodes=8)]
    prices = [{**_price(1, "spot", 3.0), "spot_node_limit": 4.0}]
    result = _run(configs, prices)
    big = result.table[result.table["nodes"] == 8].iloc[0]
    assert bool(big["is_capacity_unlikely"])
    assert "spot capacity unlikely" in big["infeasible_reason"]
    picked = {result.table.iloc[r.row_index]["nodes"] for r in result.recommendations}
    assert picked == {1.0}
    allowed = _run(configs, prices, allow_unlikely_capacity=True)
    fastest = next(r for r in allowed.recommendations if r.key == "fastest_within_budget")
    assert allowed.table.iloc[fastest.row_index]["nodes"] == 8.0
    assert "spot capacity for 8 nodes is unlikely" in fastest.why


def test_estimated_prices_are_left_out_unless_the_user_opts_in() -> None:
    configs = [_config(1, 100.0), _config(2, 100.0)]
    prices = [{**_price(1, "on_demand", 1.0), "basis": "estimated"}, _price(2, "on_demand", 5.0)]
    cheapest = _run(configs, prices).recommendations[0]
    assert cheapest.key == "cheapest_meeting_deadline"
    table = _run(configs, prices).table
    assert table.iloc[cheapest.row_index]["instance_key"] == 2
    opted = _run(configs, prices, allow_estimated_prices=True)
    row = opted.table.iloc[opted.recommendations[0].row_index]
    assert row["instance_key"] == 1 and "estimated price as of" in opted.recommendations[0].why


def test_a_run_longer_than_the_horizon_is_impractical_without_a_deadline() -> None:
    configs = [_config(1, 24 * 400.0), _config(2, 24 * 30.0)]
    prices = [_price(1, "on_demand", 1.0), _price(2, "on_demand", 50.0)]
    result = _run(configs, prices)
    slow = result.table[result.table["instance_key"] == 1].iloc[0]
    assert slow["infeasible_reason"] == "longer than the practical horizon"
    assert result.table.iloc[result.recommendations[0].row_index]["instance_key"] == 2


def test_an_uncalibrated_gpu_never_wins_a_card_without_saying_so() -> None:
    configs = [{**_config(1, 100.0, gpu="MI300X OAM-192GB"), "calibration_status": "uncalibrated"},
               {**_config(2, 200.0), "calibration_status": "calibrated"}]
    prices = [_price(1, "on_demand", 1.0), _price(2, "on_demand", 5.0)]
    result = _run(configs, prices)
    for card in result.recommendations:
        row = result.table.iloc[card.row_index]
        assert row["calibration_status"] in ("uncalibrated", "calibrated")
        if row["calibration_status"] == "uncalibrated":
            assert "throughput uncalibrated" in card.why and "wider" in card.why
    assert any(result.table.iloc[c.row_index]["instance_key"] == 1 for c in result.recommendations)


def test_prices_say_their_age_and_mixed_dates_are_flagged() -> None:
    configs = [_config(1, 100.0), _config(2, 100.0)]
    prices = [{**_price(1, "on_demand", 2.0), "age_days": 320.0},
              {**_price(2, "spot", 1.0), "as_of": dt.date(2025, 6, 1), "age_days": 548.0}]
    result = _run(configs, prices)
    # AWS's newest price is of 2026-01-15: stale before 180 days earlier. The spot price of
    # mid-2025 is stale, the on-demand one 320 days old is not (it is AWS's newest).
    cutoffs = {"aws": "2025-07-19"}
    dates = price_dates(result.table, stale_days=180, stale_before=cutoffs)
    assert dates == {"oldest": "2025-06-01", "newest": "2026-01-15", "spread_days": 228,
                     "is_mixed": True, "oldest_age_days": 548, "n_stale": 1, "stale_days": 180,
                     "stale_before": cutoffs}
    assert all("days old" in card.why for card in result.recommendations)


def test_rows_that_differ_only_by_region_collapse_cheapest_first() -> None:
    rows = [{"provider": "aws", "instance_type": "p5", "nodes": 1, "region": r, "total_usd": t}
            for r, t in (("us-east-1", 10.0), ("eu-west-1", 12.0), ("us-west-2", 11.0))]
    collapsed = collapse_regions(rows)
    assert len(collapsed) == 1 and collapsed[0]["region"] == "us-east-1"
    assert collapsed[0]["other_regions"] == [("us-west-2", 11.0), ("eu-west-1", 12.0)]


def test_workload_defaults_for_checkpoint_and_dataset() -> None:
    assert default_checkpoint_gb(70e9) == pytest.approx(980.0)
    assert default_dataset_gb(tokens=2e12, samples=None, tokens_per_sample=4096,
                              is_image=False) == pytest.approx(4000.0)
    assert default_dataset_gb(tokens=None, samples=1.28e6, tokens_per_sample=1,
                              is_image=True) == pytest.approx(140.8)


def test_offer_facts_per_provider() -> None:
    assert offer_facts("vast", 2) == ("marketplace_machine", 1.0, 4.0)
    assert offer_facts("aws", 8) == ("cloud_instance", 512.0, 4.0)
    assert offer_facts("aws", 1) == ("cloud_instance", 512.0, 16.0)
    assert offer_facts("azure", 8, spot_node_limit=10) == ("cloud_instance", 512.0, 10.0)


def test_an_infeasible_plan_says_which_deadline_or_budget_would_work() -> None:
    configs = [_config(1, 48.0), _config(2, 240.0)]
    prices = [_price(1, "on_demand", 100.0), _price(2, "on_demand", 10.0)]
    result = _run(configs, prices, deadline_hours=24.0, budget_usd=3000.0)
    assert not result.recommendations
    work = result.to_dict()["what_would_work"]
    # within $3,000 only the 10-day option fits; within a day nothing; the fast one costs $4,800
    fix = work.pop("fix")
    assert work.pop("advice") == ("A deadline of 10.0 days would admit an option within the "
                                  "budget. The fastest option takes 2.0 days; the cheapest "
                                  "costs $2,400.")
    assert work == {"deadline_days": 10.0, "budget_usd": None, "fastest_days": 2.0,
                    "cheapest_usd": pytest.approx(2400.0, rel=0.01)}
    assert fix.startswith("No allowed option finishes in 24 h: the fastest takes 2.0 days with "
                          "8 GPUs and $4,800")
