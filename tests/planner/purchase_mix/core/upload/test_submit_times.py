"""A history's submit times (Slurm's Submit, a generic or mapped `submit` column): kept beside
the starts, checked, merged with duplicates, and read by the capacity replay as arrivals."""

import io
from typing import Any

import numpy as np
import pandas as pd

from planner.capacity.core.jobs import pool_jobs_from_frame
from planner.purchase_mix.core.upload.jobs import JobHistory
from planner.purchase_mix.core.upload.parsing import parse_job_history

EPOCH_2024 = 1_704_067_200  # 2024-01-01T00:00:00Z


def _parse(text: str, fmt: str = "generic", **options: object) -> Any:
    return parse_job_history(io.BytesIO(text.encode()), fmt, **options)  # type: ignore[arg-type]


def _jobs(text: str, fmt: str = "generic", **options: object) -> pd.DataFrame:
    """The jobs of a file that parses."""
    result = _parse(text, fmt, **options)
    assert isinstance(result.history, JobHistory), result.errors
    return result.history.jobs


def test_a_generic_submit_column_is_kept_and_a_blank_one_is_the_start() -> None:
    jobs = _jobs(
        "job_id,submit,start,end,gpu_type,gpu_count\n"
        "a,2024-01-01T00:00:00Z,2024-01-01T02:00:00Z,2024-01-01T05:00:00Z,A100,8\n"
        "b,,2024-01-01T03:00:00Z,2024-01-01T04:00:00Z,A100,4\n")
    assert list(jobs["submit_epoch_s"]) == [EPOCH_2024, EPOCH_2024 + 3 * 3600]
    assert list(jobs["start_epoch_s"]) == [EPOCH_2024 + 2 * 3600, EPOCH_2024 + 3 * 3600]


def test_a_job_submitted_after_it_started_is_a_row_error_naming_the_column() -> None:
    result = _parse(
        "job_id,queued_at,start,end,gpu_type,gpu_count\n"
        "a,2024-01-01T03:00:00Z,2024-01-01T02:00:00Z,2024-01-01T05:00:00Z,A100,8\n"
        "b,yesterday,2024-01-01T03:00:00Z,2024-01-01T04:00:00Z,A100,4\n",
        "mapped", mapping={"submit": "queued_at"})
    assert result.history is None
    assert [(e.line, e.field, e.message) for e in result.errors] == [
        (2, "queued_at", "submitted after the job started"),
        (3, "queued_at", "not an ISO-8601 timestamp")]


def test_slurm_submit_is_read_and_unknown_means_the_start() -> None:
    jobs = _jobs(
        "JobID|Submit|Start|End|State|AllocTRES\n"
        "1|2024-01-01T00:00:00|2024-01-01T06:00:00|2024-01-01T08:00:00|COMPLETED|gres/gpu=8\n"
        "2|Unknown|2024-01-01T07:00:00|2024-01-01T09:00:00|COMPLETED|gres/gpu=2\n",
        "slurm", default_gpu_type="A100")
    assert list(jobs["submit_epoch_s"]) == [EPOCH_2024, EPOCH_2024 + 7 * 3600]


def test_merged_duplicates_keep_the_earliest_submit() -> None:
    jobs = _jobs(
        "job_id,submit,start,end,gpu_type,gpu_count\n"
        "a,2024-01-01T01:00:00Z,2024-01-01T02:00:00Z,2024-01-01T03:00:00Z,A100,8\n"
        "a,2024-01-01T00:00:00Z,2024-01-01T04:00:00Z,2024-01-01T05:00:00Z,A100,8\n",
        duplicate_ids="merge")
    assert list(jobs["submit_epoch_s"]) == [EPOCH_2024]
    assert list(jobs["start_epoch_s"]) == [EPOCH_2024 + 2 * 3600]


def test_the_capacity_replay_takes_jobs_at_submit_for_their_run_time() -> None:
    jobs = _jobs(
        "job_id,submit,start,end,gpu_type,gpu_count\n"
        "late,2024-01-01T03:00:00Z,2024-01-01T03:00:00Z,2024-01-01T04:00:00Z,A100,4\n"
        "queued,2024-01-01T00:00:00Z,2024-01-01T05:00:00Z,2024-01-01T07:00:00Z,A100,8\n")
    pool = pool_jobs_from_frame(jobs, "A100")
    # Arrival order is submit order; the 5 hours "queued" waited elsewhere are not run time.
    assert list(pool.submit_s) == [EPOCH_2024, EPOCH_2024 + 3 * 3600]
    assert list(pool.duration_s) == [2 * 3600, 3600]
    assert list(pool.gpus) == [8, 4]
    # Without the column the start is the arrival (the no-wait reading).
    starts_only = pool_jobs_from_frame(jobs.drop(columns="submit_epoch_s"), "A100")
    assert np.array_equal(starts_only.submit_s, [EPOCH_2024 + 3 * 3600, EPOCH_2024 + 5 * 3600])
