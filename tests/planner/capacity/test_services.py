"""Capacity sweeps of a stored, analysed history: one task or split into parts (eagerly
here; tests/integration/test_capacity_worker.py runs the parts on a real worker)."""

import math

import pytest

from planner.capacity import services
from planner.capacity.models import CapacityPart, CapacityRun
from planner.purchase_mix.models import History
from tests.planner.capacity.conftest import SMALL_SWEEP


def _sweep(history, raw, callbacks):
    with callbacks(execute=True):
        run = services.capacity_create(history=history, raw=raw)
    run.refresh_from_db()
    return run


def test_a_sweep_recommends_the_cheapest_point_meeting_the_target(
        analysed, django_capture_on_commit_callbacks):
    run = _sweep(analysed, {**SMALL_SWEEP, "target_p95_wait_hours": 2},
                 django_capture_on_commit_callbacks)
    assert run.status == CapacityRun.Status.DONE, run.error
    doc = run.result
    assert doc["gpu_type"] == "V100" and len(doc["points"]) == 4 * 3
    # 16.5 days of history: the buying rule commits nothing, so the one buyable pool (0 GPUs,
    # every job in the cloud) is recommended, and the purchase says why.
    assert doc["recommended"]["pool_gpus"] == 0
    assert doc["recommended"] == doc["points"][doc["recommended_index"]]
    # Pool 0 is all on demand, at the cheapest on-demand V100 GPU-hour in the offer's place
    # (p3.16xlarge, $3.06), not the committed p3dn.24xlarge's ($3.90) the purchase mix uses.
    analysis = analysed.runs.get().result["hindsight_reference"]["plans"][0]["expected"]
    zero = doc["points"][0]
    assert zero["pool_gpus"] == 0
    burst = doc["prices"]["on_demand_usd_per_gpu_hour"]
    assert burst == pytest.approx(3.06)
    assert doc["prices"]["sources"][1]["instance_type"] == "p3.16xlarge"
    assert zero["total_usd"] == pytest.approx(doc["gpu_hours"] * burst, rel=1e-9)
    assert zero["total_usd"] == pytest.approx(
        analysis["all_on_demand_cost_usd"] * 3.06 / 3.90, rel=1e-3)
    names = [a["name"] for a in doc["against"]]
    assert names == ["all on demand", "what to buy now", "no-wait hindsight optimum"]
    references = doc["no_wait_references"]
    assert doc["against"][1]["reference"]["pool_gpus"] == references["what to buy now"]
    # Neither the purchase mix nor its hindsight reference commits on 16.5 days.
    assert doc["no_wait_pool_gpus"] == 0 == references[names[2]]
    purchase = doc["purchase"]
    assert purchase["lines"] == [] and purchase["gpus"] == 0
    assert "16.5 days" in purchase["reasons"][0] and "30 days" in purchase["reasons"][0]
    assert {s["purchase_option"] for s in doc["prices"]["sources"]} >= {"on_demand"}
    assert all(s["as_of"] for s in doc["prices"]["sources"])


def test_a_large_sweep_splits_into_parts_and_merges_in_grid_order(
        analysed, django_capture_on_commit_callbacks, settings):
    whole = _sweep(analysed, SMALL_SWEEP, django_capture_on_commit_callbacks)
    settings.CAPACITY_PART_JOB_POINTS = 15_000  # ~5,000 jobs x 12 points: 4 parts
    split = _sweep(analysed, SMALL_SWEEP, django_capture_on_commit_callbacks)
    assert split.status == CapacityRun.Status.DONE, split.error
    assert split.result["points"] == whole.result["points"]
    assert split.result["recommended"] == whole.result["recommended"]
    assert not CapacityPart.objects.exists()  # merged and removed


def test_a_second_delivery_of_a_finished_sweep_does_nothing(
        analysed, django_capture_on_commit_callbacks):
    run = _sweep(analysed, SMALL_SWEEP, django_capture_on_commit_callbacks)
    finished_at = run.finished_at
    services.capacity_execute(run_id=run.pk, attempt=services.Attempt())
    run.refresh_from_db()
    assert run.finished_at == finished_at and run.attempts == 1


def test_owned_hardware_prices_the_pool(analysed, django_capture_on_commit_callbacks):
    owned = {"purchase_usd_per_gpu": 8766.0, "lifetime_years": 1, "power_kw_per_gpu": 0.5,
             "pue": 2, "usd_per_kwh": 0.1, "network_pct": 0, "storage_pct": 0,
             "space_usd_per_kw_month": 0, "staff_usd_per_gpu_year": 0,
             "cost_of_capital_pct": 0, "resale_pct": 0}
    run = _sweep(analysed, {**SMALL_SWEEP, "pool_price": "owned", "owned": owned},
                 django_capture_on_commit_callbacks)
    prices = run.result["prices"]
    assert prices["pool_usd_per_gpu_hour"] == pytest.approx(1.0 + 0.5 * 2 * 0.1)
    source = prices["sources"][0]
    assert source["basis"] == "estimated"
    assert {f["label"] for f in source["figures"]} == {"your input"}


def test_owned_hardware_defaults_per_gpu_type_say_their_source(
        analysed, django_capture_on_commit_callbacks):
    run = _sweep(analysed, {**SMALL_SWEEP, "pool_price": "owned",
                            "owned": {"purchase_usd_per_gpu": 9000}},
                 django_capture_on_commit_callbacks)
    source = run.result["prices"]["sources"][0]
    figures = {f["key"]: f for f in source["figures"]}
    assert figures["purchase_usd_per_gpu"]["label"] == "your input"
    assert figures["purchase_usd_per_gpu"]["value"] == 9000
    # V100: NVIDIA DGX-1's 3.5 kW over 8 GPUs, not the H100's 1.2 kW
    power = figures["power_kw_per_gpu"]
    assert power["value"] == pytest.approx(0.4375) and power["basis"] == "default"
    assert power["label"].startswith("default (NVIDIA DGX-1 datasheet")
    assert figures["resale_pct"]["label"].startswith("default (assumption")
    names = [line["name"] for line in source["lines"]]
    assert names == ["hardware, depreciated", "network", "storage", "resale value",
                     "cost of capital", "power", "space and cooling", "staff"]
    assert sum(line["usd_per_gpu_hour"] for line in source["lines"]) == pytest.approx(
        run.result["prices"]["pool_usd_per_gpu_hour"])
    assert next(line for line in source["lines"] if line["name"] == "resale value")[
        "usd_per_gpu_hour"] < 0


@pytest.mark.parametrize(("raw", "field"), [
    ({"pool_gpus": "4,x"}, "pool_gpus"), ({"policies": ["lazy"]}, "policy"),
    ({"max_wait_hours": ["-1"]}, "max_wait_hours"), ({"gpu_type": "H100"}, "gpu_type"),
    ({"pool_price": "gold"}, "pool_price"),
    ({"pool_price": "owned", "owned": {"pue": 0.5}}, "pue"),
])
def test_bad_inputs_are_refused_naming_the_field(analysed, raw, field):
    with pytest.raises(ValueError, match=f"^{field}:"):
        services.capacity_create(history=analysed, raw=raw)
    assert not CapacityRun.objects.exists()


def test_an_unanalysed_history_is_refused(user, db):
    history = History.objects.create(
        owner=user, name="x.csv", fmt="generic", size_bytes=1, rows_read=1, records=1,
        encoding="utf-8", delimiter=",", gpu_types=["A100"])
    with pytest.raises(ValueError, match="^history: analyse"):
        services.capacity_create(history=history, raw={})


def test_infinite_wait_is_stored_and_read_back(analysed, django_capture_on_commit_callbacks):
    run = _sweep(analysed, {"pool_gpus": [96], "policies": ["constant"],
                            "max_wait_hours": ["inf"]}, django_capture_on_commit_callbacks)
    point = next(p for p in run.result["points"] if p["pool_gpus"] == 96)
    assert point["max_wait_hours"] == "inf" and point["jobs_burst"] == 0
    assert math.isinf(float(point["max_wait_hours"]))


def test_a_sweep_over_the_points_bound_is_refused_before_it_is_stored(analysed):
    sizes = ",".join(str(n) for n in range(0, 800, 4))  # 200 sizes x 2 x (1 + 2 x 10) = 8,400
    raw = {"pool_gpus": sizes, "disciplines": ["fifo", "backfill"],
           "max_wait_hours": ",".join(str(t) for t in range(1, 11))}
    with pytest.raises(ValueError, match=r"^pool_gpus: the sweep has 8,400 points .*; at most "
                                         r"2,000: give fewer pool sizes or limits$"):
        services.capacity_create(history=analysed, raw=raw)
    assert not CapacityRun.objects.exists()


def test_a_sweep_over_the_work_bound_is_refused_saying_how_many_points_fit(
        analysed, monkeypatch, django_capture_on_commit_callbacks):
    monkeypatch.setattr("planner.capacity.core.frontier.MAX_CAPACITY_JOB_POINTS",
                        analysed.records * 5)
    assert analysed.gpu_types == ["V100"]  # one type: every job is swept, known at once
    with pytest.raises(ValueError, match=rf"^pool_gpus: 12 points x {analysed.records:,} jobs "
                                         r".*: give at most 5 points, or a shorter history$"):
        services.capacity_create(history=analysed, raw=SMALL_SWEEP)
    assert not CapacityRun.objects.exists()


def test_a_part_out_of_memory_fails_the_sweep_and_does_not_raise(
        analysed, django_capture_on_commit_callbacks, settings, monkeypatch):
    # raised, the MemoryError reached Celery, which stops the whole worker on it
    def out_of_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(services, "sweep_points", out_of_memory)
    settings.CAPACITY_PART_JOB_POINTS = 15_000  # 4 parts
    run = _sweep(analysed, SMALL_SWEEP, django_capture_on_commit_callbacks)
    assert run.status == CapacityRun.Status.FAILED
    assert run.error.startswith("sweep part 1 of 4: ran out of memory: the input needs more")
    assert not CapacityPart.objects.exists()
