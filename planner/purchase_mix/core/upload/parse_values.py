"""Vectorized conversion of string columns; every converter returns (values, is_bad mask)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from planner.core.limits import MAX_GPUS_PER_JOB
from planner.purchase_mix.core.upload.jobs import UploadSettingError

SECONDS_PER_UNIT: dict[str, float] = {"s": 1.0, "min": 60.0, "h": 3600.0}
TRUE_WORDS = ("1", "true", "t", "yes", "y")
FALSE_WORDS = ("0", "false", "f", "no", "n", "")


@dataclass(frozen=True)
class TimeSpec:
    """How to read times: ISO timestamps (origin None) or numeric offsets from an origin.

    `unit_seconds` also scales numeric durations.
    """

    origin_epoch_s: int | None
    unit_seconds: float


def make_time_spec(time_unit: str | None, origin: str | None) -> TimeSpec:
    unit = time_unit or "s"
    if unit not in SECONDS_PER_UNIT:
        raise UploadSettingError(
            f"The time unit must be one of {', '.join(SECONDS_PER_UNIT)} (you gave {unit!r}).",
            setting="time_unit")
    if origin is None:
        return TimeSpec(origin_epoch_s=None, unit_seconds=SECONDS_PER_UNIT[unit])
    try:
        stamp = pd.Timestamp(origin)
    except ValueError as error:
        raise UploadSettingError(
            f"The origin must be a timestamp such as 2024-01-01T00:00:00Z (you gave {origin!r}).",
            setting="origin") from error
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return TimeSpec(origin_epoch_s=int(stamp.timestamp()), unit_seconds=SECONDS_PER_UNIT[unit])


def trimmed(values: pa.Array) -> pa.Array:
    return pc.utf8_trim_whitespace(values)


def is_blank(values: pa.Array) -> np.ndarray:
    return np.asarray(pc.equal(pc.utf8_length(values), 0).to_numpy(zero_copy_only=False))


def to_float(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Parse numbers; blanks and garbage are bad (NaN)."""
    try:
        numbers = pc.cast(values, pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        numbers = pd.to_numeric(values.to_pandas(), errors="coerce").to_numpy(dtype=np.float64)
    numbers = np.asarray(numbers, dtype=np.float64)
    return numbers, ~np.isfinite(numbers)


def _has_zone(values: pa.Array) -> bool:
    """Whether the first value carries a zone (Z or +hh:mm): try the zoned cast first, since a
    failed cast costs about as much as parsing the whole column."""
    first = str(values[0].as_py() or "") if len(values) else ""
    return first.endswith(("Z", "z")) or first[-6:-5] in ("+", "-")


def _iso_to_epoch_s(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    targets = [pa.timestamp("s"), pa.timestamp("s", tz="UTC")]
    for target in reversed(targets) if _has_zone(values) else targets:
        try:
            stamps = pc.cast(values, target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
        if stamps.null_count == 0:
            seconds = stamps.cast(pa.int64()).to_numpy(zero_copy_only=False)
            return seconds, np.zeros(len(values), dtype=bool)
    parsed = pd.to_datetime(values.to_pandas(), format="ISO8601", utc=True, errors="coerce")
    is_bad = parsed.isna().to_numpy()
    filled = parsed.fillna(pd.Timestamp(0, tz="UTC")).dt.tz_convert(None)
    seconds = filled.to_numpy().astype("datetime64[s]").astype(np.int64)
    return seconds, is_bad


# Seconds beyond this are no time a history holds (about 31 million years): bad values, and
# safe to cast to int64.
MAX_ABS_SECONDS = 1e15


def whole_seconds(seconds: np.ndarray, is_bad: np.ndarray, rounding: np.ufunc
                   ) -> tuple[np.ndarray, np.ndarray]:
    is_bad = is_bad | ~(np.abs(seconds) <= MAX_ABS_SECONDS)  # also NaN and inf
    return rounding(np.where(is_bad, 0.0, seconds)).astype(np.int64), is_bad


def to_epoch_s(values: pa.Array, spec: TimeSpec) -> tuple[np.ndarray, np.ndarray]:
    """Times as int64 epoch seconds (UTC); naive timestamps are taken as UTC."""
    if spec.origin_epoch_s is None:
        return _iso_to_epoch_s(values)
    offsets, is_bad = to_float(values)
    with np.errstate(over="ignore"):  # an overflow gives inf, which whole_seconds refuses
        seconds = np.where(is_bad, 0.0, offsets) * spec.unit_seconds + spec.origin_epoch_s
    return whole_seconds(seconds, is_bad, np.floor)


def to_duration_s(values: pa.Array, spec: TimeSpec) -> tuple[np.ndarray, np.ndarray]:
    amounts, is_bad = to_float(values)
    is_bad |= amounts < 0
    with np.errstate(over="ignore"):
        seconds = np.where(is_bad, 0.0, amounts) * spec.unit_seconds
    return whole_seconds(seconds, is_bad, np.rint)


def to_gpu_count(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Whole GPU counts from 0 to MAX_GPUS_PER_JOB (planner.core.limits)."""
    counts, is_bad = to_float(values)
    is_bad |= (counts < 0) | (counts != np.round(counts)) | (counts > MAX_GPUS_PER_JOB)
    return np.where(is_bad, 0, counts).astype(np.int32), is_bad


def to_bool(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    lowered = pc.utf8_lower(values)
    is_true = pc.is_in(lowered, value_set=pa.array(TRUE_WORDS)).to_numpy(zero_copy_only=False)
    is_false = pc.is_in(lowered, value_set=pa.array(FALSE_WORDS)).to_numpy(zero_copy_only=False)
    return np.asarray(is_true, dtype=bool), ~(np.asarray(is_true) | np.asarray(is_false))


def to_elapsed_s(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Slurm `[DD-]HH:MM:SS` elapsed times as seconds (float; see whole_seconds)."""
    pattern = r"^(?:(?P<d>\d+)-)?(?P<h>\d+):(?P<m>\d\d):(?P<s>\d\d)$"
    parts = pc.extract_regex(values, pattern)
    is_bad = ~np.asarray(parts.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    total = np.zeros(len(values), dtype=np.float64)  # float: a huge day count must not wrap
    for name, scale in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        field = pc.struct_field(parts, name).fill_null("")
        numbers = pd.to_numeric(field.to_pandas(), errors="coerce").fillna(0)
        with np.errstate(over="ignore", invalid="ignore"):
            total += numbers.to_numpy(dtype=np.float64) * scale
    return total, is_bad
