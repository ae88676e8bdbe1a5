import datetime as dt
import json
import math

import numpy as np
import pandas as pd
import pytest

from planner.core import formatting as fmt
from planner.core.cloud import hazard_per_instance_hour
from planner.plans.core.assumptions import PlanAssumptions, PlanConstraints
from planner.plans.core.plan import plan
from planner.plans.core.ranking import pareto_mask

CONFIG_DEFAULTS = {
    "tp": 1, "pp": 1, "dp": 8, "cp": 1, "zero_stage": 1, "recompute": "none", "micro_batch": 1,
    "grad_accum": 1, "precision": "bf16", "step_seconds": 1.0, "samples_per_second": 100.0,
    "tokens_per_second": 1e6, "gpu_hours": 0.0, "energy_kwh": 0.0, "memory_per_gpu_gib": 60.0,
    "mfu": 0.4, "memory_capacity_gib": 80.0,
}


def _config(key, hours, nodes=1, gpu="H100 SXM5-80GB", p10=None, p90=None):
    return {**CONFIG_DEFAULTS, "instance_key": key, "gpu": gpu, "nodes": float(nodes),
            "gpus": 8.0 * nodes, "time_to_train_hours": hours,
            "time_to_train_p10_hours": hours if p10 is None else p10,
            "time_to_train_p90_hours": hours if p90 is None else p90}


def _price(key, option, rate, provider="aws", region="us-east-1"):
    return {"instance_key": key, "provider": provider, "region": region,
            "instance_type": f"type-{key}", "purchase_option": option, "usd_per_hour": rate,
            "as_of": dt.date(2026, 1, 15), "source": "test", "is_derived": False}


def _plan(configs, prices, constraints=None, **assumptions):
    return plan(pd.DataFrame(configs), pd.DataFrame(prices), PlanAssumptions(**assumptions),
                constraints or PlanConstraints())


def _row(result, option, key=None):
    table = result.table
    mask = table["purchase_option"] == option
    if key is not None:
        mask &= table["instance_key"] == key
    assert mask.sum() == 1
    return table[mask].iloc[0]


# --- cost parts -------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("provider", "hours", "nodes", "rate", "storage_rate", "egress_rate"),
    [("aws", 730.0, 1, 10.0, 0.023, 0.09), ("gcp", 100.0, 4, 32.5, 0.020, 0.12),
     ("lambda", 1.5, 2, 3.0, 0.20, 0.0)],
)
def test_cost_parts_add_up_by_hand(provider, hours, nodes, rate, storage_rate, egress_rate):
    result = _plan([_config(1, hours, nodes)], [_price(1, "on_demand", rate, provider)],
                   dataset_gb=100.0, checkpoint_gb=10.0, checkpoints_kept=2, storage_months=1.0,
                   egress_gb=50.0)
    row = result.table.iloc[0]
    assert row["compute_usd"] == pytest.approx(hours * rate * nodes)
    assert row["storage_usd"] == pytest.approx(120.0 * (hours / 730.0 + 1.0) * storage_rate)
    assert row["egress_usd"] == pytest.approx(50.0 * egress_rate)
    assert row["total_usd"] == pytest.approx(
        row["compute_usd"] + row["storage_usd"] + row["egress_usd"])
    tokens_m = 1e6 * hours * 3600 / 1e6
    assert row["usd_per_million_tokens"] == pytest.approx(row["total_usd"] / tokens_m)
    assert row["memory_headroom_gib"] == 20.0


@pytest.mark.parametrize(
    ("option", "hours", "reuse", "billed_hours"),
    [("reserved_1y", 100.0, 0.0, 8760.0), ("committed_3y", 100.0, 0.0, 3 * 8760.0),
     ("savings_plan_1y", 100.0, 0.9, 876.0), ("reserved_1y", 1000.0, 0.9, 1000.0),
     ("savings_plan_3y", 100.0, 1.0, 100.0), ("on_demand", 100.0, 0.0, 100.0)],
)
def test_commitment_pays_the_unreused_term(option, hours, reuse, billed_hours):
    result = _plan([_config(1, hours, nodes=2)], [_price(1, option, 5.0)],
                   commitment_reuse_fraction=reuse)
    row = result.table.iloc[0]
    assert row["compute_usd"] == pytest.approx(billed_hours * 5.0 * 2)
    assert row["time_to_train_hours"] == hours


@pytest.mark.parametrize(
    ("option", "reuse", "budget_hours", "overrun"),
    [("on_demand", 0.0, 125.0, 0.10),  # budget = cost at the P90 time
     ("on_demand", 0.0, 80.0, 0.90),  # ... at the P10 time
     ("reserved_1y", 1 - 110.0 / 8760, 125.0, 0.10),  # floor 110 h < P90
     ("reserved_1y", 1 - 130.0 / 8760, 125.0, 0.50),  # floor 130 h: T > 100 h still costs more
     ("reserved_1y", 1 - 130.0 / 8760, 0.0, 1.0)],  # budget below the floor: always over
)
def test_budget_overrun_probability_inverts_the_cost(option, reuse, budget_hours, overrun):
    rate, stored_gb = 10.0, 730.0
    storage_usd_per_hour = stored_gb * 0.023 / 730.0
    floor = 8760 * (1 - reuse) if option != "on_demand" else 0.0
    budget = max(budget_hours, floor) * rate + storage_usd_per_hour * budget_hours
    if budget_hours == 0.0:
        budget = floor * rate - 1.0
    if overrun == 0.50:  # cost at 100 h (median) under the floor: floor + storage(100 h)
        budget = floor * rate + storage_usd_per_hour * 100.0
    result = _plan([_config(1, 100.0, p10=80.0, p90=125.0)], [_price(1, option, rate)],
                   PlanConstraints(budget_usd=budget), dataset_gb=stored_gb, checkpoints_kept=0,
                   storage_months=0.0, commitment_reuse_fraction=reuse)
    row = result.table.iloc[0]
    assert row["budget_overrun_probability"] == pytest.approx(overrun, abs=1e-4)
    assert row["miss_probability"] == row["budget_overrun_probability"]
    assert row["deadline_miss_probability"] == 0.0


def test_p90_cost_is_the_cost_at_p90_time():
    result = _plan([_config(1, 100.0, p10=80.0, p90=125.0)], [_price(1, "on_demand", 10.0)])
    row = result.table.iloc[0]
    assert row["time_p90_hours"] == 125.0 and row["total_p90_usd"] == pytest.approx(1250.0)
    assert row["time_p50_hours"] == pytest.approx(math.sqrt(80.0 * 125.0))


# --- feasibility, Pareto, rank -------------------------------------------------------------

def _four_options():
    configs = [_config(1, 100.0), _config(2, 50.0), _config(3, 200.0)]
    prices = [_price(1, "on_demand", 10.0), _price(2, "on_demand", 30.0),
              _price(3, "on_demand", 4.0)]
    return configs, prices


@pytest.mark.parametrize(
    ("deadline", "budget", "reasons"),
    [(None, None, {1: "", 2: "", 3: ""}),
     (150.0, None, {1: "", 2: "", 3: "misses deadline"}),
     (None, 1200.0, {1: "", 2: "over budget", 3: ""}),
     (150.0, 1200.0, {1: "", 2: "over budget", 3: "misses deadline"}),
     (40.0, 500.0, {1: "misses deadline; over budget", 2: "misses deadline; over budget",
                    3: "misses deadline; over budget"})],
)
def test_infeasibility_reasons_and_counts(deadline, budget, reasons):
    configs, prices = _four_options()
    result = _plan(configs, prices, PlanConstraints(deadline_hours=deadline, budget_usd=budget))
    got = dict(zip(result.table["instance_key"], result.table["infeasible_reason"], strict=True))
    assert got == reasons
    late = sum("misses deadline" in r for r in reasons.values())
    over = sum("over budget" in r for r in reasons.values())
    assert result.infeasible["misses deadline"] == late
    assert result.infeasible["over budget"] == over
    feasible = [k for k, r in reasons.items() if r == ""]
    assert result.table["rank"].notna().sum() == len(feasible)
    # meets_deadline is the decision rule's: the chance of missing it within the threshold.
    assert (result.table["meets_deadline"] == (result.table["deadline_miss_probability"]
                                               <= result.constraints.miss_threshold)).all()
    if not feasible:
        assert result.recommendations == ()


def test_rank_is_by_expected_total_and_feasible_rows_come_first():
    configs, prices = _four_options()
    result = _plan(configs, prices, PlanConstraints(deadline_hours=150.0))
    table = result.table
    assert list(table["instance_key"]) == [1, 2, 3]  # 1000 $, 1500 $, then the late 800 $
    assert list(table["rank"].astype("float")[:2]) == [1.0, 2.0] and pd.isna(table["rank"][2])
    assert list(table["is_pareto"]) == [True, True, False]


def _brute_pareto(hours, usd):
    n = len(hours)
    return np.array([
        not any(hours[j] <= hours[i] and usd[j] <= usd[i]
                and (hours[j] < hours[i] or usd[j] < usd[i]) for j in range(n))
        for i in range(n)])


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_pareto_mask_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    hours = rng.integers(1, 15, 60).astype(float)  # many ties on purpose
    usd = rng.integers(1, 15, 60).astype(float)
    assert (pareto_mask(hours, usd) == _brute_pareto(hours, usd)).all()


def test_plan_pareto_rows_are_not_dominated_by_any_feasible_row():
    rng = np.random.default_rng(7)
    configs = [_config(k, float(rng.uniform(20, 200)), nodes=int(rng.integers(1, 5)),
                       p10=None) for k in range(40)]
    prices = [_price(k, option, float(rng.uniform(1, 40)))
              for k in range(40) for option in ("on_demand", "spot", "reserved_1y")]
    result = _plan(configs, prices, PlanConstraints(deadline_hours=150.0), checkpoint_gb=50.0)
    feasible = result.table[result.table["rank"].notna()]
    hours = feasible["time_to_train_hours"].to_numpy()
    usd = feasible["total_usd"].to_numpy()
    assert (feasible["is_pareto"].to_numpy() == _brute_pareto(hours, usd)).all()
    assert not result.table.loc[result.table["rank"].isna(), "is_pareto"].any()


# --- spot ------------------------------------------------------------------------------

def test_zero_hazard_spot_equals_plain_time():
    cfg = _config(1, 100.0, nodes=4, p10=80.0, p90=130.0)
    result = _plan([cfg], [_price(1, "on_demand", 8.0), _price(1, "spot", 8.0)],
                   PlanConstraints(deadline_hours=110.0), checkpoint_gb=500.0,
                   spot_hazard_per_instance_hour={"aws": 0.0},
                   spot_hazard_per_instance_hour_by_gpu={})
    spot, on_demand = _row(result, "spot"), _row(result, "on_demand")
    columns = ["time_to_train_hours", "time_p10_hours", "time_p50_hours", "time_p90_hours",
               "total_usd", "total_p90_usd", "deadline_miss_probability"]
    assert spot[columns].to_dict() == on_demand[columns].to_dict()
    assert spot["expected_interruptions"] == 0.0
    assert result.n_samples_per_spot_run == 0


@pytest.mark.parametrize(
    ("spot_rate", "hazard", "spot_first"),
    [(4.0, 1e-4, True), (9.5, 1e-3, True), (9.8, 1e-3, False), (9.9, 3e-4, False),
     (9.0, 2e-2, False)],
)
def test_spot_ranks_below_on_demand_when_rework_makes_it_dearer(spot_rate, hazard, spot_first):
    cfg = _config(1, 500.0, nodes=8, p10=450.0, p90=560.0)
    result = _plan([cfg], [_price(1, "on_demand", 10.0), _price(1, "spot", spot_rate)],
                   checkpoint_gb=2000.0, restart_overhead_hours=0.5,
                   spot_hazard_per_instance_hour={"aws": hazard},
                   spot_hazard_per_instance_hour_by_gpu={})
    spot, on_demand = _row(result, "spot"), _row(result, "on_demand")
    assert spot["time_to_train_hours"] > on_demand["time_to_train_hours"]
    assert (spot["total_usd"] < on_demand["total_usd"]) == spot_first
    assert (spot["rank"] < on_demand["rank"]) == spot_first


def test_spot_expected_time_follows_young_daly():
    from planner.core.spot import CheckpointPolicy, expected_overhead

    hazard, nodes, checkpoint_gb, bandwidth = 3e-4, 8, 720.0, 2.0
    result = _plan([_config(1, 1000.0, nodes=nodes)], [_price(1, "spot", 5.0)],
                   checkpoint_gb=checkpoint_gb, checkpoint_write_gbytes_per_s=bandwidth,
                   restart_overhead_hours=0.5, spot_hazard_per_instance_hour={"aws": hazard},
                   spot_hazard_per_instance_hour_by_gpu={}, monte_carlo_samples=20000,
                   max_total_samples=20000)
    row = result.table.iloc[0]
    write_hours = checkpoint_gb / (bandwidth * nodes) / 3600.0
    mtbf = 1.0 / (hazard * nodes)
    interval, overhead = expected_overhead(mtbf, CheckpointPolicy(write_hours, 0.5))
    assert row["checkpoint_interval_hours"] == pytest.approx(interval)
    cross = (write_hours / interval) * (0.5 + interval / 2.0) / mtbf
    assert row["time_to_train_hours"] == pytest.approx(1000.0 * (1 + overhead + cross))
    assert row["expected_interruptions"] == pytest.approx(
        hazard * nodes * 1000.0 * (1 + write_hours / interval))
    # W is fixed here (P10 = P90), so the Monte Carlo median sits near the expectation
    assert row["time_p50_hours"] == pytest.approx(row["time_to_train_hours"], rel=0.01)
    assert row["time_p10_hours"] < row["time_p50_hours"] < row["time_p90_hours"]


def test_checkpoint_write_is_capped_by_aggregate_bandwidth():
    kwargs = {"checkpoint_gb": 1000.0, "checkpoint_write_gbytes_per_s": 2.0,
              "spot_hazard_per_instance_hour": {"aws": 1e-3},
              "spot_hazard_per_instance_hour_by_gpu": {}, "monte_carlo_samples": 10}
    capped = _plan([_config(1, 1000.0, nodes=64)], [_price(1, "spot", 5.0)],
                   checkpoint_max_aggregate_gbytes_per_s=16.0, **kwargs)
    write_hours = 1000.0 / 16.0 / 3600.0
    expected_interval = math.sqrt(2 * write_hours / (1e-3 * 64))
    assert capped.table["checkpoint_interval_hours"][0] == pytest.approx(expected_interval)


def test_same_seed_same_plan_and_seed_matters():
    cfg = [_config(k, 300.0, nodes=16, p10=250.0, p90=380.0) for k in range(3)]
    prices = [_price(k, "spot", 3.0 + k) for k in range(3)]
    constraints = PlanConstraints(deadline_hours=330.0)
    first = _plan(cfg, prices, constraints, checkpoint_gb=300.0, seed=11)
    again = _plan(cfg, prices, constraints, checkpoint_gb=300.0, seed=11)
    other = _plan(cfg, prices, constraints, checkpoint_gb=300.0, seed=12)
    pd.testing.assert_frame_equal(first.table, again.table)
    assert first.recommendations == again.recommendations
    assert not np.allclose(first.table["time_p90_hours"], other.table["time_p90_hours"])


def test_spot_runs_are_shared_across_regions_of_a_provider():
    cfg = [_config(1, 300.0, nodes=16, p10=250.0, p90=380.0)]
    prices = [_price(1, "spot", 3.0, region=r) for r in ("us-east-1", "us-west-2")]
    result = _plan(cfg, prices, PlanConstraints(deadline_hours=330.0), checkpoint_gb=300.0)
    a, b = result.table.iloc[0], result.table.iloc[1]
    assert a["time_p90_hours"] == b["time_p90_hours"]
    assert a["deadline_miss_probability"] == b["deadline_miss_probability"]


def test_gpu_specific_hazard_overrides_the_provider_default():
    cfg = [_config(1, 300.0, nodes=4, gpu="H100 SXM5-80GB"),
           _config(2, 300.0, nodes=4, gpu="A100 SXM4-80GB")]
    prices = [_price(1, "spot", 3.0), _price(2, "spot", 3.0)]
    result = _plan(cfg, prices, checkpoint_gb=0.0,
                   spot_hazard_per_instance_hour={"aws": 1e-4},
                   spot_hazard_per_instance_hour_by_gpu={"aws": {"H100": 1e-3}})
    by_key = result.table.set_index("instance_key")["expected_interruptions"]
    assert by_key[1] == pytest.approx(1e-3 * 4 * 300.0)
    assert by_key[2] == pytest.approx(1e-4 * 4 * 300.0)


def test_hazard_from_monthly_band():
    assert hazard_per_instance_hour(0.0) == 0.0
    assert hazard_per_instance_hour(0.175) == pytest.approx(-math.log(0.825) / 730)
    with pytest.raises(ValueError):
        hazard_per_instance_hour(1.0)


# --- recommendations -------------------------------------------------------------------

def _recommendation_case():
    configs = [_config(1, 100.0, nodes=1, p10=90.0, p90=115.0),  # cheap, slow
               _config(2, 40.0, nodes=4, p10=36.0, p90=46.0),  # fast, dear
               _config(3, 60.0, nodes=2, p10=40.0, p90=95.0)]  # middling, wide band
    prices = [_price(1, "on_demand", 10.0), _price(1, "spot", 4.0),
              _price(2, "on_demand", 12.0), _price(2, "reserved_3y", 5.0),
              _price(3, "on_demand", 10.5)]
    return configs, prices


def test_recommendations_on_a_hand_built_table():
    configs, prices = _recommendation_case()
    constraints = PlanConstraints(deadline_hours=110.0, budget_usd=2000.0)
    result = _plan(configs, prices, constraints, checkpoint_gb=50.0,
                   spot_hazard_per_instance_hour={"aws": 1e-3},
                   spot_hazard_per_instance_hour_by_gpu={})
    table = result.table
    picks = {r.key: table.iloc[r.row_index] for r in result.recommendations}
    # spot on key 1 ≈ $400, on-demand key 1 $1000, key 3 $1260, key 2 on-demand $1920,
    # reserved_3y on key 2 pays 3 years: over budget. Key 1 misses the deadline with P 21 %
    # or more, above the 10 % a card that says "meets the deadline" allows: key 3 it is.
    assert (picks["cheapest_meeting_deadline"][["instance_key", "purchase_option"]].tolist()
            == [3, "on_demand"])
    assert picks["cheapest_meeting_deadline"]["deadline_miss_probability"] <= 0.10
    # Key 2 on demand is faster but goes over the budget with P 40 %: within budget by the
    # decision rule (at most 10 %) leaves key 3.
    assert (picks["fastest_within_budget"][["instance_key", "purchase_option"]].tolist()
            == [3, "on_demand"])
    assert picks["fastest_within_budget"]["within_budget"]
    assert picks["best_cost_per_token"]["instance_key"] == 1
    # risk = P(T > min(deadline, hours the budget buys)): key 2 on demand buys 41.7 h
    # (P 40 %), key 1 on demand misses 110 h with P 21 %, key 3 on demand buys 95.2 h (P 10 %)
    assert (picks["lowest_risk"][["instance_key", "purchase_option"]].tolist()
            == [3, "on_demand"])
    risk = table.set_index(["instance_key", "purchase_option"])["miss_probability"]
    assert risk[(2, "on_demand")] == pytest.approx(0.40, abs=0.01)
    assert risk[(1, "on_demand")] == pytest.approx(0.21, abs=0.01)
    assert risk[(3, "on_demand")] == pytest.approx(0.10, abs=0.01)
    assert _row(result, "reserved_3y")["infeasible_reason"] == "over budget"
    for recommendation in result.recommendations:
        assert "$" in recommendation.why and recommendation.title


def test_a_card_meets_the_deadline_only_within_the_miss_threshold():
    configs, prices = _recommendation_case()
    hazards = {"spot_hazard_per_instance_hour": {"aws": 1e-3},
               "spot_hazard_per_instance_hour_by_gpu": {}}
    loose = _plan(configs, prices, PlanConstraints(deadline_hours=110.0, budget_usd=2000.0,
                                                   miss_threshold=0.5), **hazards)
    card = next(r for r in loose.recommendations if r.key == "cheapest_meeting_deadline")
    row = loose.table.iloc[card.row_index]
    assert row[["instance_key", "purchase_option"]].tolist() == [1, "spot"]
    assert card.title == "Cheapest meeting the deadline and budget"
    # A budget only key 1 fits: every feasible option misses the deadline with P near 20 %,
    # so no option is acceptable and there is no cheapest card; the lowest-risk card says so.
    strict = _plan(configs, prices, PlanConstraints(deadline_hours=110.0, budget_usd=1100.0),
                   **hazards)
    assert not strict.table["acceptable"].any()
    assert "cheapest_meeting_deadline" not in {r.key for r in strict.recommendations}
    safest = next(r for r in strict.recommendations if r.key == "lowest_risk")
    assert "No ranked option is acceptable" in safest.why and "Not acceptable" in safest.why
    for result in (loose, strict):
        for pick in result.recommendations:
            row = result.table.iloc[pick.row_index]
            assert row["acceptable"] == (row["miss_probability"]
                                         <= result.constraints.miss_threshold)
            assert ("Not acceptable" in pick.why) == (not row["acceptable"])


def test_cost_per_token_times_tokens_is_the_cards_total_and_the_tradeoff_is_stated():
    configs, prices = _recommendation_case()
    configs = [{**config, "tokens_per_second": 1e6} for config in configs]
    result = _plan(configs, prices, PlanConstraints(deadline_hours=110.0, budget_usd=2000.0,
                                                    miss_threshold=0.5),
                   spot_hazard_per_instance_hour={"aws": 1e-3},
                   spot_hazard_per_instance_hour_by_gpu={})
    card = next(r for r in result.recommendations if r.key == "best_cost_per_token")
    row = result.table.iloc[card.row_index]
    per_million = row["usd_per_million_tokens"]
    tokens = 1e6 * row["simulated_hours"] * 3600.0  # the tokens the run trains
    assert per_million * tokens / 1e6 == pytest.approx(row["total_usd"], rel=0.01)
    assert f"${per_million:.3g} per million tokens" in card.why
    line = result.to_dict()["tradeoff"]
    by_key = {r.key: result.table.iloc[r.row_index] for r in result.recommendations}
    cheap, safe = by_key["cheapest_meeting_deadline"], by_key["lowest_risk"]
    extra = safe["total_usd"] - cheap["total_usd"]
    assert line.startswith(f"+{fmt.usd(extra)} for a {safe['miss_probability'] * 100:.1f}% miss")
    assert f"instead of {cheap['miss_probability'] * 100:.1f}%" in line


def test_nothing_feasible_gets_one_combined_fix():
    configs, prices = _recommendation_case()
    result = _plan(configs, prices, PlanConstraints(deadline_hours=50.0, budget_usd=100.0),
                   spot_hazard_per_instance_hour={"aws": 1e-3},
                   spot_hazard_per_instance_hour_by_gpu={})
    work = result.to_dict()["what_would_work"]
    table = result.table
    on_time = table[table["time_to_train_hours"] <= 50.0]
    cheapest = on_time.loc[on_time["total_usd"].idxmin()]
    assert cheapest["instance_key"] == 2  # 4 nodes, 32 GPUs, the only one under 50 h
    assert work["fix"].startswith(
        f"For {fmt.duration(50.0)} you need at least 32 GPUs and "
        f"{fmt.usd(math.ceil(cheapest['total_usd']))} (")
    late = _plan(configs, prices, PlanConstraints(deadline_hours=10.0),
                 spot_hazard_per_instance_hour={"aws": 1e-3},
                 spot_hazard_per_instance_hour_by_gpu={})
    assert late.to_dict()["what_would_work"]["fix"].startswith(
        f"No allowed option finishes in {fmt.duration(10.0)}: the fastest takes")


def test_equal_prices_go_to_the_preferred_region_and_the_card_names_the_others():
    configs = [_config(1, 100.0)]
    prices = [_price(1, "on_demand", 10.0, region=r)
              for r in ("ap-northeast-1", "eu-west-1", "us-east-1")]
    unpreferred = _plan(configs, prices, PlanConstraints())
    assert unpreferred.table.iloc[0]["region"] == "ap-northeast-1"
    result = _plan(configs, prices, PlanConstraints(preferred_regions=("us-east-1",)))
    for card in result.recommendations:
        assert result.table.iloc[card.row_index]["region"] == "us-east-1"
        assert card.why.endswith("Same price also in ap-northeast-1, eu-west-1.")


def test_lowest_risk_ties_prefer_non_spot():
    cfg = [_config(1, 100.0, nodes=1)]
    prices = [_price(1, "on_demand", 10.0), _price(1, "spot", 3.0)]
    result = _plan(cfg, prices, PlanConstraints(deadline_hours=1000.0),
                   spot_hazard_per_instance_hour={"aws": 1e-5},
                   spot_hazard_per_instance_hour_by_gpu={})
    picks = {r.key: result.table.iloc[r.row_index] for r in result.recommendations}
    assert picks["cheapest_meeting_deadline"]["purchase_option"] == "spot"
    assert picks["lowest_risk"]["purchase_option"] == "on_demand"


def test_without_limits_lowest_risk_is_the_lowest_p90_cost():
    configs, prices = _recommendation_case()
    result = _plan(configs, prices, spot_hazard_per_instance_hour={"aws": 1e-3},
                   spot_hazard_per_instance_hour_by_gpu={})
    pick = next(r for r in result.recommendations if r.key == "lowest_risk")
    assert pick.row_index == int(result.table["total_p90_usd"].to_numpy().argmin())
    assert next(r for r in result.recommendations
                if r.key == "cheapest_meeting_deadline").title == "Cheapest"


# --- filters, counts, serialization -----------------------------------------------------

@pytest.mark.parametrize(
    ("constraints", "expected"),
    [(PlanConstraints(providers=["gcp"]), {("gcp", "on_demand")}),
     (PlanConstraints(regions=["eu"]), {("aws", "spot")}),
     (PlanConstraints(purchase_options=["spot"]), {("aws", "spot")}),
     (PlanConstraints(gpus=["a100"]), {("gcp", "on_demand")}),
     (PlanConstraints(gpus=["H100 SXM5-80GB"]), {("aws", "on_demand"), ("aws", "spot")})],
)
def test_filters(constraints, expected):
    configs = [_config(1, 10.0), _config(2, 10.0, gpu="A100 SXM4-80GB")]
    prices = [_price(1, "on_demand", 10.0), _price(1, "spot", 4.0, region="eu"),
              _price(2, "on_demand", 9.0, provider="gcp")]
    result = _plan(configs, prices, constraints)
    assert set(zip(result.table["provider"], result.table["purchase_option"],
                   strict=True)) == expected


def test_counts_unpriced_configurations():
    configs = [_config(1, 10.0), _config(2, 10.0)]
    result = plan(pd.DataFrame(configs), pd.DataFrame([_price(1, "on_demand", 10.0)]),
                  PlanAssumptions(), PlanConstraints())
    assert result.infeasible["no current price"] == 1


def test_to_dict_is_json_safe_with_iso_dates():
    configs, prices = _recommendation_case()
    prices[0]["as_of"] = "2026-01-10"
    prices[1]["as_of"] = pd.Timestamp("2026-01-11")
    result = _plan(configs, prices, PlanConstraints(deadline_hours=110.0), checkpoint_gb=10.0)
    document = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert document["n_options"] == len(document["options"]) == 5
    dates = {o["as_of"] for o in document["options"]}
    assert {"2026-01-10", "2026-01-15"} <= dates and any(d.startswith("2026-01-11") for d in dates)
    late = [o for o in document["options"] if o["infeasible_reason"]]
    assert all(o["rank"] is None for o in late)
    assert {r["key"] for r in document["recommendations"]} == {
        "cheapest_meeting_deadline", "fastest_within_budget", "best_cost_per_token",
        "lowest_risk"}
    assert document["assumptions"]["seed"] == 0
    limited = result.to_dict(limit=1)
    indexes = {o["row_index"] for o in limited["options"]}
    assert 0 in indexes and {r.row_index for r in result.recommendations} <= indexes


# --- bad input ---------------------------------------------------------------------------

def _good():
    return [_config(1, 10.0)], [_price(1, "on_demand", 10.0)]


@pytest.mark.parametrize(
    "mutate",
    [
        lambda c, p: p[0].update(usd_per_hour=-1.0),
        lambda c, p: p[0].update(usd_per_hour=float("nan")),
        lambda c, p: p[0].update(purchase_option="lease"),
        lambda c, p: p[0].update(provider="oracle"),  # no storage/egress rate
        lambda c, p: p[0].update(as_of=None),
        lambda c, p: c[0].update(time_to_train_hours=0.0),
        lambda c, p: c[0].update(time_to_train_p10_hours=20.0),  # p10 > p90
        lambda c, p: c[0].update(nodes=-1.0),
        lambda c, p: c.clear(),
        lambda c, p: p.clear(),
        lambda c, p: p[0].update(instance_key=99),  # nothing priced
    ],
)
def test_bad_input_raises(mutate):
    configs, prices = _good()
    mutate(configs, prices)
    with pytest.raises(ValueError):
        _plan(configs, prices)


def test_missing_column_raises():
    configs, prices = _good()
    with pytest.raises(ValueError):
        plan(pd.DataFrame(configs).drop(columns="mfu"), pd.DataFrame(prices),
             PlanAssumptions(), PlanConstraints())


@pytest.mark.parametrize(
    "kwargs",
    [{"deadline_hours": 0.0}, {"deadline_hours": -5.0}, {"budget_usd": 0.0},
     {"purchase_options": ["lease"]}, {"providers": "aws"}, {"deadline_hours": float("nan")}],
)
def test_bad_constraints_raise(kwargs):
    with pytest.raises(ValueError):
        PlanConstraints(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [{"commitment_reuse_fraction": 1.5}, {"dataset_gb": -1.0}, {"monte_carlo_samples": 0},
     {"checkpoint_write_gbytes_per_s": 0.0}, {"storage_usd_per_gb_month": {"aws": -0.1}},
     {"spot_hazard_per_instance_hour_by_gpu": {"aws": {"H100": -1.0}}}],
)
def test_bad_assumptions_raise(kwargs):
    with pytest.raises(ValueError):
        PlanAssumptions(**kwargs)


def test_spot_hazard_missing_for_provider_raises():
    configs, _ = _good()
    with pytest.raises(ValueError):
        _plan(configs, [_price(1, "spot", 3.0)], spot_hazard_per_instance_hour={},
              spot_hazard_per_instance_hour_by_gpu={})


# --- whole catalog ---------------------------------------------------------------------

def _catalog(n_types=500, node_counts=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512), n_prices=30):
    """5,000 configurations × 30 prices each: 150,000 options, a sixth of them spot."""
    rng = np.random.default_rng(1)
    keys = np.arange(n_types)
    gpus = np.array(["H100 SXM5-80GB", "A100 SXM4-80GB", "L40S PCIe-48GB"])[keys % 3]
    frames = []
    for nodes in node_counts:
        hours = 5000.0 / nodes * rng.uniform(0.8, 1.5, n_types)
        frames.append(pd.DataFrame({**CONFIG_DEFAULTS, "instance_key": keys, "gpu": gpus,
                                    "nodes": float(nodes), "gpus": 8.0 * nodes,
                                    "time_to_train_hours": hours,
                                    "time_to_train_p10_hours": hours * 0.85,
                                    "time_to_train_p90_hours": hours * 1.25}))
    options = np.array(["on_demand", "spot", "reserved_1y", "reserved_3y", "committed_1y",
                        "savings_plan_1y"])
    price_keys = np.repeat(keys, n_prices)
    prices = pd.DataFrame({
        "instance_key": price_keys,
        "provider": np.array(["aws", "gcp", "azure", "lambda", "vast"])[price_keys % 5],
        "region": np.tile([f"region-{i // 6}" for i in range(n_prices)], n_types),
        "instance_type": [f"type-{k}" for k in price_keys],
        "purchase_option": np.tile(options[np.arange(n_prices) % 6], n_types),
        "usd_per_hour": rng.uniform(2, 100, len(price_keys)),
        "as_of": "2026-01-15", "source": "synthetic", "is_derived": False})
    return pd.concat(frames, ignore_index=True), prices


def test_whole_catalog_is_consistent():
    # Its speed is measured by benchmarks/bench_plans.py (`make bench`), not timed here.
    configs, prices = _catalog()
    assumptions = PlanAssumptions(dataset_gb=500.0, checkpoint_gb=1000.0, egress_gb=200.0)
    constraints = PlanConstraints(deadline_hours=1000.0, budget_usd=5e6)
    result = plan(configs, prices, assumptions, constraints)
    table = result.table
    assert len(table) == 150_000
    assert np.allclose(table["total_usd"],
                       table["compute_usd"] + table["storage_usd"] + table["egress_usd"])
    ranked = table["rank"].dropna().astype(int).to_numpy()
    assert (ranked == np.arange(1, len(ranked) + 1)).all()
    # Acceptable options rank first (rank 1 = cheapest acceptable), each group by total.
    head = table.iloc[: len(ranked)]
    assert not (np.diff(head["acceptable"].to_numpy().astype(int)) > 0).any()
    for _, group in head.groupby("acceptable"):
        assert (np.diff(group["total_usd"].to_numpy()) >= 0).all()
    assert (table["time_p10_hours"] <= table["time_p50_hours"]).all()
    assert (table["time_p50_hours"] <= table["time_p90_hours"]).all()
    assert table["miss_probability"].between(0, 1).all()
    assert (table["miss_probability"] >= table["deadline_miss_probability"] - 1e-12).all()
    assert len(result.recommendations) == 4


# --- goodput ------------------------------------------------------------------------------

def test_every_option_carries_its_goodput_and_the_cost_of_losing_the_rest():
    config = {**_config(1, 100.0, nodes=2), "steady_state_hours": 80.0}
    result = _plan([config], [_price(1, "on_demand", 10.0), _price(1, "spot", 3.0)],
                   checkpoint_gb=50.0)
    on_demand, spot = _row(result, "on_demand"), _row(result, "spot")
    assert on_demand["goodput"] == pytest.approx(0.8)
    assert on_demand["overhead_gpu_hours_pct"] == pytest.approx(25.0)
    assert on_demand["overhead_usd"] == pytest.approx(20.0 * 10.0 * 2)
    # The tokens a run trains are its throughput over its useful hours, not its whole run.
    trained_millions = 1e6 * 80.0 * 3600.0 / 1e6
    assert on_demand["usd_per_million_tokens"] == pytest.approx(
        on_demand["total_usd"] / trained_millions)
    # Spot interruptions come on top of the failures every purchase option has.
    assert spot["goodput"] < on_demand["goodput"] < 1.0
    assert spot["overhead_usd"] == pytest.approx(
        (spot["time_to_train_hours"] - 80.0) * 3.0 * 2)


def test_a_configuration_without_steady_hours_has_goodput_one():
    result = _plan([_config(1, 100.0)], [_price(1, "on_demand", 10.0)])
    row = result.table.iloc[0]
    assert row["goodput"] == 1.0 and row["overhead_usd"] == 0.0
