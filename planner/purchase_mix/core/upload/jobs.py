"""Job and usage histories: the compact tables every other core module reads.

Times are int64 seconds since the Unix epoch, UTC. Naive timestamps in uploads are read as UTC.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

JOB_COLUMNS: tuple[str, ...] = (
    "job_id",
    "start_epoch_s",
    "end_epoch_s",
    "gpu_count",
    "gpu_type",
    "is_interruptible",
    "team",
)
OPTIONAL_JOB_COLUMNS: tuple[str, ...] = ("user", "provider", "region")
USAGE_COLUMNS: tuple[str, ...] = ("timestamp_epoch_s", "gpu_type", "gpus_in_use")


class UploadSettingError(ValueError):
    """A file-level problem one upload setting causes or can fix.

    `setting` names it: "origin", "time_unit", "default_gpu_type", or "column:<field>" for
    the column a field is read from; `missing` lists fields no column provides.
    """

    def __init__(self, message: str, *, setting: str = "", missing: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.setting = setting
        self.missing = missing


def columns_in_words(header: tuple[str, ...], limit: int = 12) -> str:
    """"job_id, start, end and 3 more" (a header as people read it, never a Python list)."""
    names = [name or "(blank)" for name in header]
    if not names:
        return "none"
    shown = ", ".join(names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit} more"


def _require_columns(frame: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    missing = [name for name in columns if name not in frame.columns]
    if missing:
        raise ValueError(f"{what} is missing columns: {', '.join(missing)}")


def _as_category(values: pd.Series) -> pd.Series:
    if isinstance(values.dtype, pd.CategoricalDtype):
        return values
    return values.astype("category")


@dataclass(frozen=True)
class JobHistory:
    """One row per GPU job.

    Columns of `jobs`:
        job_id            str
        start_epoch_s     int64, job start, seconds since epoch (UTC)
        end_epoch_s       int64, job end (exclusive), >= start_epoch_s
        gpu_count         int32, GPUs held for the whole run, >= 0
        gpu_type          category, e.g. "A100-80GB"
        is_interruptible  bool, the job tolerates preemption (may run on spot)
        team              category, NaN when unknown
        user, provider, region   optional category columns
        submit_epoch_s    optional int64, when the job asked for its GPUs, <= start_epoch_s
                          (the capacity replay's arrival; the purchase mix reads starts)
    """

    jobs: pd.DataFrame

    def __post_init__(self) -> None:
        frame = self.jobs
        _require_columns(frame, JOB_COLUMNS, "job history")
        if len(frame) == 0:
            raise ValueError("job history has no jobs")
        expected = {"start_epoch_s": "int64", "end_epoch_s": "int64", "gpu_count": "int32"}
        for name, dtype in expected.items():
            if str(frame[name].dtype) != dtype:
                raise ValueError(f"column {name} must be {dtype}, got {frame[name].dtype}")
        if frame["is_interruptible"].dtype != np.bool_:
            raise ValueError("column is_interruptible must be bool")
        if bool((frame["end_epoch_s"] < frame["start_epoch_s"]).any()):
            raise ValueError("a job ends before it starts")
        if bool((frame["gpu_count"] < 0).any()):
            raise ValueError("gpu_count must be >= 0")
        if "submit_epoch_s" in frame.columns:
            if str(frame["submit_epoch_s"].dtype) != "int64":
                raise ValueError("column submit_epoch_s must be int64, got "
                                 f"{frame['submit_epoch_s'].dtype}")
            if bool((frame["submit_epoch_s"] > frame["start_epoch_s"]).any()):
                raise ValueError("a job starts before it was submitted")

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> JobHistory:
        """Coerce a loosely typed frame (team and is_interruptible optional) to the schema."""
        data = frame.copy()
        if "is_interruptible" not in data.columns:
            data["is_interruptible"] = False
        if "team" not in data.columns:
            data["team"] = pd.Series(pd.NA, index=data.index, dtype="str")
        if "job_id" not in data.columns:
            data["job_id"] = np.arange(len(data)).astype(str)
        data["job_id"] = data["job_id"].astype("str")
        data["start_epoch_s"] = data["start_epoch_s"].astype("int64")
        data["end_epoch_s"] = data["end_epoch_s"].astype("int64")
        data["gpu_count"] = data["gpu_count"].astype("int32")
        data["is_interruptible"] = data["is_interruptible"].astype(bool)
        if "submit_epoch_s" in data.columns:
            data["submit_epoch_s"] = data["submit_epoch_s"].astype("int64")
        for name in ("gpu_type", "team", *OPTIONAL_JOB_COLUMNS):
            if name in data.columns:
                data[name] = _as_category(data[name])
        keep = [name for name in (*JOB_COLUMNS, *OPTIONAL_JOB_COLUMNS, "submit_epoch_s")
                if name in data.columns]
        return cls(jobs=data[keep].reset_index(drop=True))

    @property
    def gpu_types(self) -> tuple[str, ...]:
        return tuple(str(name) for name in self.jobs["gpu_type"].cat.categories)


@dataclass(frozen=True)
class UsageHistory:
    """A demand time series, for teams with monitoring or billing data but no job list.

    Columns of `samples`:
        timestamp_epoch_s  int64, sample time, seconds since epoch (UTC)
        gpu_type           category
        gpus_in_use        float32, GPUs busy at that time (or averaged over the step), >= 0

    Each sample holds until the next sample of the same GPU type; the last sample of a type
    holds for that type's median sampling step (one hour if the type has a single sample).
    Usage carries no job durations and no interruptibility: all of it counts as firm demand.
    """

    samples: pd.DataFrame

    def __post_init__(self) -> None:
        _require_columns(self.samples, USAGE_COLUMNS, "usage history")
        if len(self.samples) == 0:
            raise ValueError("usage history has no samples")
        if str(self.samples["timestamp_epoch_s"].dtype) != "int64":
            raise ValueError("column timestamp_epoch_s must be int64")
        if bool((self.samples["gpus_in_use"] < 0).any()):
            raise ValueError("gpus_in_use must be >= 0")

    @property
    def gpu_types(self) -> tuple[str, ...]:
        return tuple(str(name) for name in self.samples["gpu_type"].cat.categories)


@dataclass(frozen=True)
class ParseError:
    """A row-level problem. `line` is the 1-based physical line (the header is line 1)."""

    line: int
    field: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "field": self.field, "message": self.message}


@dataclass(frozen=True)
class ParseResult:
    """Outcome of an upload parse.

    `history` is None when there were bad rows and `skip_bad_rows` was off: nothing is produced.
    `errors` holds at most `max_errors` entries; `error_count` counts them all.
    `rows_read` counts data rows (blank lines excluded), `rows_skipped` the bad rows dropped,
    `rows_ignored` the rows that are valid but carry no GPU demand (see `ignored_reasons`).
    """

    history: JobHistory | UsageHistory | None
    errors: tuple[ParseError, ...]
    rows_read: int
    rows_skipped: int
    rows_ignored: int = 0
    error_count: int = 0
    ignored_reasons: Mapping[str, int] = field(default_factory=dict)
    encoding: str = "utf-8"
    bad_rows: int = 0  # rows with at least one problem (error_count counts problems)
    delimiter: str = ","

    @property
    def is_ok(self) -> bool:
        return self.history is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe summary (the history itself is not included)."""
        return {
            "is_ok": self.is_ok,
            "errors": [error.to_dict() for error in self.errors],
            "error_count": self.error_count,
            "bad_rows": self.bad_rows,
            "rows_read": self.rows_read,
            "rows_skipped": self.rows_skipped,
            "rows_ignored": self.rows_ignored,
            "ignored_reasons": dict(self.ignored_reasons),
            "encoding": self.encoding,
            "delimiter": self.delimiter,
        }
