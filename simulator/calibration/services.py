"""Users' own measured runs: CSV import, the model's error on them, and a calibration of their own.

Rows use the reference-runs schema (simulator/data/reference_runs.md). Parsing is pure; the
services below it touch the ORM and call the simulator core.
"""

import csv
import hashlib
import io
import json
import math
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache as page_cache
from django.db import transaction
from django.template.defaultfilters import filesizeformat

from planner.runs import Attempt, run_enqueue, run_execute, run_progress
from pricing.catalog_sources import GPUS_CSV
from simulator import core as simulator_core
from simulator.core import (
    Calibration,
    fit_calibration,
    load_reference_runs,
    summarize_errors,
    validate,
)
from simulator.core.measured_runs import (
    COLUMNS,
    FLOAT_COLUMNS,
    INT_COLUMNS,
    ParsedRuns,
    RowError,
    parse_measured_runs,
)
from simulator.core.prediction import Progress, progress_span
from simulator.models import CalibrationFit, MeasuredRun, UserCalibration
from simulator.services import (
    DATA_DIR,
    REFERENCE_RUNS_FILES,
    calibration_for,
    shipped_calibration,
    shipped_gpu_specs,
)

REFERENCE_RUNS_CSV = DATA_DIR / "reference_runs.csv"
# A page view predicts every run under up to two calibrations (about 12 ms a row each) unless
# the predictions are cached (_predictions), so a cold view stays within a few seconds.
MAX_RUNS_PER_USER = 200
PREDICTIONS_CACHE_SECONDS = 7 * 24 * 3600
MAX_UPLOAD_BYTES = 2 * 1024 * 1024
METRIC_UNITS: dict[str, str] = {
    "tokens_per_sec_per_gpu": "tokens/s per GPU",
    "samples_per_sec": "samples/s (all GPUs)",
    "tflops_per_gpu": "TFLOP/s per GPU",
    "mfu_pct": "% of peak",
    "time_to_train_minutes": "minutes",
    "gpu_hours": "GPU·hours",
}


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




def measured_runs_parse(data: bytes) -> ParsedRuns:
    """Check an upload against the size limit and the reference-runs schema."""
    if len(data) > measured_runs_max_bytes():
        limit = filesizeformat(measured_runs_max_bytes())
        return ParsedRuns([], [RowError(0, "", f"larger than the {limit} limit")])
    return parse_measured_runs(data)


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
    """Every published run the shipped calibration was fitted on (both reference files)."""
    return load_reference_runs(*map(str, REFERENCE_RUNS_FILES))


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


@cache
def _simulator_fingerprint() -> str:
    """What predictions depend on besides the runs and the calibration: the shipped GPU specs
    and the simulator core's code (a deploy that changes either is a new key)."""
    digest = hashlib.sha256(GPUS_CSV.read_bytes())
    core = Path(simulator_core.__file__).parent
    for source in sorted(core.glob("*.py")):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def _predictions_key(owner_id: int, runs: pd.DataFrame, calibration: Calibration) -> str:
    digest = hashlib.sha256(_simulator_fingerprint().encode())
    digest.update(runs.to_json(orient="split", double_precision=15).encode())
    digest.update(json.dumps(calibration.to_dict(), sort_keys=True, default=str).encode())
    return f"measured-runs-predictions:{owner_id}:{digest.hexdigest()[:32]}"


def _predictions(owner_id: int, runs: pd.DataFrame, calibration: Calibration) -> pd.DataFrame:
    """validate() of the owner's runs under `calibration`, kept in the cache under what it
    depends on (runs, calibration parameters, GPU specs and core code), so it is computed
    once per change (about 6 ms a run) instead of on every view."""
    key = _predictions_key(owner_id, runs, calibration)
    found = page_cache.get(key)
    if found is None:
        found = validate(runs, shipped_gpu_specs(), calibration)
        page_cache.set(key, found, PREDICTIONS_CACHE_SECONDS)
    return found


def measured_runs_report(*, owner_id: int) -> MeasuredRunsReport:
    """Predictions on the owner's runs with their current calibration, plus the shipped one's
    error for comparison when they have a calibration of their own.

    The rows and summaries are cached too, under the keys of the predictions they come from
    and which calibration is active (summarising costs more than reading the predictions)."""
    own = UserCalibration.objects.filter(owner_id=owner_id).first()
    runs = measured_runs_frame(owner_id=owner_id)
    if runs.empty:
        return MeasuredRunsReport([], [], own)
    calibrations = [shipped_calibration()]
    if own is not None:
        calibrations.append(Calibration.from_dict(own.params))
    keys = [_predictions_key(owner_id, runs, calibration) for calibration in calibrations]
    active = own is not None and own.is_active
    page_key = "measured-runs-page:" + hashlib.sha256(
        "|".join([*keys, str(active)]).encode()).hexdigest()[:32]
    found = page_cache.get(page_key)
    if found is None:
        shipped, *rest = (_predictions(owner_id, runs, c) for c in calibrations)
        if not rest:
            found = (_prediction_rows(shipped), _summary_rows(shipped, None))
        else:
            found = (_prediction_rows(rest[0] if active else shipped),
                     _summary_rows(rest[0], shipped))
        page_cache.set(page_key, found, PREDICTIONS_CACHE_SECONDS)
    return MeasuredRunsReport(*found, own)


NO_RUNS_MESSAGE = "Upload some measured runs before fitting a calibration."


def calibration_fit_pending(*, owner_id: int) -> CalibrationFit | None:
    """The owner's fit still queued or running, if any (at most one: calibration_fit_start)."""
    return CalibrationFit.objects.filter(
        owner_id=owner_id, status__in=[CalibrationFit.Status.QUEUED,
                                       CalibrationFit.Status.RUNNING]).first()


def calibration_fit_start(*, owner_id: int) -> CalibrationFit:
    """Queue a refit of the owner's calibration (a Celery task: a few seconds) and return it;
    while one is queued or running, that one is returned and no second starts. ValueError
    when they have no runs. With the task queue down the fit is saved and QueueUnavailableError
    is raised after the commit (the outbox sends it when the queue is back)."""
    if not MeasuredRun.objects.filter(owner_id=owner_id).exists():
        raise ValueError(NO_RUNS_MESSAGE)
    with transaction.atomic():
        # One at a time: two clicks at once wait here for each other.
        get_user_model().objects.select_for_update().filter(pk=owner_id).first()
        pending = calibration_fit_pending(owner_id=owner_id)
        if pending is not None:
            return pending
        fit = CalibrationFit.objects.create(owner_id=owner_id)
        run_enqueue(fit)
    return fit


def calibration_fit_execute(*, run_id: int, attempt: Attempt) -> None:
    """The task: fit once; a second delivery of a claimed or finished fit does nothing."""
    run_execute(CalibrationFit, run_id, _fit, attempt=attempt, message="reading your runs")


def _fit(run: CalibrationFit) -> dict[str, Any]:
    def progress(pct: float, line: str) -> None:
        run_progress(CalibrationFit, run.pk, pct, line)

    return asdict(user_calibration_fit(owner_id=run.owner_id,
                                       progress=progress_span(progress, 1.0, 99.0)))


def latest_calibration_fit(*, owner_id: int) -> CalibrationFit | None:
    return CalibrationFit.objects.filter(owner_id=owner_id).first()


def user_calibration_fit(*, owner_id: int, progress: Progress | None = None) -> FitOutcome:
    """Refit on the shipped reference runs plus the owner's runs and make it their active one.

    Takes a few seconds (choosing layouts for ~410 runs, then a few thousand model
    evaluations: 7-8 s measured), so the page runs it as a task (calibration_fit_start);
    `progress` hears how far it is.
    """
    report = progress or (lambda share, line: None)
    mine = measured_runs_frame(owner_id=owner_id)
    if mine.empty:
        raise ValueError(NO_RUNS_MESSAGE)
    specs = shipped_gpu_specs()
    report(0.01, "predicting your runs with your current calibration")
    before = _predictions(owner_id, mine, calibration_for(owner_id))
    if before["predicted"].isna().all():
        raise ValueError("The simulator cannot predict any of your runs; see their notes.")
    reference = reference_runs_frame()
    # your runs lack the whole-run columns (whole_runs.WHOLE_RUN_ONLY_COLUMNS): blank there
    # ...and always inform the fit, even on a GPU at the generic efficiency (is_own_run)
    combined = pd.concat([reference.assign(is_own_run=False),
                          mine.reindex(columns=reference.columns).assign(is_own_run=True)],
                         ignore_index=True)
    fitted = fit_calibration(combined, specs, initial=shipped_calibration(),
                             progress=progress_span(report, 0.03, 0.96))
    report(0.97, "predicting your runs with the new calibration")
    # ...kept in the cache, so the page the user comes back to shows them at once
    after = _predictions(owner_id, mine, fitted)
    with transaction.atomic():
        UserCalibration.objects.update_or_create(
            owner_id=owner_id,
            defaults={"params": fitted.to_dict(), "n_runs": fitted.n_rows, "is_active": True},
        )
    return FitOutcome(
        fitted.n_rows,
        int(before["predicted"].notna().sum()),
        _median_ape_pct(before),
        _median_ape_pct(after),
    )


def user_calibration_deactivate(*, owner_id: int) -> None:
    """Go back to the shipped calibration; the fitted one is kept for comparison.

    ValueError while a fit is queued or running: it makes itself the calibration when it
    ends, which would undo this choice."""
    if calibration_fit_pending(owner_id=owner_id) is not None:
        raise ValueError("A fit of your calibration is running and becomes your calibration "
                         "when it ends; choose the shipped one after that.")
    UserCalibration.objects.filter(owner_id=owner_id).update(is_active=False)
