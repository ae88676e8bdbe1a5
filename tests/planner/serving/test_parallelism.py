"""Serving layouts: TP inside an instance, PP across instances, EP for experts; what they cost
and which never appear."""

import math
from pathlib import Path

import pytest

from planner.core.formatting import serving_gpus_per_replica
from planner.serving.core.fields import parse_serving_input
from planner.serving.core.parallelism import Layout, candidate_layouts, layout_label
from planner.serving.core.plan import ServingOffer, ServingPlan, plan_serving
from planner.serving.core.traffic import hourly_instances
from simulator.core.hardware import load_gpu_specs
from simulator.core.serving.crossval import Bands
from simulator.core.serving.engine import ServingCalibration

ROOT = Path(__file__).resolve().parents[3]
GPUS = load_gpu_specs(str(ROOT / "pricing" / "data" / "gpus.csv"))
CAL = ServingCalibration()
BANDS = Bands({"ttft_ms": -0.3, "tpot_ms": -0.2}, {"ttft_ms": 0.5, "tpot_ms": 0.4})
LOOSE = {"rate": 2, "input_tokens": 1000, "output_tokens": 200, "ttft_p99_ms": 10000,
         "tpot_p99_ms": 200}


def _offer(gpu: str, name: str, usd: float, network: float = math.nan,
           gpus: int = 8) -> ServingOffer:
    return ServingOffer("aws", name, "us-east-1", "on_demand", gpu, gpus, usd, "2026-01-21",
                        "test", "listed", 400.0, 1.2, network)


A100 = _offer("A100 SXM4-80GB", "p4de.24xlarge", 40.0, 400.0)
H100 = _offer("H100 SXM5-80GB", "p5.48xlarge", 55.0, 3200.0)


def _plan(model: str, precision: str, offers: list[ServingOffer], **raw: object) -> ServingPlan:
    checked = parse_serving_input({**LOOSE, "model": model, "precision": precision, **raw})
    return plan_serving(checked.request, offers, GPUS, CAL, BANDS)


def test_405b_in_bf16_runs_on_two_a100_nodes_as_a_two_stage_pipeline() -> None:
    plan = _plan("llama3.1-405b", "bf16", [A100])
    assert plan.options, plan.unfit
    assert all(o.pp > 1 for o in plan.options)  # 810 GB of weights do not fit one node
    option = next(o for o in plan.options if o.pp == 2)
    assert (option.tp, option.ep, option.gpus_per_replica) == (8, 1, 16)
    assert option.instances == 2 * option.replicas
    assert option.gpus == 16 * option.replicas
    # A constant rate runs the peak all day: two instances per replica, every hour.
    assert option.usd_per_month == pytest.approx(option.instances * 40.0 * 730)
    assert option.network_gbits_per_s == 400.0


def test_every_option_counts_whole_instances_for_its_replicas() -> None:
    plan = _plan("deepseek-v3", "fp8", [A100, H100])
    assert {o.pp for o in plan.options} >= {2}
    for o in plan.options:
        assert o.instances * 8 == o.replicas * o.gpus_per_replica
        if o.gpus_per_replica > 8:
            assert o.instances == o.replicas * o.pp
            assert max(o.instances_by_hour) == o.instances
        assert o.ep in (1, o.gpus_per_replica) and o.ep <= o.tp * o.pp
        assert o.tp <= 8 and 8 % o.tp == 0


def test_expert_parallelism_is_ranked_for_a_mixture_of_experts_with_its_own_latency() -> None:
    plan = _plan("deepseek-v3", "fp8", [H100])
    wide = next(o for o in plan.options if o.ep > 1)
    narrow = next(o for o in plan.options if o.layout == Layout(wide.tp, wide.pp))
    assert wide.ep == wide.tp * wide.pp == 16
    assert wide.tpot_p99_ms != pytest.approx(narrow.tpot_p99_ms, rel=0.01)
    # Over 3,200 Gbit/s the experts read by both nodes at once beat the extra all-to-all.
    assert wide.tpot_p99_ms < narrow.tpot_p99_ms
    slow = _plan("deepseek-v3", "fp8", [_offer("H100 SXM5-80GB", "slow-8x", 55.0, 25.0)])
    slow_wide = next(o for o in slow.options if o.layout == wide.layout)
    assert slow_wide.tpot_p99_ms > wide.tpot_p99_ms


def test_a_dense_model_never_gets_expert_parallelism() -> None:
    plan = _plan("llama3.1-70b", "fp8", [H100])
    assert plan.options and all(o.ep == 1 for o in plan.options)


def test_one_gpu_instances_chain_into_a_pipeline_over_their_network() -> None:
    plan = _plan("llama3.1-70b", "bf16", [_offer("H100 SXM5-80GB", "1x", 4.0, 100.0, gpus=1)])
    assert plan.options and all(o.pp >= 2 and o.tp == 1 for o in plan.options)
    for o in plan.options:
        assert o.instances == o.replicas * o.pp == o.gpus


def _fits_from(pp: int):  # type: ignore[no-untyped-def]
    return lambda layout: layout.pp >= pp


def _kv_bound(layout: object) -> bool:
    return True


@pytest.mark.parametrize(("gpus", "is_moe", "fits", "is_kv_bound", "expected"), [
    (8, False, _fits_from(1), _kv_bound,
     [(1, 1, 1), (2, 1, 1), (4, 1, 1), (8, 1, 1), (8, 2, 1)]),
    # The scheduler's cap, not the KV cache, bounds the batch: no deeper pipeline is tried.
    (8, False, _fits_from(1), lambda layout: False,
     [(1, 1, 1), (2, 1, 1), (4, 1, 1), (8, 1, 1)]),
    (8, False, _fits_from(2), _kv_bound, [(8, 2, 1), (8, 4, 1)]),
    (8, False, _fits_from(4), _kv_bound, [(8, 4, 1), (8, 8, 1)]),
    (4, True, _fits_from(2), _kv_bound, [(4, 2, 1), (4, 4, 1), (4, 2, 8), (4, 4, 16)]),
    (1, False, _fits_from(1), _kv_bound, [(1, 1, 1), (1, 2, 1)]),
    (16, True, _fits_from(1), _kv_bound,
     [(1, 1, 1), (2, 1, 1), (4, 1, 1), (8, 1, 1), (8, 2, 1), (2, 1, 2), (4, 1, 4), (8, 1, 8),
      (8, 2, 16)]),
    (8, False, lambda layout: False, _kv_bound, []),
])
def test_candidate_layouts_are_bounded_and_whole(gpus: int, is_moe: bool, fits: object,
                                                 is_kv_bound: object,
                                                 expected: list[tuple[int, int, int]]) -> None:
    layouts = candidate_layouts(gpus, is_moe, fits, is_kv_bound)  # type: ignore[arg-type]
    assert [(lay.tp, lay.pp, lay.ep) for lay in layouts] == expected


def test_a_layout_packs_replicas_or_spans_instances_never_both() -> None:
    assert Layout(2).replicas_per_instance(8) == 4 and Layout(2).instances_for(5, 8) == 2
    assert Layout(8, 2).instances_per_replica(8) == 2 and Layout(8, 2).instances_for(3, 8) == 6
    assert Layout(8, 2).replicas_per_instance(16) == 1 and not Layout(8, 2).spans_instances(16)
    assert Layout(8, 2).replicas_in(5, 8) == 2
    assert layout_label(8, 2, 16) == "TP8 PP2 EP16"
    assert hourly_instances((3.0,) * 24, 1.0, 1, 2) == (6,) * 24
    with pytest.raises(ValueError, match="not both"):
        hourly_instances((3.0,) * 24, 1.0, 2, 2)
    with pytest.raises(ValueError, match="ep cannot exceed"):
        Layout(8, 2, 32)


def test_gpus_per_replica_reads_the_same_for_stored_and_new_plans() -> None:
    """Page, report and table take a replica's GPUs from one formatter: a plan stored before
    pipelines were ranked (no pp, no gpus_per_replica) shows its TP degree."""
    assert serving_gpus_per_replica({"tp": 4}) == 4
    assert serving_gpus_per_replica({"tp": 8, "pp": 2}) == 16
    assert serving_gpus_per_replica({"tp": 8, "pp": 2, "gpus_per_replica": 16}) == 16
    assert serving_gpus_per_replica({"tp": 8, "pp": None}) == 8


def test_day_chart_and_report_show_the_same_three_configurations() -> None:
    """The page's 'Replicas over the day' and the report's series name the same cheapest three
    distinct GPU and layout configurations (a second offer of a configuration is skipped)."""
    from planner.reports.core.serving import _day_series
    from planner.serving.charts import replicas_day_figure

    def option(gpu: str, instance: str, tp: int, pp: int = 1) -> dict[str, object]:
        return {"gpu": gpu, "instance_type": instance, "tp": tp, "pp": pp, "ep": 1,
                "replicas_by_hour": [1] * 24}

    options = [option("H100", "p5", 8), option("H100", "a3", 8), option("H100", "p5", 8, 2),
               {**option("L4", "g6", 1), "replicas_by_hour": []}, option("A100", "p4d", 4),
               option("L40S", "g6e", 2)]
    figure = replicas_day_figure({"options": options})
    names = [trace.name for trace in figure.data]
    assert names == ["H100 TP8 PP1 EP1 (p5)", "H100 TP8 PP2 EP1 (p5)", "A100 TP4 PP1 EP1 (p4d)"]
    assert [series.name for series in _day_series(options)] == names
