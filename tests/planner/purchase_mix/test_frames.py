"""A stored history reads back as the frame that was parsed: the column-at-a-time loader gives
what pandas.read_parquet gives, for every kind of history and for the hourly demand."""

import io

import pandas as pd
import pytest
from django.core.files.storage import default_storage

from planner.purchase_mix.core.demand import split_hourly_demand
from planner.purchase_mix.core.upload.parsing import parse_job_history
from planner.purchase_mix.frames import frame_load, frame_save
from planner.purchase_mix.services import demand_frame
from tests.planner.conftest import GENERIC_CSV, HELIOS, PHILLY, PHILLY_MAP

SLURM_TEXT = (  # with submit times and an account per job
    "JobID|Submit|Start|End|State|Account|AllocTRES\n"
    "1|2024-03-01T08:00:00|2024-03-01T08:00:05|2024-03-03T10:12:40|PREEMPTED|a|gres/gpu=8\n"
    "2|2024-03-01T08:30:00|2024-03-01T09:00:00|2024-03-01T10:00:00|COMPLETED|b|gres/gpu=2\n"
)
NO_TEAM_CSV = "\n".join(line.rsplit(",", 1)[0] for line in GENERIC_CSV.splitlines()) + "\n"


PARSES = {
    "generic": lambda: parse_job_history(io.BytesIO(GENERIC_CSV.encode()), "generic"),
    "no team": lambda: parse_job_history(io.BytesIO(NO_TEAM_CSV.encode()), "generic"),
    "mapped": lambda: parse_job_history(
        PHILLY, "mapped", mapping=dict(item.split("=") for item in PHILLY_MAP.split(",")),
        time_unit="min", origin="2017-10-01", default_gpu_type="V100"),
    "slurm": lambda: parse_job_history(io.BytesIO(SLURM_TEXT.encode()), "slurm",
                                       default_gpu_type="V100"),
    "usage": lambda: parse_job_history(
        HELIOS, "usage", mapping={"timestamp": "time", "gpus_in_use": "running_gpu_num"},
        default_gpu_type="A100"),
}


@pytest.mark.parametrize("kind", list(PARSES))
def test_a_stored_history_reads_back_as_parsed(kind):
    parsed = PARSES[kind]()
    assert parsed.history is not None, parsed.errors[:3]
    history = parsed.history
    frame = history.jobs if kind != "usage" else history.samples
    demand = demand_frame(split_hourly_demand(history))
    demand.attrs["interruptible_job_gpus"] = {"A100": 2.5}
    for stored in (frame, demand):
        name = frame_save(f"histories/{kind}.parquet", stored)
        with default_storage.open(name, "rb") as handle:
            loaded = frame_load(handle)
        with default_storage.open(name, "rb") as handle:
            expected = pd.read_parquet(handle)
        pd.testing.assert_frame_equal(loaded, expected, check_exact=True)
        assert loaded.attrs == expected.attrs == stored.attrs
