import numpy as np
import pandas as pd
import pytest

from planner.purchase_mix.core.demand import hourly_demand, split_hourly_demand
from planner.purchase_mix.core.upload.jobs import JobHistory, UsageHistory


def _history(rows):
    frame = pd.DataFrame(
        rows, columns=["start_epoch_s", "end_epoch_s", "gpu_count", "gpu_type", "is_interruptible"]
    )
    return JobHistory.from_frame(frame)


def test_partial_hours_count_fractional_gpu_hours():
    history = _history(
        [
            (1800, 3 * 3600 + 900, 2, "A", False),
            (3600, 7200, 1, "A", True),
            (0, 10800, 4, "B", False),
            (7200, 7200, 3, "A", False),
        ]
    )
    demand = split_hourly_demand(history)
    np.testing.assert_allclose(demand.firm_gpus["A"], [1.0, 2.0, 2.0, 0.5])
    np.testing.assert_allclose(demand.interruptible_gpus["A"], [0.0, 1.0, 0.0, 0.0])
    np.testing.assert_allclose(demand.firm_gpus["B"], [4.0, 4.0, 4.0, 0.0])
    assert str(demand.firm_gpus.index.tz) == "UTC"


def test_gpu_hours_are_conserved_on_random_jobs():
    rng = np.random.default_rng(1)
    start = rng.integers(0, 30 * 86400, 5000)
    end = start + rng.integers(0, 5 * 86400, 5000)
    gpus = rng.integers(1, 9, 5000)
    history = _history(
        list(
            zip(start, end, gpus, rng.choice(["A", "B"], 5000), rng.random(5000) < 0.3, strict=True)
        )
    )
    total = hourly_demand(history).to_numpy().sum()
    assert total == pytest.approx((gpus * (end - start)).sum() / 3600.0, rel=1e-12)


def test_usage_samples_hold_until_the_next_one():
    samples = pd.DataFrame(
        {
            "timestamp_epoch_s": np.array([0, 1800, 3600, 0], dtype=np.int64),
            "gpu_type": pd.Categorical(["A", "A", "A", "B"]),
            "gpus_in_use": np.array([2.0, 4.0, 6.0, 1.0], dtype=np.float32),
        }
    )
    demand = hourly_demand(UsageHistory(samples))
    np.testing.assert_allclose(demand["A"], [3.0, 3.0])  # last sample holds one median step
    np.testing.assert_allclose(demand["B"], [1.0, 0.0])


def test_bad_history_raises():
    with pytest.raises(ValueError):
        _history([(10, 5, 1, "A", False)])


def test_a_demand_grid_over_the_memory_bound_is_refused_before_it_is_allocated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from planner.core import limits
    from planner.purchase_mix.core.demand import bucket_gpu_seconds

    monkeypatch.setattr(limits, "MAX_ARRAY_BYTES", 64 * 1024)  # four 60-day grids: 88.6 KiB
    starts = np.array([0, 86_400 * 59], dtype=np.int64)
    says = (r"^the hourly demand grid \(2 series over 1,417 hours\) would need 0.1 MiB of "
            r"memory \(2 x 1,418 values\); at most 0.1 MiB per step: upload fewer GPU types")
    with pytest.raises(ValueError, match=says):
        bucket_gpu_seconds(starts, starts + 3600, np.ones(2), np.array([0, 1]), 2)
