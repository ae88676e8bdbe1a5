"""Energy and CO2e of plan options: hand-checked figures, the ratio rule, missing data, the
CO2e limit and the Lowest carbon card (no database)."""

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from planner.plans.core.carbon import FACTOR_COLUMNS, CarbonFactors
from planner.plans.core.plan import PlanAssumptions, PlanConstraints, plan

CONFIG = {
    "tp": 1, "pp": 1, "dp": 8, "cp": 1, "zero_stage": 1, "recompute": "none", "micro_batch": 1,
    "grad_accum": 1, "precision": "bf16", "step_seconds": 1.0, "samples_per_second": 100.0,
    "tokens_per_second": 1e6, "memory_per_gpu_gib": 60.0, "mfu": 0.4,
    "memory_capacity_gib": 80.0,
}


def _config(key, hours, tdp_watts=700.0, p10=None, p90=None):
    return {**CONFIG, "instance_key": key, "gpu": "H100 SXM5-80GB", "nodes": 1.0, "gpus": 8.0,
            "time_to_train_hours": hours, "gpu_hours": 8.0 * hours,
            "energy_kwh": 8.0 * hours * tdp_watts / 1000.0,
            "time_to_train_p10_hours": p10 or hours, "time_to_train_p90_hours": p90 or hours}


def _price(key, region, rate, provider="aws", option="on_demand"):
    return {"instance_key": key, "provider": provider, "region": region,
            "instance_type": f"type-{key}", "purchase_option": option, "usd_per_hour": rate,
            "as_of": dt.date(2026, 1, 15), "source": "test", "is_derived": False}


def _factor(provider, region, grams, pue, accounting="location"):
    return {"provider": provider, "region": region, "g_co2e_per_kwh": grams, "pue": pue,
            "accounting": accounting, "year": "2024", "source": "test grid", "as_of": "2025-12-03",
            "pue_source": "test PUE", "pue_region": ""}


FACTORS = CarbonFactors(pd.DataFrame([
    _factor("aws", "us-east-1", 379.069, 1.135), _factor("aws", "eu-north-1", 8.8, 1.135),
    _factor("gcp", "europe-west4", 268.0, 1.07),
], columns=list(FACTOR_COLUMNS)), "location", frozenset({"aws", "gcp", "azure"}))


def _plan(configs, prices, constraints=None, factors=FACTORS):
    return plan(pd.DataFrame(configs), pd.DataFrame(prices), PlanAssumptions(),
                constraints or PlanConstraints(), carbon=factors)


def test_co2e_is_energy_times_pue_times_grid_intensity_by_hand():
    result = _plan([_config(1, 100.0)], [_price(1, "us-east-1", 98.0)])
    row = result.table.iloc[0]
    assert row["energy_kwh"] == pytest.approx(560.0)  # 8 GPUs × 700 W × 100 h
    assert row["co2e_kg"] == pytest.approx(560.0 * 1.135 * 379.069 / 1000.0)
    basis = row["carbon_basis"]
    assert (basis["accounting"], basis["year"], basis["source"], basis["pue"]) == (
        "location", "2024", "test grid", 1.135)
    assert row["carbon_note"] == ""


def test_same_instance_in_two_regions_emits_in_the_ratio_of_their_grids():
    result = _plan([_config(1, 100.0)], [_price(1, "us-east-1", 98.0),
                                         _price(1, "eu-north-1", 110.0)])
    table = result.table.set_index("region")
    ratio = table.loc["us-east-1", "co2e_kg"] / table.loc["eu-north-1", "co2e_kg"]
    assert ratio == pytest.approx(379.069 / 8.8, rel=0.01)


def test_band_follows_the_time_band_and_spot_rework_adds_energy():
    configs = [_config(1, 100.0, p10=80.0, p90=150.0)]
    prices = [_price(1, "us-east-1", 98.0), _price(1, "us-east-1", 30.0, option="spot")]
    table = _plan(configs, prices).table.set_index("purchase_option")
    steady = table.loc["on_demand"]
    assert steady["energy_kwh"] == pytest.approx(560.0)
    assert steady["co2e_p10_kg"] < steady["co2e_kg"] < steady["co2e_p90_kg"]
    assert steady["co2e_p90_kg"] / steady["co2e_kg"] == pytest.approx(
        steady["time_p90_hours"] / steady["time_to_train_hours"])
    spot = table.loc["spot"]
    assert spot["time_to_train_hours"] > 100.0
    assert spot["energy_kwh"] == pytest.approx(5.6 * spot["time_to_train_hours"])


@pytest.mark.parametrize(("provider", "region", "accounting", "words"), [
    ("lambda", "us-east-1", "location", "Lambda publishes no grid intensity or PUE"),
    ("aws", "ap-south-2", "location", "no carbon data for AWS ap-south-2"),
    ("aws", "us-east-1", "market", "no market-based factor for AWS us-east-1"),
])
def test_option_without_data_has_null_co2e_and_says_why(provider, region, accounting, words):
    factors = CarbonFactors(FACTORS.table.assign(accounting=accounting).iloc[2:], accounting,
                            FACTORS.providers_with_data)
    result = _plan([_config(1, 100.0)], [_price(1, region, 98.0, provider=provider)],
                   factors=factors)
    row = result.table.iloc[0]
    assert np.isnan(row["co2e_kg"]) and row["carbon_basis"] is None
    assert words in row["carbon_note"]
    document = result.to_dict()
    assert document["options"][0]["co2e_kg"] is None
    assert words in document["options"][0]["carbon_note"]


def test_max_co2e_leaves_out_options_above_it_and_without_data():
    prices = [_price(1, "us-east-1", 98.0), _price(1, "eu-north-1", 110.0),
              _price(1, "us-east-1", 90.0, provider="lambda")]
    free = _plan([_config(1, 100.0)], prices)
    assert free.table["rank"].notna().sum() == 3
    limited = _plan([_config(1, 100.0)], prices, PlanConstraints(max_co2e_kg=50.0))
    table = limited.table.set_index(["provider", "region"])
    assert table.loc[("aws", "eu-north-1"), "infeasible_reason"] == ""
    assert table.loc[("aws", "us-east-1"), "infeasible_reason"] == "over the CO2e limit"
    assert "no carbon data" in table.loc[("lambda", "us-east-1"), "infeasible_reason"]
    assert limited.infeasible["over the CO2e limit"] == 1
    assert (limited.table.loc[limited.table["rank"].notna(), "co2e_kg"] <= 50.0).all()


def test_lowest_carbon_card_picks_the_cleanest_grid_and_says_what_it_saves():
    prices = [_price(1, "us-east-1", 98.0), _price(1, "eu-north-1", 110.0)]
    result = _plan([_config(1, 100.0)], prices)
    cards = {r.key: r for r in result.recommendations}
    card = cards["lowest_carbon"]
    assert card.title == "Lowest carbon"
    assert result.table.iloc[card.row_index]["region"] == "eu-north-1"
    assert result.table.iloc[cards["cheapest_meeting_deadline"].row_index]["region"] == "us-east-1"
    assert "kg CO2e" in card.why and "gCO2e/kWh" in card.why and "location-based" in card.why
    # 560 kWh × 1.135 × (379.069 − 8.8) g/kWh = 235 kg; 100 h × ($110 − $98) = $1,200
    assert "saves 235 kg for $1,200 more" in card.why


def test_no_carbon_data_anywhere_gives_no_card():
    result = _plan([_config(1, 100.0)], [_price(1, "us-east-1", 98.0, provider="lambda")])
    assert "lowest_carbon" not in {r.key for r in result.recommendations}


def test_bad_factors_are_refused():
    with pytest.raises(ValueError, match="PUE >= 1"):
        CarbonFactors(pd.DataFrame([_factor("aws", "x", 100.0, 0.9)]))
    with pytest.raises(ValueError, match="accounting"):
        CarbonFactors(FACTORS.table, "scope3")


def test_cost_emissions_front_is_kept_in_the_document():
    prices = [_price(1, "us-east-1", 98.0), _price(1, "eu-north-1", 110.0),
              _price(1, "us-east-1", 130.0, provider="lambda")]
    result = _plan([_config(1, 100.0)], prices)
    table = result.table.set_index(["provider", "region"])
    assert table.loc[("aws", "us-east-1"), "is_carbon_pareto"]  # cheapest
    assert table.loc[("aws", "eu-north-1"), "is_carbon_pareto"]  # cleanest
    assert not table.loc[("lambda", "us-east-1"), "is_carbon_pareto"]  # no CO2e
    kept = result.to_dict(limit=0)["options"]
    assert {o["region"] for o in kept if o["provider"] == "aws"} == {"us-east-1", "eu-north-1"}


def test_a_card_says_when_another_region_at_its_price_emits_less():
    """Regions tie on price, not on grid carbon: the preferred region keeps the card, and
    the card names the cleaner region at the same price and what it saves."""
    prices = [_price(1, "us-east-1", 98.0), _price(1, "eu-north-1", 98.0)]
    result = _plan([_config(1, 100.0)], prices,
                   PlanConstraints(preferred_regions=("us-east-1",)))
    table = result.table.set_index("region")
    saved = table.loc["us-east-1", "co2e_kg"] - table.loc["eu-north-1", "co2e_kg"]
    cheapest = next(c for c in result.recommendations if c.key == "cheapest_meeting_deadline")
    assert result.table.iloc[cheapest.row_index]["region"] == "us-east-1"
    assert cheapest.why.endswith(
        f"Same price also in eu-north-1. At that price eu-north-1 emits {saved:,.0f} kg CO2e "
        f"less ({table.loc['eu-north-1', 'co2e_kg']:,.0f} kg).")
    # the cleaner region's own card names the other region, and no saving (it emits more)
    lowest = next(c for c in result.recommendations if c.key == "lowest_carbon")
    assert result.table.iloc[lowest.row_index]["region"] == "eu-north-1"
    assert lowest.why.endswith("Same price also in us-east-1.")
