"""Users' own measured runs: CSV import, the model's error on them, and a calibration of their own.

Rows use the reference-runs schema (simulator/data/reference_runs.md). Parsing is pure; the
services below it touch the ORM and call the simulator core.
"""

import csv
import io
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import pandas as pd
from django.conf import settings
from django.db import transaction
from django.template.defaultfilters import filesizeformat

from simulator.core import (
    Calibration,
    fit_calibration,
    load_reference_runs,
    summarize_errors,
    validate,
)
from simulator.core.validation import METRICS
from simulator.models import MeasuredRun, UserCalibration
from simulator.services import DATA_DIR, calibration_for, catalog_gpu_specs, shipped_calibration

REFERENCE_RUNS_CSV = DATA_DIR / "reference_runs.csv"
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
    "dp",
    "cp",
    "ep",
    "zero_stage",
    "activation_recompute",
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
    "metric": METRICS,
    "flops_include_recompute": ("yes", "no"),
    "derived": ("yes", "no"),
}
POSITIVE_COLUMNS = frozenset({"params_billion", "value", "gpu_count"})
# The page predicts every run twice per view (about 12 ms a row each), so keep it interactive.
MAX_RUNS_PER_USER = 200
MAX_UPLOAD_BYTES = 2 * 1024 * 1024
MAX_REPORTED_ERRORS = 50
RUN_ID_MAX_CHARS = 200
METRIC_UNITS: dict[str, str] = {
    "tokens_per_sec_per_gpu": "tokens/s per GPU",
    "samples_per_sec": "samples/s (all GPUs)",
    "tflops_per_gpu": "TFLOP/s per GPU",
    "mfu_pct": "% of peak",
    "time_to_train_minutes": "minutes",
    "gpu_hours": "GPU·hours",
}


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


@dataclass(frozen=True)
class ImportOutcome:
    """Counts of stored runs, or the problems (then nothing was stored)."""

    n_created: int = 0
    n_updated: int = 0
    errors: list[RowError] = field(default_factory=list)

    @property
    def is_ok(self) -> bool:
        return not self.errors


@dataclass(frozen=True)
class FitOutcome:
    """A new active calibration and the median abs % error on the user's runs around it."""

    n_runs: int
    n_own_runs: int
    before_median_ape_pct: float | None
    after_median_ape_pct: float | None


@dataclass(frozen=True)
class MeasuredRunsReport:
    """What the runs page shows: per-run predictions, summary rows and calibration state."""

    rows: list[dict[str, Any]]
    summary: list[dict[str, Any]]
    calibration: UserCalibration | None

    @property
    def is_own_calibration_active(self) -> bool:
        return self.calibration is not None and self.calibration.is_active


def measured_runs_max_bytes() -> int:
    """Upload limit: the site's UPLOAD_MAX_BYTES, capped small because a CSV of runs is tiny."""
    return min(settings.UPLOAD_MAX_BYTES, MAX_UPLOAD_BYTES)


# Parsing (pure)


def _parse_number(column: str, text: str) -> tuple[Any, str]:
    try:
        number = float(text)
    except ValueError:
        return None, f"{text!r} is not a number"
    if not math.isfinite(number):
        return None, f"{text!r} is not a finite number"
    if column in POSITIVE_COLUMNS and number <= 0:
        return None, f"{text} must be greater than 0"
    if column in INT_COLUMNS:
        if not number.is_integer():
            return None, f"{text!r} is not a whole number"
        if number < 0:
            return None, f"{text} must not be negative"
        return int(number), ""
    return number, ""


def _parse_cell(column: str, text: str) -> tuple[Any, str]:
    """(value, error message); blank cells are None (unknown, per the schema)."""
    text = text.strip()
    if not text:
        return None, "is required" if column in REQUIRED_COLUMNS else ""
    if column in INT_COLUMNS or column in FLOAT_COLUMNS:
        return _parse_number(column, text)
    allowed = ENUM_COLUMNS.get(column)
    if allowed is not None and text not in allowed:
        return None, f"{text!r} is not one of {', '.join(allowed)}"
    if column == "run_id" and len(text) > RUN_ID_MAX_CHARS:
        return None, f"longer than {RUN_ID_MAX_CHARS} characters"
    return text, ""


def _header_errors(header: list[str]) -> list[RowError]:
    errors = [RowError(1, name, "unknown column") for name in header if name not in COLUMNS]
    errors += [
        RowError(1, name, "duplicate column")
        for name in sorted({n for n in header if header.count(n) > 1})
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


def measured_runs_parse(data: bytes) -> ParsedRuns:
    """Check an upload in the reference-runs schema; rows are complete COLUMNS dicts."""
    if len(data) > measured_runs_max_bytes():
        limit = filesizeformat(measured_runs_max_bytes())
        return ParsedRuns([], [RowError(0, "", f"larger than the {limit} limit")])
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


# Storage


def measured_runs_import(*, owner_id: int, data: bytes) -> ImportOutcome:
    """Store every row of an upload, replacing same run_ids, or nothing if any row is bad."""
    parsed = measured_runs_parse(data)
    if parsed.errors:
        return ImportOutcome(errors=parsed.errors)
    incoming = {row["run_id"] for row in parsed.rows}
    with transaction.atomic():
        existing = set(
            MeasuredRun.objects.select_for_update()
            .filter(owner_id=owner_id)
            .values_list("run_id", flat=True)
        )
        total = len(existing | incoming)
        if total > MAX_RUNS_PER_USER:
            message = f"would make {total} runs; the limit is {MAX_RUNS_PER_USER} per user"
            return ImportOutcome(errors=[RowError(0, "", message)])
        MeasuredRun.objects.bulk_create(
            [MeasuredRun(owner_id=owner_id, run_id=r["run_id"], row=r) for r in parsed.rows],
            update_conflicts=True,
            unique_fields=["owner", "run_id"],
            update_fields=["row"],
        )
    n_updated = len(incoming & existing)
    return ImportOutcome(n_created=len(incoming) - n_updated, n_updated=n_updated)


def measured_runs_delete(*, owner_id: int) -> int:
    """Delete all of the owner's runs; their calibration stays until they switch back."""
    deleted, _ = MeasuredRun.objects.filter(owner_id=owner_id).delete()
    return deleted


def measured_runs_frame(*, owner_id: int) -> pd.DataFrame:
    """The owner's runs as a reference-runs DataFrame (blank cells NaN)."""
    rows = MeasuredRun.objects.filter(owner_id=owner_id).values_list("row", flat=True)
    frame = pd.DataFrame(list(rows), columns=list(COLUMNS))
    for name in INT_COLUMNS | FLOAT_COLUMNS:
        frame[name] = pd.to_numeric(frame[name]).astype(float)
    return frame


@cache
def reference_runs_frame() -> pd.DataFrame:
    return load_reference_runs(str(REFERENCE_RUNS_CSV))


def measured_runs_template_csv() -> str:
    """The reference-runs header and its first row as an example, as CSV text."""
    with REFERENCE_RUNS_CSV.open(newline="", encoding="utf-8") as source:
        reader = csv.reader(source)
        header, example = next(reader), next(reader)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, example])
    return out.getvalue()


# Errors and calibration


def _median_ape_pct(predictions: pd.DataFrame) -> float | None:
    errors = predictions["abs_pct_error"].dropna()
    return float(errors.median()) if len(errors) else None


def _or_none(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def _prediction_rows(predictions: pd.DataFrame) -> list[dict[str, Any]]:
    columns = [
        "run_id",
        "metric",
        "reported",
        "predicted",
        "predicted_p10",
        "predicted_p90",
        "abs_pct_error",
        "note",
    ]
    return [
        {**{k: _or_none(v) for k, v in row.items()}, "unit": METRIC_UNITS.get(row["metric"], "")}
        for row in predictions[columns].to_dict("records")
    ]


def _summary_rows(current: pd.DataFrame, shipped: pd.DataFrame | None) -> list[dict[str, Any]]:
    """Overall and per-metric median / P90 abs % error; `shipped_*` when comparing."""
    keep = ["group_by", "group", "n_rows", "share_predicted", "median_ape", "p90_ape"]
    summary = summarize_errors(current)[keep]
    summary = summary[summary["group_by"].isin(["overall", "metric"])]
    if shipped is not None:
        base = summarize_errors(shipped)[["group_by", "group", "median_ape", "p90_ape"]]
        base = base.rename(
            columns={"median_ape": "shipped_median_ape", "p90_ape": "shipped_p90_ape"}
        )
        summary = summary.merge(base, on=["group_by", "group"], how="left")
    return [{k: _or_none(v) for k, v in row.items()} for row in summary.to_dict("records")]


def measured_runs_report(*, owner_id: int) -> MeasuredRunsReport:
    """Predictions on the owner's runs with their current calibration, plus the shipped one's
    error for comparison when they have a calibration of their own."""
    own = UserCalibration.objects.filter(owner_id=owner_id).first()
    runs = measured_runs_frame(owner_id=owner_id)
    if runs.empty:
        return MeasuredRunsReport([], [], own)
    specs = catalog_gpu_specs()
    shipped = validate(runs, specs, shipped_calibration())
    if own is None:
        return MeasuredRunsReport(_prediction_rows(shipped), _summary_rows(shipped, None), own)
    mine = validate(runs, specs, Calibration.from_dict(own.params))
    current = mine if own.is_active else shipped
    return MeasuredRunsReport(_prediction_rows(current), _summary_rows(mine, shipped), own)


def user_calibration_fit(*, owner_id: int) -> FitOutcome:
    """Refit on the shipped reference runs plus the owner's runs and make it their active one.

    Takes a second or two (a few thousand model evaluations), so it runs inside the request.
    """
    mine = measured_runs_frame(owner_id=owner_id)
    if mine.empty:
        raise ValueError("Upload some measured runs before fitting a calibration.")
    specs = catalog_gpu_specs()
    before = validate(mine, specs, calibration_for(owner_id))
    if before["predicted"].isna().all():
        raise ValueError("The simulator cannot predict any of your runs; see their notes.")
    reference = reference_runs_frame()
    combined = pd.concat([reference, mine[reference.columns]], ignore_index=True)
    fitted = fit_calibration(combined, specs, initial=shipped_calibration())
    UserCalibration.objects.update_or_create(
        owner_id=owner_id,
        defaults={"params": fitted.to_dict(), "n_runs": fitted.n_rows, "is_active": True},
    )
    after = validate(mine, specs, fitted)
    return FitOutcome(
        fitted.n_rows,
        int(before["predicted"].notna().sum()),
        _median_ape_pct(before),
        _median_ape_pct(after),
    )


def user_calibration_deactivate(*, owner_id: int) -> None:
    """Go back to the shipped calibration; the fitted one is kept for comparison."""
    UserCalibration.objects.filter(owner_id=owner_id).update(is_active=False)
