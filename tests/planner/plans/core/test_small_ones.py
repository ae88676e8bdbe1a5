"""The small ones of issue 38, on hand-built plans: spot-only advice names the spot capacity
cap; the carbon card's factors multiply out to the kg it shows; no budget words without a
budget; one figure per quantity in a card."""

import datetime as dt
import re

import pandas as pd

from planner.plans.core.assumptions import PlanAssumptions, PlanConstraints
from planner.plans.core.plan import plan
from planner.plans.core.ranking import intensity_text
from tests.planner.plans.core.test_plan import _config as _base_config


def _config(key: int, hours: float, nodes: int) -> dict[str, object]:
    return dict(_base_config(key, hours, nodes=nodes))


def _spot(key: int) -> dict[str, object]:
    return {"instance_key": key, "provider": "aws", "region": "us-east-1",
            "instance_type": "p5.48xlarge", "purchase_option": "spot", "usd_per_hour": 30.0,
            "as_of": dt.date(2026, 1, 15), "source": "test", "is_derived": False,
            "spot_node_limit": 4.0}


def test_spot_only_advice_names_the_spot_capacity_cap_not_more_nodes() -> None:
    configs = pd.DataFrame([_config(1, 400.0, 4), _config(2, 200.0, 8)])
    prices = pd.DataFrame([_spot(1), _spot(2)])
    result = plan(configs, prices, PlanAssumptions(spot_hazard_per_instance_hour={"aws": 0.0},
                                                   spot_hazard_per_instance_hour_by_gpu={}),
                  PlanConstraints(deadline_hours=300.0))
    fix = result.to_dict()["what_would_work"]["fix"]
    assert "spot capacity cap" in fix and "more than 4 spot nodes" in fix
    assert "allow more nodes" not in fix
    assert "budget" not in fix  # none was set
    assert result.to_dict()["what_would_work"]["budget_usd"] is None


def test_the_intensity_shown_multiplies_out_to_the_kg_shown() -> None:
    # Sweden's grid: 536,147 kWh × PUE 1.185 × 5.6697 g = 3,602 kg, which "× 6" did not give.
    text = intensity_text(536_147.2, 1.185, 5.6697)
    shown = round(536_147.2) * 1.185 * float(text) / 1000.0
    assert round(shown) == round(536_147.2 * 1.185 * 5.6697 / 1000.0) == 3_602
    assert text == "5.67"
    assert intensity_text(1000.0, 1.1, 385.0) == "385"


def test_cards_without_a_budget_say_no_budget_words_and_each_chance_once() -> None:
    configs = pd.DataFrame([_config(1, 100.0, 1), _config(2, 60.0, 2)])
    prices = pd.DataFrame([{**_spot(1), "purchase_option": "on_demand"},
                           {**_spot(2), "purchase_option": "on_demand"}])
    result = plan(configs, prices, PlanAssumptions(), PlanConstraints(deadline_hours=110.0))
    for card in result.recommendations:
        assert "budget" not in card.why.lower() and "budget" not in card.title.lower()
        chances = re.findall(r"\d+\.\d% chance", card.why)
        assert len(chances) == len(set(chances)), card.why
