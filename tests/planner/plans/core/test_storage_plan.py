"""The storage plan core: lifetimes in closed form equal the checkpoint-by-checkpoint sum,
retention parses and refuses, tiers obey their minimum durations, stalls follow the mode."""

import math

import numpy as np
import pandas as pd
import pytest

from planner.core.storage_tiers import parse_storage_prices
from planner.plans.core.storage import (
    ASYNC_STALL_FACTOR,
    Retention,
    StorageInputs,
    parse_retention,
    sum_clipped,
)
from planner.plans.core.storage_plan import storage_plans
from pricing.shipped_tables import STORAGE_PRICES_CSV

TIERS = parse_storage_prices(STORAGE_PRICES_CSV.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("first", "step", "count", "low", "high"), [
    (100.0, 3.0, 20, 0.0, math.inf), (100.0, 3.0, 40, 10.0, 50.0), (5.0, 0.0, 7, 8.0, 9.0),
    (50.0, 7.5, 3, 720.0, 1000.0), (1000.0, 1.0, 0, 0.0, 24.0), (30.0, 2.0, 10, 0.0, 12.0)])
def test_closed_form_sum_equals_the_sum_checkpoint_by_checkpoint(
        first: float, step: float, count: int, low: float, high: float) -> None:
    brute = sum(min(max(first - j * step, low), max(high, low)) for j in range(count))
    found = sum_clipped(np.array([first]), np.array([step]), np.array([float(count)]), low, high)
    assert found[0] == pytest.approx(brute)


def test_retention_reads_and_refuses_with_the_field_name() -> None:
    assert parse_retention("keep-last=3,milestone-days=7,delete-after-days=30") == Retention(
        3, 7.0, 30.0)
    assert parse_retention("keep-last=all").keep_last is None
    assert parse_retention(None) == Retention()
    for bad in ("keep-last=0", "keep=3", "keep-last=3,keep-last=4", "milestone-days=-1",
                "delete-after-days=soon", "keep-last=2.5"):
        with pytest.raises(ValueError, match="^retention: "):
            parse_retention(bad)


def _option(**extra: object) -> dict:
    return {"provider": "aws", "gpus": 64, "nodes": 8, "tp": 8, "pp": 2, "cp": 1,
            "zero_stage": 1, "precision": "bf16", "time_to_train_hours": 240.0,
            "checkpoint_interval_hours": math.nan, "expected_interruptions": 0.0,
            "storage_usd": 500.0, **extra}


def _inputs(**extra: object) -> StorageInputs:
    values: dict = {"params": 7e9, "checkpoint_gb": None, "dataset_gb": 0.0,
                    "retention": Retention(3), "storage_months": 0.0, "interval_hours": 1.0,
                    "failures_per_gpu_hour": 0.0} | extra
    return StorageInputs(**values)


def test_last_three_in_standard_is_three_checkpoints_for_the_run() -> None:
    plan = storage_plans(pd.DataFrame([_option()]), TIERS, _inputs())[0]
    assert plan["checkpoint_gb"] == pytest.approx(7e9 * 14 / 1e9)
    hot = plan["tiers"][0]
    # 237 superseded copies live 3 h; the last three (written at hours 238, 239, 240) live
    # to the end of the run at hour 240: 2, 1 and 0 h (nothing kept after it).
    gb_hours = 98.0 * (237 * 3 + 2 + 1 + 0)
    assert hot["tb_months"] == pytest.approx(gb_hours / 730 / 1000)
    standard = next(a for a in plan["alternatives"] if a["tier"] == "S3 Standard")
    puts = 240 * 64 * 0.005 / 1000
    assert standard["usd"] == pytest.approx(gb_hours / 730 * 0.023 + puts)


def test_a_tier_with_a_longer_minimum_is_never_chosen() -> None:
    for days in (5.0, 20.0, 29.0):
        inputs = _inputs(retention=Retention(None, 7.0, days), storage_months=6.0)
        plan = storage_plans(pd.DataFrame([_option()]), TIERS, inputs)[0]
        assert all(t["min_storage_days"] <= days for t in plan["tiers"])
    inputs = _inputs(retention=Retention(None, 7.0, 200.0), storage_months=12.0)
    plan = storage_plans(pd.DataFrame([_option()]), TIERS, inputs)[0]
    assert plan["tiers"][1]["min_storage_days"] >= 30  # long-lived milestones go colder


def test_async_writes_stall_less_and_zero_zero_writes_one_replica() -> None:
    sync = storage_plans(pd.DataFrame([_option(zero_stage=0)]), TIERS, _inputs())[0]
    fast = storage_plans(pd.DataFrame([_option(zero_stage=0)]), TIERS,
                         _inputs(is_async=True))[0]
    assert sync["files_per_checkpoint"] == 16  # tp 8 × pp 2 ranks of one replica
    assert sync["stall_seconds_per_checkpoint"] == pytest.approx(sync["write_seconds"])
    assert fast["stall_seconds_per_checkpoint"] == pytest.approx(
        sync["write_seconds"] * ASYNC_STALL_FACTOR)
    packed = storage_plans(pd.DataFrame([_option()]), TIERS,
                           _inputs(compression_ratio=2.0))[0]
    assert packed["stored_checkpoint_gb"] == pytest.approx(packed["checkpoint_gb"] / 2)


def test_a_provider_without_tier_prices_keeps_the_flat_price() -> None:
    plan = storage_plans(pd.DataFrame([_option(provider="lambda")]), TIERS, _inputs())[0]
    assert plan["tiers"] == [] and plan["total_usd"] == plan["flat_usd"] == 500.0
    assert "flat" in plan["note"]


def test_an_extreme_write_speed_gives_null_seconds_not_infinity() -> None:
    plan = storage_plans(pd.DataFrame([_option()]), TIERS,
                         _inputs(write_gbytes_per_s_per_node=1e-320))[0]
    assert plan["write_seconds"] is None and plan["stall_hours"] is None
    assert plan["tiers"][0]["usd"] > 0
