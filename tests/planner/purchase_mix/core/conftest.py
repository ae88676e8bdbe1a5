from pathlib import Path

import pytest

from planner.purchase_mix.core.demand import HourlyDemand, split_hourly_demand
from planner.purchase_mix.core.upload.parsing import parse_job_history

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
TRACES = FIXTURES / "traces"
SLURM = FIXTURES / "job_formats" / "slurm_sacct"
PHILLY_MAPPING = {
    "start": "submit_time",
    "duration": "duration",
    "gpu_count": "num_gpu",
    "interruptible": "best_effort",
    "team": "user",
}


@pytest.fixture(scope="session")
def philly_demand() -> HourlyDemand:
    result = parse_job_history(
        TRACES / "chronus_philly_MIX1_rows1-5000.csv",
        "mapped",
        mapping=PHILLY_MAPPING,
        time_unit="min",
        origin="2017-10-01",
        default_gpu_type="P100",
    )
    assert result.history is not None
    return split_hourly_demand(result.history)


@pytest.fixture(scope="session")
def helios_demand() -> HourlyDemand:
    result = parse_job_history(
        TRACES / "helios_earth_vcvlY_sequence_first5000.csv",
        "usage",
        mapping={"timestamp": "time", "gpus_in_use": "running_gpu_num"},
        default_gpu_type="V100",
    )
    assert result.history is not None
    return split_hourly_demand(result.history)
