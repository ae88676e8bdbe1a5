"""An uploaded request log (CSV: timestamp, input_tokens, output_tokens; one row per request)
-> the serving plan's traffic: hourly rates over the day, peak and trough, the measured hourly
history, and the prompt and output length distribution (mean and P99).

The file is read by the job-history upload's streaming reader
(planner.purchase_mix.core.upload.csv_stream: size budget, encoding and delimiter detection,
files that are not CSV text refused in words, physical line numbers) and its values parsed with
pandas. A bad row refuses the whole file, naming its line and column; nothing is guessed.

Rates: requests counted per clock hour (UTC) from the first request's hour to the last's,
divided by 3600 s. The rate of an hour of the day is the busiest that hour was on any day of
the log, so a fleet scaled by the profile serves every hour the log holds; the peak is the
busiest hour of the log and the trough the quietest hour of the day by that measure.
Timestamps: ISO 8601 (no zone: UTC) or Unix seconds. Units: requests/s, tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
import pandas as pd

from planner.core.limits import MAX_REQUEST_LOG_DAYS, MAX_REQUEST_LOG_ROWS
from planner.purchase_mix.core.upload.csv_stream import read_csv_chunks
from planner.serving.core.traffic import HOURS_PER_DAY, DailyTraffic

COLUMNS = ("timestamp", "input_tokens", "output_tokens")
MAX_INPUT_TOKENS = 1_000_000
MAX_OUTPUT_TOKENS = 100_000
SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True)
class _Rows:
    seconds: np.ndarray  # Unix seconds, float64
    input_tokens: np.ndarray
    output_tokens: np.ndarray


def _refuse(lines: np.ndarray, bad: np.ndarray, column: str, values: pd.Series,
            what: str) -> None:
    """ValueError naming the first bad row's line, column and value, and how many are bad."""
    if not bad.any():
        return
    first = int(np.argmax(bad))
    more = int(bad.sum()) - 1
    tail = f" ({more:,} more bad rows in this column)" if more else ""
    raise ValueError(f"line {int(lines[first])}, {column}: {str(values.iloc[first])!r} is not "
                     f"{what}{tail}")


def _numbers(values: pd.Series) -> np.ndarray:
    """Numbers of a text column, NaN where a value is not one (whole-column cast first: a
    column of plain numbers, the usual case, converts several times faster)."""
    text = values.str.strip()
    try:
        return np.array(text.astype("float64").to_numpy(), dtype=np.float64)
    except (ValueError, TypeError):
        return np.array(pd.to_numeric(text, errors="coerce").to_numpy(
            dtype=np.float64, na_value=np.nan), dtype=np.float64)


def _seconds(values: pd.Series, lines: np.ndarray) -> np.ndarray:
    """ISO 8601 text (no zone read as UTC) or Unix seconds -> Unix seconds."""
    text = values.str.strip()
    seconds = _numbers(values)
    is_text = np.isnan(seconds)
    if is_text.any():  # only the rows that are not numbers are read as dates
        parsed = pd.to_datetime(text[is_text], utc=True, errors="coerce", format="ISO8601")
        seconds[is_text] = ((parsed - pd.Timestamp(0, tz="UTC")).dt.total_seconds()
                            .to_numpy(dtype=np.float64, na_value=np.nan))
    bad = ~np.isfinite(seconds) | (np.abs(np.nan_to_num(seconds)) > 1e11)
    _refuse(lines, bad, "timestamp", values,
            "a date and time (ISO 8601, e.g. 2026-11-02T14:05:09Z, or Unix seconds)")
    return seconds


def _tokens(values: pd.Series, lines: np.ndarray, column: str, low: int,
            high: int) -> np.ndarray:
    numbers = _numbers(values)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(numbers) | (numbers != np.round(numbers)) | (numbers < low) | (
            numbers > high)
    _refuse(lines, bad, column, values, f"a whole number of tokens from {low} to {high:,}")
    return numbers


def _read_rows(stream: BinaryIO, max_bytes: int, max_rows: int) -> _Rows:
    layout, chunks = read_csv_chunks(stream, max_bytes=max_bytes)
    names = {name.strip().lower(): name for name in layout.header}
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise ValueError(f"the file has no {missing[0]!r} column (its columns: "
                         f"{', '.join(layout.header[:12])}); a request log needs "
                         f"{', '.join(COLUMNS)}")
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    rows = 0
    for chunk in chunks:
        if chunk.malformed:
            row = chunk.malformed[0]
            raise ValueError(f"line {row.line}: {row.message} (the header has "
                             f"{len(layout.header)})")
        rows += chunk.table.num_rows
        if rows > max_rows:
            raise ValueError(f"the log has more than {max_rows:,} rows (requests); send a "
                             "shorter period or a sample of it")
        frame = chunk.table.select([names[c] for c in COLUMNS]).to_pandas()
        frame.columns = list(COLUMNS)
        lines = chunk.line_numbers
        blank = (frame == "").all(axis=1).to_numpy()  # empty lines are not requests
        frame, lines = frame[~blank], lines[~blank]
        parts.append((_seconds(frame["timestamp"], lines),
                      _tokens(frame["input_tokens"], lines, "input_tokens", 1,
                              MAX_INPUT_TOKENS),
                      _tokens(frame["output_tokens"], lines, "output_tokens", 0,
                              MAX_OUTPUT_TOKENS)))
    if not parts or not sum(len(p[0]) for p in parts):
        raise ValueError("the file has a header but no requests")
    seconds, prompt, output = (np.concatenate([p[i] for p in parts]) for i in range(3))
    return _Rows(seconds, prompt, output)


def _iso(seconds: float) -> str:
    return pd.Timestamp(int(seconds), unit="s", tz="UTC").isoformat()


def parse_request_log(stream: BinaryIO, *, max_bytes: int,
                      max_rows: int = MAX_REQUEST_LOG_ROWS,
                      max_days: int = MAX_REQUEST_LOG_DAYS) -> DailyTraffic:
    """The log's traffic (see the module docstring); ValueError naming the line and column of
    the first bad row, or the bound a file goes over (bytes, rows, days), or a span under a day
    (24 hours are needed for a profile)."""
    rows = _read_rows(stream, max_bytes, max_rows)
    start, end = float(rows.seconds.min()), float(rows.seconds.max())
    span_hours = (end - start) / SECONDS_PER_HOUR
    if span_hours > max_days * HOURS_PER_DAY:
        raise ValueError(f"timestamp: the log spans {span_hours / HOURS_PER_DAY:,.1f} days "
                         f"({_iso(start)} to {_iso(end)}); at most {max_days} days")
    if span_hours < HOURS_PER_DAY:
        raise ValueError(f"timestamp: the log covers {span_hours:.1f} hours ({_iso(start)} to "
                         f"{_iso(end)}); an hourly profile of the day needs at least 24")
    first_hour = np.floor(start / SECONDS_PER_HOUR)
    index = (np.floor(rows.seconds / SECONDS_PER_HOUR) - first_hour).astype(np.int64)
    history = np.bincount(index) / SECONDS_PER_HOUR
    hour_of_day = (np.arange(len(history)) + int(first_hour)) % HOURS_PER_DAY
    profile = np.zeros(HOURS_PER_DAY)
    np.maximum.at(profile, hour_of_day, history)
    return DailyTraffic(
        tuple(float(r) for r in profile), "request_log",
        history_rate_per_s=tuple(float(r) for r in history), rows=len(rows.seconds),
        start=_iso(start), end=_iso(end),
        prompt_tokens_mean=float(rows.input_tokens.mean()),
        prompt_tokens_p99=float(np.percentile(rows.input_tokens, 99)),
        output_tokens_mean=float(rows.output_tokens.mean()),
        output_tokens_p99=float(np.percentile(rows.output_tokens, 99)))
