"""Per-format row converters: string columns of one chunk -> typed columns of the good rows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner.core.limits import MAX_GPUS_IN_USE, MAX_GPUS_PER_JOB
from planner.purchase_mix.core.upload.jobs import ParseError
from planner.purchase_mix.core.upload.parse_checks import TimeBounds, stamp
from planner.purchase_mix.core.upload.parse_values import (
    TimeSpec,
    is_blank,
    to_bool,
    to_duration_s,
    to_elapsed_s,
    to_epoch_s,
    to_float,
    to_gpu_count,
    trimmed,
    whole_seconds,
)

Column: TypeAlias = np.ndarray | pa.Array
GPU_COUNT_MESSAGE = f"not a whole number of GPUs from 0 to {MAX_GPUS_PER_JOB:,} per job"


@dataclass
class ChunkRows:
    """Typed columns of the rows kept from one chunk, plus the chunk's row counts."""

    columns: dict[str, Column]
    rows_read: int
    rows_bad: int
    ignored: Counter[str] = field(default_factory=Counter)
    lines: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


class RowChecks:
    """Collects row errors and ignore reasons for one chunk; rows flagged bad are dropped."""

    def __init__(self, line_numbers: np.ndarray, max_errors: int) -> None:
        self.line_numbers = line_numbers
        self.max_errors = max_errors
        self.is_active = np.ones(len(line_numbers), dtype=bool)
        self.is_bad = np.zeros(len(line_numbers), dtype=bool)
        self.errors: list[ParseError] = []
        self.error_count = 0
        self.ignored: Counter[str] = Counter()

    def add_error(self, line: int, field_name: str, message: str) -> None:
        self.error_count += 1
        if len(self.errors) < self.max_errors:
            self.errors.append(ParseError(line=int(line), field=field_name, message=message))

    def flag(self, mask: np.ndarray, field_name: str, message: str) -> None:
        mask = mask & self.is_active
        self.is_bad |= mask
        for line in self.line_numbers[mask][: self.max_errors]:
            self.add_error(int(line), field_name, message)

    def drop_blank(self, mask: np.ndarray) -> None:
        self.is_active &= ~mask

    def ignore(self, mask: np.ndarray, reason: str) -> None:
        mask = mask & self.is_active & ~self.is_bad
        if mask.any():
            self.ignored[reason] += int(mask.sum())
            self.is_active &= ~mask

    def finish(self, columns: Mapping[str, Column]) -> ChunkRows:
        keep = self.is_active & ~self.is_bad
        kept = {name: _take(values, keep) for name, values in columns.items()}
        self.errors.sort(key=lambda error: error.line)
        n_read = int(self.is_active.sum()) + sum(self.ignored.values())
        bad = int((self.is_bad & self.is_active).sum())
        return ChunkRows(kept, n_read, bad, self.ignored, self.line_numbers[keep])


def _take(values: Column, keep: np.ndarray) -> Column:
    if isinstance(values, np.ndarray):
        return values[keep]
    return values.filter(pa.array(keep))


Getter = Callable[[str], pa.Array]


def _getter(table: pa.Table, columns: Mapping[str, str]) -> Getter:
    def get(name: str) -> pa.Array:
        return trimmed(table.column(columns[name]).combine_chunks())

    return get


def _drop_blank_rows(get: Getter, columns: Mapping[str, str], checks: RowChecks) -> None:
    """Drop blank rows; flag cells holding NUL, which no database text field (PostgreSQL)
    stores."""
    blank = np.ones(len(checks.line_numbers), dtype=bool)
    for name in columns:
        values = get(name)
        blank &= is_blank(values)
        has_nul = pc.fill_null(pc.match_substring(values, "\x00"), False)
        checks.flag(np.asarray(has_nul), columns[name], "holds a NUL character (\\x00)")
    checks.drop_blank(blank)


def _checked(
    checks: RowChecks, parsed: tuple[np.ndarray, np.ndarray], column: str, message: str
) -> np.ndarray:
    values, is_bad = parsed
    checks.flag(is_bad, column, message)
    return values


def _time_message(spec: TimeSpec) -> str:
    if spec.origin_epoch_s is None:
        return "not an ISO-8601 timestamp"
    return "not a number (offset from the origin)"


_BARE_NUMBER = r"^[+-]?[0-9]+(\.[0-9]*)?$"


def _times(
    values: pa.Array, checks: RowChecks, column: str, spec: TimeSpec, bounds: TimeBounds,
    *, skip: np.ndarray | None = None,
) -> np.ndarray:
    """Epoch seconds of one time column; bare numbers without an origin and times outside
    `bounds` are row errors naming the column (except on the rows `skip` marks)."""
    keep = np.ones(len(values), dtype=bool) if skip is None else ~skip
    seconds, is_bad = to_epoch_s(values, spec)
    is_number = np.zeros(len(values), dtype=bool)
    if spec.origin_epoch_s is None:
        found = pc.match_substring_regex(values, _BARE_NUMBER).to_numpy(zero_copy_only=False)
        is_number = np.asarray(found, dtype=bool)
        checks.flag(
            is_number & keep, column,
            "a bare number: numeric times need an origin (and a time unit) to count from",
        )
    checks.flag(is_bad & ~is_number & keep, column, _time_message(spec))
    is_bad = is_bad | is_number | ~keep
    early, late = bounds.out_of_range(seconds)
    checks.flag(early & ~is_bad, column, f"before {stamp(bounds.earliest_epoch_s)}: "
                "check the year, time unit and origin")
    if bounds.latest_epoch_s is not None:
        checks.flag(late & ~is_bad, column, f"after {stamp(bounds.latest_epoch_s)} "
                    "(more than a year ahead): check the time unit and origin")
    return seconds


def _optional_text(get: Getter, columns: Mapping[str, str], name: str) -> pa.Array | None:
    if name not in columns:
        return None
    values = get(name)
    return pc.if_else(pc.equal(pc.utf8_length(values), 0), pa.scalar(None, pa.string()), values)


def _gpu_type(
    values: pa.Array | None, checks: RowChecks, column: str, default_gpu_type: str | None
) -> pa.Array:
    n_rows = len(checks.line_numbers)
    if values is None:
        values = pa.nulls(n_rows, pa.string())
    if default_gpu_type is not None:
        return values.fill_null(default_gpu_type)
    checks.flag(~np.asarray(values.is_valid()), column, "no GPU type (pass a default GPU type)")
    return values.fill_null("")


def _job_end(
    get: Getter,
    columns: Mapping[str, str],
    start: np.ndarray,
    checks: RowChecks,
    spec: TimeSpec,
    bounds: TimeBounds,
) -> np.ndarray:
    if "end" in columns:
        end = _times(get("end"), checks, columns["end"], spec, bounds)
        checks.flag(end < start, columns["end"], "end is before start")
        return end
    duration = _checked(
        checks, to_duration_s(get("duration"), spec), columns["duration"],
        "not a duration: a number >= 0, and not too large to be one",
    )
    end = cast(np.ndarray, start + duration)
    if bounds.latest_epoch_s is not None:
        checks.flag(end > bounds.latest_epoch_s, columns["duration"],
                    f"the job would end after {stamp(bounds.latest_epoch_s)}: check the unit")
    return end


def _submit(values: pa.Array, start: np.ndarray, checks: RowChecks, column: str,
            spec: TimeSpec, bounds: TimeBounds) -> np.ndarray:
    """When each job was submitted (asked for its GPUs): a blank is its start (it did not
    wait); after its start is a row error naming the column."""
    blank = np.asarray(is_blank(values), dtype=bool)
    submit = np.where(blank, start, _times(values, checks, column, spec, bounds, skip=blank))
    checks.flag(~blank & (submit > start), column, "submitted after the job started")
    return submit


def _line_ids(checks: RowChecks) -> pa.Array:
    return pa.array(checks.line_numbers.astype(str))


def convert_jobs(
    table: pa.Table,
    checks: RowChecks,
    *,
    columns: Mapping[str, str],
    time_spec: TimeSpec,
    default_gpu_type: str | None,
    bounds: TimeBounds,
) -> ChunkRows:
    """Generic and mapped job rows."""
    get = _getter(table, columns)
    _drop_blank_rows(get, columns, checks)
    start = _times(get("start"), checks, columns["start"], time_spec, bounds)
    end = _job_end(get, columns, start, checks, time_spec, bounds)
    gpu_count = _checked(
        checks, to_gpu_count(get("gpu_count")), columns["gpu_count"], GPU_COUNT_MESSAGE
    )
    gpu_type = _gpu_type(
        _optional_text(get, columns, "gpu_type"),
        checks,
        columns.get("gpu_type", "gpu_type"),
        default_gpu_type,
    )
    is_interruptible = np.zeros(len(start), dtype=bool)
    if "interruptible" in columns:
        is_interruptible = _checked(
            checks,
            to_bool(get("interruptible")),
            columns["interruptible"],
            "not a boolean (true/false/1/0)",
        )
    checks.ignore(gpu_count == 0, "no GPUs")
    job_id = get("job_id") if "job_id" in columns else _line_ids(checks)
    out: dict[str, Column] = {
        "job_id": job_id,
        "start_epoch_s": start,
        "end_epoch_s": end,
        "gpu_count": gpu_count,
        "gpu_type": gpu_type,
        "is_interruptible": is_interruptible,
    }
    if "submit" in columns:
        out["submit_epoch_s"] = _submit(get("submit"), start, checks, columns["submit"],
                                        time_spec, bounds)
    for name in ("team", "user", "provider", "region"):
        text = _optional_text(get, columns, name)
        if text is not None:
            out[name] = text
    return checks.finish(out)


def convert_usage(
    table: pa.Table,
    checks: RowChecks,
    *,
    columns: Mapping[str, str],
    time_spec: TimeSpec,
    default_gpu_type: str | None,
    bounds: TimeBounds,
) -> ChunkRows:
    """Usage series rows: timestamp, gpu_type, gpus_in_use."""
    get = _getter(table, columns)
    _drop_blank_rows(get, columns, checks)
    when = _times(get("timestamp"), checks, columns["timestamp"], time_spec, bounds)
    gpus, is_bad = to_float(get("gpus_in_use"))
    is_bad |= (gpus < 0) | (gpus > MAX_GPUS_IN_USE)
    checks.flag(is_bad, columns["gpus_in_use"], f"not a number from 0 to {MAX_GPUS_IN_USE:,}")
    gpu_type = _gpu_type(
        _optional_text(get, columns, "gpu_type"),
        checks,
        columns.get("gpu_type", "gpu_type"),
        default_gpu_type,
    )
    out: dict[str, Column] = {
        "timestamp_epoch_s": when,
        "gpu_type": gpu_type,
        "gpus_in_use": np.where(is_bad, 0.0, gpus).astype(np.float32),
    }
    return checks.finish(out)


_TRES_UNTYPED = r"(?:^|,)gres/gpu=(?P<n>\d+)"
_TRES_TYPED = r"(?:^|,)gres/gpu:(?P<t>[^=,]+)=(?P<n>\d+)"
_GRES_UNTYPED = r"(?:^|,)gpu:(?P<n>\d+)"
_GRES_TYPED = r"(?:^|,)gpu:(?P<t>[^:,(]+):(?P<n>\d+)"
SLURM_GPU_PATTERNS: tuple[tuple[str, str, str], ...] = (
    ("AllocTRES", _TRES_UNTYPED, _TRES_TYPED),
    ("ReqTRES", _TRES_UNTYPED, _TRES_TYPED),
    ("AllocGRES", _GRES_UNTYPED, _GRES_TYPED),
    ("ReqGRES", _GRES_UNTYPED, _GRES_TYPED),
)


def _slurm_gpus(get: Getter, columns: Mapping[str, str], checks: RowChecks
                ) -> tuple[np.ndarray, pa.Array]:
    """GPU count and type: AllocTRES first, then ReqTRES, AllocGRES, ReqGRES. A count above
    MAX_GPUS_PER_JOB is flagged on the column it came from."""
    n_rows = len(get("JobID"))
    count = np.zeros(n_rows, dtype=np.int64)
    gpu_type = pa.nulls(n_rows, pa.string())
    for name, untyped, typed in SLURM_GPU_PATTERNS:
        if name not in columns:
            continue
        found_count, found_type = _gpu_parts(get(name), untyped, typed)
        is_new = (count == 0) & (found_count > 0)
        checks.flag(is_new & (found_count > MAX_GPUS_PER_JOB), name, GPU_COUNT_MESSAGE)
        count = np.where(is_new, found_count, count)
        gpu_type = pc.if_else(pa.array(is_new), found_type, gpu_type)
    return count, gpu_type


def _gpu_parts(values: pa.Array, untyped: str, typed: str) -> tuple[np.ndarray, pa.Array]:
    """Count from the untyped entry (else the typed one) and the typed entry's GPU name."""
    total, _ = to_float(pc.struct_field(pc.extract_regex(values, untyped), "n").fill_null("0"))
    typed_parts = pc.extract_regex(values, typed)
    typed_count, _ = to_float(pc.struct_field(typed_parts, "n").fill_null("0"))
    count = np.where(total > 0, total, typed_count)
    # Clipped above the bound so a 30-digit count cannot wrap the int64 (flagged by the caller).
    count = np.minimum(np.nan_to_num(count), MAX_GPUS_PER_JOB + 1)
    return count.astype(np.int64), pc.struct_field(typed_parts, "t")


_ISO = TimeSpec(origin_epoch_s=None, unit_seconds=1.0)


def _is_unknown(values: pa.Array) -> np.ndarray:
    unknown = pc.is_in(values, value_set=pa.array(["", "Unknown", "None"]))
    return np.asarray(unknown.to_numpy(zero_copy_only=False), dtype=bool)


def _slurm_end(
    get: Getter, columns: Mapping[str, str], start: np.ndarray, checks: RowChecks
) -> np.ndarray:
    n_rows = len(start)
    end = np.zeros(n_rows, dtype=np.int64)
    is_known = np.zeros(n_rows, dtype=bool)
    is_running = np.zeros(n_rows, dtype=bool)
    if "End" in columns:
        end_text = get("End")
        is_running = _is_unknown(end_text)
        end, is_bad = to_epoch_s(end_text, _ISO)
        is_known = ~is_bad
    for name in ("ElapsedRaw", "Elapsed"):
        if name in columns:
            parse = to_float if name == "ElapsedRaw" else to_elapsed_s
            elapsed, is_bad = whole_seconds(*parse(get(name)), np.rint)
            use = ~is_known & ~is_bad
            end = np.where(use, start + elapsed, end)
            is_known |= use
    checks.ignore(~is_known & is_running, "still running")
    checks.flag(~is_known, columns.get("End", "End"), "no end time or elapsed time")
    checks.flag(is_known & (end < start), columns.get("End", "End"), "end is before start")
    return end


def convert_slurm(
    table: pa.Table,
    checks: RowChecks,
    *,
    columns: Mapping[str, str],
    time_spec: TimeSpec,
    default_gpu_type: str | None,
    bounds: TimeBounds,
) -> ChunkRows:
    """sacct --parsable2 rows: one per job; step rows (JobID with a dot) are ignored."""
    get = _getter(table, columns)
    _drop_blank_rows(get, columns, checks)
    job_id = get("JobID")
    checks.ignore(
        np.asarray(pc.match_substring(job_id, ".").to_numpy(zero_copy_only=False)), "job step rows"
    )
    start_text = get("Start")
    checks.ignore(_is_unknown(start_text), "never started")
    start = _times(start_text, checks, "Start", _ISO, bounds)
    end = _slurm_end(get, columns, start, checks)
    if bounds.latest_epoch_s is not None:
        checks.flag(end > bounds.latest_epoch_s, columns.get("End", "End"),
                    f"after {stamp(bounds.latest_epoch_s)} (more than a year ahead)")
    gpu_count, typed = _slurm_gpus(get, columns, checks)
    checks.ignore(gpu_count == 0, "no GPUs")
    gpu_type = _gpu_type(typed, checks, "AllocTRES", default_gpu_type)
    state = get("State") if "State" in columns else pa.nulls(len(start), pa.string())
    is_interruptible = np.asarray(
        pc.fill_null(pc.match_substring_regex(state, "^(PREEMPTED|REQUEUED)"), False).to_numpy(
            zero_copy_only=False
        ),
        dtype=bool,
    )
    out: dict[str, Column] = {
        "job_id": job_id,
        "start_epoch_s": start,
        "end_epoch_s": end,
        "gpu_count": gpu_count.astype(np.int32),
        "gpu_type": gpu_type,
        "is_interruptible": is_interruptible,
    }
    if "Submit" in columns:
        submitted = get("Submit")
        submitted = pc.if_else(pa.array(_is_unknown(submitted)), pa.scalar("", pa.string()),
                               submitted)
        out["submit_epoch_s"] = _submit(submitted, start, checks, "Submit", _ISO, bounds)
    for name, source in (("team", "Account"), ("user", "User")):
        text = _optional_text(get, columns, source)
        if text is not None:
            out[name] = text
    return checks.finish(out)


Converter = Callable[..., ChunkRows]
CONVERTERS: dict[str, Converter] = {
    "generic": convert_jobs,
    "usage": convert_usage,
    "slurm": convert_slurm,
}
