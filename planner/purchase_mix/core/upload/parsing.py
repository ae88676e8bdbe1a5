"""Parse uploaded job histories (generic, Slurm sacct, usage series, mapped CSV).

Reading streams the file in line-aligned chunks (csv_stream.py) and keeps only
compact numpy/arrow columns of the good rows, so a 1M-row upload is held about once.
Every row is checked; row problems become ParseError(line, field, message). Without
`skip_bad_rows` a file with any bad row produces no history.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import BinaryIO

import numpy as np
import pyarrow as pa

from planner.purchase_mix.core.upload.csv_stream import CsvChunk, CsvLayout, read_csv_chunks
from planner.purchase_mix.core.upload.jobs import (
    ParseError,
    ParseResult,
    UploadSettingError,
    columns_in_words,
)
from planner.purchase_mix.core.upload.memory import release_freed_memory
from planner.purchase_mix.core.upload.parse_build import build_history, compact_rows
from planner.purchase_mix.core.upload.parse_checks import (
    DUPLICATE_POLICIES,
    SpanTracker,
    TimeBounds,
    duplicate_errors,
    find_duplicates,
)
from planner.purchase_mix.core.upload.parse_formats import CONVERTERS, ChunkRows, RowChecks
from planner.purchase_mix.core.upload.parse_values import make_time_spec

FORMATS: tuple[str, ...] = ("generic", "slurm", "usage", "mapped")
JOB_FIELDS: tuple[str, ...] = (
    "job_id",
    "start",
    "end",
    "duration",
    "gpu_count",
    "gpu_type",
    "interruptible",
    "team",
)
EXTRA_JOB_FIELDS: tuple[str, ...] = ("user", "provider", "region", "submit")
USAGE_FIELDS: tuple[str, ...] = ("timestamp", "gpu_type", "gpus_in_use")
SLURM_COLUMNS: tuple[str, ...] = (
    "JobID",
    "Submit",
    "Start",
    "End",
    "Elapsed",
    "ElapsedRaw",
    "State",
    "Account",
    "User",
    "AllocTRES",
    "ReqTRES",
    "AllocGRES",
    "ReqGRES",
)
DEFAULT_MAX_BYTES = 2 * 1024**3
DEFAULT_MAX_ERRORS = 1000

Source = str | os.PathLike[str] | BinaryIO


def parse_column_mapping(text: str) -> dict[str, str]:
    """Parse `FIELD=COLUMN,FIELD=COLUMN` (the `--map` option) into {field: column}."""
    mapping: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, column = item.partition("=")
        if not sep or not name.strip() or not column.strip():
            raise ValueError(f"mapping entry {item!r} is not FIELD=COLUMN")
        mapping[name.strip()] = column.strip()
    return mapping


def _fields_for(fmt: str) -> tuple[str, ...]:
    if fmt == "usage":
        return USAGE_FIELDS
    if fmt == "slurm":
        return SLURM_COLUMNS
    return (*JOB_FIELDS, *EXTRA_JOB_FIELDS)


def _required(fmt: str, columns: Mapping[str, str], default_gpu_type: str | None) -> list[str]:
    if fmt == "slurm":
        needed = ["JobID", "Start"]
        if not {"End", "Elapsed", "ElapsedRaw"} & columns.keys():
            needed.append("End")
        if not {"AllocTRES", "ReqTRES", "AllocGRES", "ReqGRES"} & columns.keys():
            needed.append("AllocTRES")
        return needed
    needed = ["timestamp", "gpus_in_use"] if fmt == "usage" else ["start", "gpu_count"]
    if fmt != "usage" and "end" not in columns and "duration" not in columns:
        needed.append("end")
    if default_gpu_type is None:
        needed.append("gpu_type")
    return needed


def resolve_columns(
    header: tuple[str, ...],
    fmt: str,
    mapping: Mapping[str, str] | None,
    default_gpu_type: str | None,
) -> dict[str, str]:
    """Map canonical fields to header columns: mapping first, then case-insensitive names."""
    fields = _fields_for(fmt)
    unknown = sorted(set(mapping or {}) - set(fields))
    if unknown:
        raise ValueError(f"The column mapping names unknown fields ({', '.join(unknown)}); "
                         f"the fields are {', '.join(fields)}.")
    by_lower = {name.lower(): name for name in header}
    columns: dict[str, str] = {}
    for name in fields:
        wanted = (mapping or {}).get(name)
        if wanted is not None and wanted not in header:
            raise UploadSettingError(
                f"The column {wanted} chosen for {name} is not in the header of the file (its "
                f"columns are {columns_in_words(header)}).", setting=f"column:{name}")
        found = wanted or by_lower.get(name.lower())
        if found is not None:
            _refuse_repeated(header, found, name, is_exact=wanted is not None)
            columns[name] = found
    if fmt != "usage" and "start" not in columns and "submit" in columns:
        # A trace with only submit times (Philly, Helios): each job starts when submitted,
        # the purchase mix's no-wait reading.
        columns["start"] = columns["submit"]
    missing = [name for name in _required(fmt, columns, default_gpu_type) if name not in columns]
    if missing:
        raise UploadSettingError(_missing_message(missing, header), missing=tuple(missing),
                                 setting=f"column:{missing[0]}")
    return columns


def _refuse_repeated(header: tuple[str, ...], column: str, name: str, *, is_exact: bool) -> None:
    """UploadSettingError when two header columns could hold `name` (one would be dropped
    unseen; csv_stream renames a repeated column to `name.1`)."""
    def key(other: str) -> str:
        base, dot, suffix = other.rpartition(".")
        other = base if dot and suffix.isdigit() and base in header else other
        return other if is_exact else other.lower()

    same = [i + 1 for i, other in enumerate(header) if key(other) == key(column)]
    if len(same) > 1:
        places = ", ".join(str(i) for i in same[:-1]) + f" and {same[-1]}"
        raise UploadSettingError(
            f"The file has {len(same)} columns named {column} (columns {places}), so which one "
            f"holds {name} is unclear: rename or remove all but one.", setting=f"column:{name}")


def _missing_message(missing: list[str], header: tuple[str, ...]) -> str:
    """"The file has no gpu_type column (its columns are job_id, start, ...)." in words."""
    names = [f"{name} (or duration)" if name == "end" else name for name in missing]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    noun = "column" if len(names) == 1 else "columns"
    return f"The file has no {listed} {noun} (its columns are {columns_in_words(header)})."


@contextmanager
def _open_binary(source: Source) -> Iterator[BinaryIO]:
    if isinstance(source, str | os.PathLike):
        with open(source, "rb") as handle:
            yield handle
    else:
        yield source


@dataclass
class _Collector:
    max_errors: int
    is_skipping: bool
    errors: list[ParseError] = field(default_factory=list)
    error_count: int = 0
    rows_read: int = 0
    rows_skipped: int = 0
    ignored: Counter[str] = field(default_factory=Counter)
    parts: list[ChunkRows] = field(default_factory=list)
    span: SpanTracker = field(default_factory=SpanTracker)

    def add(self, rows: ChunkRows, checks: RowChecks) -> None:
        starts = rows.columns.get("start_epoch_s", rows.columns.get("timestamp_epoch_s"))
        ends = rows.columns.get("end_epoch_s", starts)
        if isinstance(starts, np.ndarray) and isinstance(ends, np.ndarray):
            self.span.add(starts, ends, rows.lines)
        self.rows_read += rows.rows_read
        self.rows_skipped += rows.rows_bad
        self.ignored.update(rows.ignored)
        self.error_count += checks.error_count
        room = self.max_errors - len(self.errors)
        self.errors.extend(checks.errors[: max(room, 0)])
        if self.is_skipping or self.error_count == 0:
            self.parts.append(compact_rows(rows))

    @property
    def is_done(self) -> bool:
        return not self.is_skipping and len(self.errors) >= self.max_errors


def _malformed_checks(chunk: CsvChunk, checks: RowChecks) -> int:
    for row in chunk.malformed:
        checks.add_error(row.line, "(row)", row.message)
    return len(chunk.malformed)


def _scan(
    chunks: Iterator[CsvChunk],
    layout: CsvLayout,
    fmt: str,
    convert_kwargs: dict[str, object],
    collector: _Collector,
) -> None:
    converter = CONVERTERS[fmt]
    for chunk in chunks:
        checks = RowChecks(chunk.line_numbers, collector.max_errors)
        n_malformed = _malformed_checks(chunk, checks)
        rows = converter(chunk.table, checks, **convert_kwargs)
        rows.rows_read += n_malformed
        rows.rows_bad += n_malformed
        collector.add(rows, checks)
        if collector.is_done:
            return


def parse_job_history(
    source: Source,
    fmt: str,
    *,
    mapping: Mapping[str, str] | None = None,
    time_unit: str | None = None,
    origin: str | None = None,
    default_gpu_type: str | None = None,
    skip_bad_rows: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_errors: int = DEFAULT_MAX_ERRORS,
    now_epoch_s: int | None = None,
    duplicate_ids: str = "refuse",
) -> ParseResult:
    """Parse an uploaded CSV into a JobHistory (or UsageHistory for fmt="usage").

    fmt: "generic" | "slurm" | "usage" | "mapped" ("mapped" = generic with a required mapping).
    mapping: {field: column}; fields are JOB_FIELDS (+ user, provider, region) or USAGE_FIELDS.
    time_unit ("s" | "min" | "h") scales numeric offsets and durations; with `origin` set,
    start/end/timestamp are numeric offsets from it, otherwise ISO-8601 timestamps.
    Times must fall between 2000-01-01 and a year after `now_epoch_s` (None: no upper
    bound), and the whole history within ten years. duplicate_ids: "refuse" (repeated job ids
    are row errors) or "merge" (one job per id: earliest start, latest end, most GPUs).
    Raises ValueError for file-level problems (unknown format, missing columns, too big,
    unreadable, span over ten years, no GPU demand at all).
    """
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if duplicate_ids not in DUPLICATE_POLICIES:
        raise ValueError(f"duplicate_ids must be one of {', '.join(DUPLICATE_POLICIES)}")
    if fmt == "mapped" and not mapping:
        raise ValueError("the mapped format needs a column mapping")
    base_fmt = "generic" if fmt == "mapped" else fmt
    time_spec = make_time_spec(time_unit, origin)
    collector = _Collector(max_errors=max_errors, is_skipping=skip_bad_rows)
    with _open_binary(source) as stream:
        layout, chunks = read_csv_chunks(stream, max_bytes=max_bytes, is_quoted=fmt != "slurm")
        columns = resolve_columns(layout.header, base_fmt, mapping, default_gpu_type)
        _refuse_unitless_numbers(base_fmt, columns, time_unit, origin)
        kwargs: dict[str, object] = {
            "columns": columns,
            "time_spec": time_spec,
            "default_gpu_type": default_gpu_type,
            "bounds": TimeBounds.around(now_epoch_s),
        }
        _scan(chunks, layout, base_fmt, kwargs, collector)
    if base_fmt == "usage":
        collector.span.check(columns["timestamp"], columns["timestamp"])
    elif base_fmt == "slurm":
        collector.span.check("Start", columns.get("End", "End"))
    else:
        collector.span.check(columns["start"], columns.get("end", columns.get("duration", "")))
    id_field = columns.get("job_id", "JobID" if base_fmt == "slurm" else "(line)")
    release_freed_memory()  # the chunks' text and conversion buffers
    result = _result(collector, layout, base_fmt, duplicate_ids, id_field)
    collector.parts.clear()
    release_freed_memory()  # before the caller's next large step (hourly demand, files)
    return result


def _refuse_unitless_numbers(fmt: str, columns: Mapping[str, str], time_unit: str | None,
                             origin: str | None) -> None:
    """Plain-number durations or offsets need their unit: read in the wrong one, a history of
    minutes becomes one 60 times smaller, with no warning."""
    if time_unit or fmt == "slurm":
        return
    numeric = [columns["duration"]] if "duration" in columns and "end" not in columns else []
    if origin is not None:
        numeric += [columns[name] for name in ("start", "end", "timestamp") if name in columns]
    if numeric:
        names = ", ".join(dict.fromkeys(numeric))
        raise UploadSettingError(
            f"{'The columns' if len(set(numeric)) > 1 else 'The column'} {names} "
            f"{'hold' if len(set(numeric)) > 1 else 'holds'} plain numbers: "
            "give their time unit (s, min or h), e.g. --time-unit min.", setting="time_unit")


def _duplicate_rows(collector: _Collector, policy: str, id_field: str) -> np.ndarray | None:
    """Positions of repeated job ids to drop (skip mode); errors are added when refusing."""
    parts = [part for part in collector.parts if len(part.lines) > 0]
    if policy != "refuse" or not parts or "job_id" not in parts[0].columns:
        return None
    ids = pa.chunked_array([part.columns["job_id"] for part in parts])
    dups = find_duplicates(ids)
    release_freed_memory()  # the sort's buffers, before the frame is built
    if len(dups.positions) == 0:
        return None
    lines = np.concatenate([part.lines for part in parts])
    room = max(collector.max_errors - len(collector.errors), 0)
    shown = ids.take(pa.array(dups.positions[:room])).to_pylist()
    collector.errors.extend(duplicate_errors(dups, shown, lines, id_field, room))
    collector.errors.sort(key=lambda error: error.line)
    collector.error_count += len(dups.positions)
    collector.rows_skipped += len(dups.positions)
    return dups.positions


def _result(
    collector: _Collector, layout: CsvLayout, fmt: str, duplicate_ids: str, id_field: str
) -> ParseResult:
    drop = _duplicate_rows(collector, duplicate_ids, id_field) if fmt != "usage" else None
    has_errors = collector.error_count > 0
    history = None
    if not has_errors or collector.is_skipping:
        history = build_history(
            collector.parts, fmt, dict(collector.ignored),
            drop_positions=drop, is_merging=duplicate_ids == "merge",
        )
    return ParseResult(
        history=history,
        errors=tuple(collector.errors),
        rows_read=collector.rows_read,
        rows_skipped=collector.rows_skipped if collector.is_skipping else 0,
        rows_ignored=sum(collector.ignored.values()),
        error_count=collector.error_count,
        bad_rows=min(collector.rows_skipped, collector.rows_read),
        ignored_reasons=dict(collector.ignored),
        encoding=layout.encoding,
        delimiter=layout.delimiter,
    )
