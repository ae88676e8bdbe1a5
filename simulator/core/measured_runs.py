"""Measured training runs in the reference-runs schema: parse and check a CSV upload.

Pure: bytes in, complete rows (dicts keyed by COLUMNS, blanks as None) and row errors out.
The schema is documented in simulator/data/reference_runs.md.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from simulator.core.validation import METRICS

COLUMNS: tuple[str, ...] = (
    "run_id",
    "source",
    "source_url",
    "workload_kind",
    "model_name",
    "params_billion",
    "active_params_billion",
    "n_layers",
    "hidden_size",
    "n_heads",
    "ffn_hidden_size",
    "vocab_size",
    "seq_len",
    "global_batch",
    "micro_batch",
    "tokens_or_samples_total",
    "gpu",
    "gpu_count",
    "gpus_per_node",
    "intra_node",
    "inter_node_gbps_per_node",
    "precision",
    "tp",
    "pp",
    "virtual_stages",
    "dp",
    "cp",
    "ep",
    "zero_stage",
    "activation_recompute",
    "tp_comm_overlap",
    "fp8_rowwise",
    "flash_attention",
    "memory_format",
    "metric",
    "value",
    "flops_include_recompute",
    "derived",
    "notes",
)
REQUIRED_COLUMNS: tuple[str, ...] = (
    "run_id",
    "workload_kind",
    "params_billion",
    "gpu",
    "gpu_count",
    "metric",
    "value",
)
INT_COLUMNS = frozenset(
    {
        "n_layers",
        "hidden_size",
        "n_heads",
        "ffn_hidden_size",
        "vocab_size",
        "seq_len",
        "global_batch",
        "micro_batch",
        "gpu_count",
        "gpus_per_node",
        "tp",
        "pp",
        "virtual_stages",
        "dp",
        "cp",
        "ep",
        "zero_stage",
    }
)
# tokens_or_samples_total counts tokens, often written like 3e11, so it is read as a float.
FLOAT_COLUMNS = frozenset(
    {
        "params_billion",
        "active_params_billion",
        "tokens_or_samples_total",
        "inter_node_gbps_per_node",
        "value",
    }
)
ENUM_COLUMNS: dict[str, tuple[str, ...]] = {
    "workload_kind": ("llm", "llm_moe", "llm_lora", "bert", "resnet50", "other"),
    "intra_node": ("nvlink", "nvswitch", "pcie", "xgmi", "unknown"),
    "precision": ("fp32", "tf32", "fp16", "bf16", "fp8"),
    "activation_recompute": ("none", "selective", "full"),
    "tp_comm_overlap": ("yes", "no"),
    "fp8_rowwise": ("yes", "no"),
    "flash_attention": ("yes", "no"),
    "memory_format": ("nhwc", "nchw"),
    "metric": METRICS,
    "flops_include_recompute": ("yes", "no"),
    "derived": ("yes", "no"),
}
# Counts a run cannot have zero of (a parallel degree of 0 would only fail later, unnamed).
POSITIVE_COLUMNS = frozenset({"params_billion", "value", "gpu_count", "gpus_per_node", "tp",
                              "pp", "virtual_stages", "dp", "cp", "ep", "micro_batch"})
# Upper bounds far above any real run (the largest shipped model is 1.8T parameters, the
# largest cluster 16k GPUs), so that absurd numbers are named instead of overflowing the
# simulator's arithmetic when the run is predicted.
MAXIMA: dict[str, float] = {
    "params_billion": 100_000.0,
    "active_params_billion": 100_000.0,
    "tokens_or_samples_total": 1e16,
    "inter_node_gbps_per_node": 1e6,
    "value": 1e12,
}
MAX_INT = 100_000_000
MAX_REPORTED_ERRORS = 50
RUN_ID_MAX_CHARS = 200


@dataclass(frozen=True)
class RowError:
    """One problem in an upload; `line` is the 1-based line in the file (1 = header)."""

    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "file"
        return (
            f"{where}, {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


@dataclass(frozen=True)
class ParsedRuns:
    rows: list[dict[str, Any]]
    errors: list[RowError]


def _parse_number(column: str, text: str) -> tuple[Any, str]:
    try:
        number = float(text)
    except ValueError:
        return None, f"{text!r} is not a number"
    if not math.isfinite(number):
        return None, f"{text!r} is not a finite number"
    if column in POSITIVE_COLUMNS and number <= 0:
        return None, f"{text} must be greater than 0"
    if number < 0:
        return None, f"{text} must not be negative"
    maximum = MAXIMA.get(column, MAX_INT)
    if number > maximum:
        return None, f"{text} is above the {maximum:g} bound"
    if column in INT_COLUMNS:
        if not number.is_integer():
            return None, f"{text!r} is not a whole number"
        return int(number), ""
    return number, ""


def _parse_cell(column: str, text: str) -> tuple[Any, str]:
    """(value, error message); blank cells are None (unknown, per the schema)."""
    text = text.strip()
    if not text:
        return None, "is required" if column in REQUIRED_COLUMNS else ""
    if "\x00" in text:  # no database text column stores it (PostgreSQL refuses it)
        return None, "contains a NUL character"
    if column in INT_COLUMNS or column in FLOAT_COLUMNS:
        return _parse_number(column, text)
    allowed = ENUM_COLUMNS.get(column)
    if allowed is not None and text not in allowed:
        return None, f"{text!r} is not one of {', '.join(allowed)}"
    if column == "run_id" and len(text) > RUN_ID_MAX_CHARS:
        return None, f"longer than {RUN_ID_MAX_CHARS} characters"
    return text, ""


def _header_errors(header: list[str]) -> list[RowError]:
    errors = [
        RowError(1, name, "unknown column") if name else RowError(1, f"column {i}", "has no name")
        for i, name in enumerate(header, start=1)
        if name not in COLUMNS
    ]
    errors += [
        RowError(1, name, "duplicate column")
        for name in sorted({n for n in header if n and header.count(n) > 1})
    ]
    errors += [
        RowError(1, name, "required column is missing")
        for name in REQUIRED_COLUMNS
        if name not in header
    ]
    return errors


def _records(text: str) -> Iterator[tuple[int, list[str]]]:
    """(first line number, cells) per CSV record; quoted cells may span lines."""
    reader = csv.reader(io.StringIO(text))
    line = 1
    for cells in reader:
        yield line, cells
        line = reader.line_num + 1


def _parse_record(
    header: list[str], line: int, cells: list[str]
) -> tuple[dict[str, Any], list[RowError]]:
    if len(cells) != len(header):
        return {}, [RowError(line, "", f"has {len(cells)} fields, the header has {len(header)}")]
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    errors = []
    for name, text in zip(header, cells, strict=True):
        row[name], message = _parse_cell(name, text)
        if message:
            errors.append(RowError(line, name, message))
    return row, errors


def parse_measured_runs(data: bytes) -> ParsedRuns:
    """Check an upload in the reference-runs schema; rows are complete COLUMNS dicts."""
    try:
        records = list(_records(data.decode("utf-8-sig")))
    except (UnicodeDecodeError, csv.Error) as exc:
        return ParsedRuns([], [RowError(0, "", f"not a readable UTF-8 CSV file ({exc})")])
    records = [(line, cells) for line, cells in records if any(c.strip() for c in cells)]
    if not records:
        return ParsedRuns([], [RowError(0, "", "the file is empty")])
    header = [name.strip() for name in records[0][1]]
    errors = _header_errors(header)
    if errors:
        return ParsedRuns([], errors)
    rows, seen = [], set()
    for line, cells in records[1:]:
        row, row_errors = _parse_record(header, line, cells)
        if row.get("run_id") and row["run_id"] in seen:
            row_errors.append(RowError(line, "run_id", f"{row['run_id']!r} repeats an earlier row"))
        seen.add(row.get("run_id"))
        errors += row_errors
        rows.append(row)
    if not rows:
        errors.append(RowError(0, "", "no runs below the header"))
    return ParsedRuns(rows, errors[:MAX_REPORTED_ERRORS])
