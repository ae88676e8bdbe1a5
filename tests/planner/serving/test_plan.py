"""The serving plan core: replicas, cost per million tokens, carbon, ranking, input checks."""

import json
import math
from pathlib import Path

import pytest

from planner.serving.core.fields import FieldError, parse_serving_input
from planner.serving.core.plan import ServingOffer, cards, plan_serving
from planner.serving.services import option_json
from simulator.core.hardware import load_gpu_specs
from simulator.core.serving.crossval import Bands
from simulator.core.serving.engine import ServingCalibration

ROOT = Path(__file__).resolve().parents[3]
GPUS = load_gpu_specs(str(ROOT / "pricing" / "data" / "gpus.csv"))
CAL = ServingCalibration()
BANDS = Bands({"ttft_ms": -0.3, "tpot_ms": -0.2}, {"ttft_ms": 0.5, "tpot_ms": 0.4})
EXAMPLE = {"model": "llama3.1-70b", "precision": "fp8", "rate": 20, "input_tokens": 2000,
           "output_tokens": 300, "ttft_p99_ms": 2000, "tpot_p99_ms": 60}


def _offer(gpu: str = "H100 SXM5-80GB", usd: float = 40.0, gpus: int = 8,
           name: str = "p5.48xlarge", grid: float = 400.0) -> ServingOffer:
    return ServingOffer("aws", name, "us-east-1", "on_demand", gpu, gpus, usd, "2026-01-21",
                        "test", "listed", grid, 1.2)


def _plan(raw: dict[str, object] = EXAMPLE, offers: list[ServingOffer] | None = None):
    checked = parse_serving_input(raw)
    return plan_serving(checked.request, offers or [_offer()], GPUS, CAL, BANDS)


def test_replicas_carry_the_rate_within_the_targets_in_whole_instances() -> None:
    plan = _plan()
    assert plan.options
    for option in plan.options:
        assert option.gpus == option.instances * 8 == option.replicas * option.gpus_per_replica
        assert option.ttft_p99_ms <= 2000 and option.tpot_p99_ms <= 60
        assert 0 < option.utilisation <= 1
        assert option.goodput_per_replica_per_s * option.replicas >= 20


def test_cost_per_million_tokens_adds_up_to_the_monthly_bill() -> None:
    option = _plan().options[0]
    usd_per_s = option.usd_per_month / (730 * 3600)
    tokens_in, tokens_out = 20 * 2000, 20 * 300
    split = (option.usd_per_million_input_tokens * tokens_in
             + option.usd_per_million_output_tokens * tokens_out) / 1e6
    assert split == pytest.approx(usd_per_s, rel=1e-9)
    assert option.usd_per_million_tokens == pytest.approx(
        usd_per_s / (tokens_in + tokens_out) * 1e6)
    assert option.ttft_p99_ms_band[0] < option.ttft_p99_ms < option.ttft_p99_ms_band[1]


def test_carbon_scales_with_the_grid_and_is_blank_without_a_factor() -> None:
    clean = _plan(offers=[_offer(grid=40.0)]).options[0]
    dirty = _plan(offers=[_offer(grid=400.0)]).options[0]
    assert dirty.kg_co2e_per_million_tokens == pytest.approx(
        10 * clean.kg_co2e_per_million_tokens)
    assert math.isnan(_plan(offers=[_offer(grid=math.nan)]).options[0]
                      .kg_co2e_per_million_tokens)


def test_options_are_cheapest_first_and_a_gpu_that_cannot_serve_is_named() -> None:
    offers = [_offer(), _offer("A100 SXM4-80GB", 20.0, name="p4de.24xlarge"),
              _offer("T4 PCIe-16GB", 0.5, gpus=1, name="g4dn.xlarge")]
    plan = _plan(offers=offers)
    costs = [o.usd_per_month for o in plan.options]
    assert costs == sorted(costs)
    assert any(u.startswith("T4 PCIe-16GB:") for u in plan.unfit)
    picked = cards(plan)
    assert picked["cheapest"] == plan.options[0]
    assert picked["lowest_latency"] is not None
    assert picked["lowest_latency"].tpot_p99_ms == min(
        o.tpot_p99_ms for o in plan.options if o.usd_per_month <= 1.5 * costs[0])


def test_a_tighter_tpot_target_needs_more_gpus() -> None:
    loose = _plan().options[0]
    tight = _plan({**EXAMPLE, "tpot_p99_ms": 25}).options[0]
    assert tight.usd_per_month > loose.usd_per_month


@pytest.mark.parametrize(("raw", "field"), [
    ({**EXAMPLE, "rate": "fast"}, "rate"),
    ({**EXAMPLE, "rate": -1}, "rate"),
    ({**EXAMPLE, "model": "gpt-5"}, "model"),
    ({**EXAMPLE, "precision": "fp4"}, "precision"),
    ({**EXAMPLE, "purchase_options": ["spot"]}, "purchase_options"),
    ({**EXAMPLE, "color": "red"}, "color"),
    ({k: v for k, v in EXAMPLE.items() if k != "input_tokens"}, "input_tokens"),
])
def test_bad_input_is_refused_naming_the_field(raw: dict[str, object], field: str) -> None:
    with pytest.raises(FieldError) as caught:
        parse_serving_input(raw)
    assert caught.value.field == field


def test_an_option_as_json_has_null_for_no_grid_factor_and_its_bands_split_out() -> None:
    option = _plan(offers=[_offer(grid=math.nan)]).options[0]
    data = option_json(option)
    assert data["kg_co2e_per_million_tokens"] is None
    assert data["usd_per_million_tokens"] == {
        "input": option.usd_per_million_input_tokens,
        "output": option.usd_per_million_output_tokens, "all": option.usd_per_million_tokens}
    assert (data["tpot_p99_ms_p10"], data["tpot_p99_ms_p90"]) == option.tpot_p99_ms_band
    json.dumps(data, allow_nan=False)
