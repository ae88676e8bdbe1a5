"""Job-history workflows: upload (parse and store), analysis runs, recommendation documents.

Interfaces (views, API, task, command) call these; these call planner.core and the ORM.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pandas as pd
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.base import File
from django.core.files.storage import default_storage
from django.db import transaction

from planner import runs
from planner.disk import disk_room_check
from planner.fair_shares import creation_check
from planner.purchase_mix.core.analysis import fit_trend
from planner.purchase_mix.core.demand import HourlyDemand, split_hourly_demand
from planner.purchase_mix.core.offers import CommitmentOption, GpuOffer
from planner.purchase_mix.core.replay import MixReplay, TypeDecision, replay_mix
from planner.purchase_mix.core.upload.jobs import (
    JobHistory,
    ParseResult,
    UploadSettingError,
    UsageHistory,
)
from planner.purchase_mix.core.upload.parsing import parse_job_history
from planner.purchase_mix.documents import (
    TREND_HORIZON_DAYS,
    RunOptions,
    document_current,
    fit_window,
    recommendation_document,
    run_options_check,
    upload_texts_check,
)
from planner.purchase_mix.frames import frame_load, frame_save
from planner.purchase_mix.models import AnalysisRun, History
from planner.purchase_mix.quota import (  # noqa: F401 - StorageQuotaError, storage_used: part of this service
    StorageQuotaError,
    UploadTooLargeError,
    files_bytes,
    quota_check,
    storage_used,
)
from planner.runs import Attempt, run_enqueue, run_progress

UPLOAD_DIR = "histories"
MAX_ROW_ERRORS = 200


def history_delete(*, owner_id: int, history_id: int) -> History | None:
    """Delete the owner's history with its analyses and capacity sweeps (its files go once
    the deletion commits: planner.purchase_mix.signals); None when it is not theirs."""
    history = History.objects.filter(owner_id=owner_id, pk=history_id).first()
    if history is not None:
        history.delete()  # one transaction with its cascades (Django's delete collector)
    return history


@dataclass(frozen=True)
class ParseOptions:
    """How to read an upload (the form fields, the API fields and the command options)."""

    fmt: str
    column_map: Mapping[str, str] = field(default_factory=dict)
    time_unit: str = ""
    origin: str = ""
    default_gpu_type: str = ""
    is_skipping_bad_rows: bool = False
    duplicate_ids: str = "refuse"


@dataclass(frozen=True)
class UploadOutcome:
    """A stored history and its queued run, or the parse problems (then nothing is stored)."""

    history: History | None
    run: AnalysisRun | None
    parse: ParseResult | None
    error: str = ""
    # The upload setting that caused the error or can fix it (UploadSettingError.setting),
    # and the fields no column provides.
    setting: str = ""
    missing: tuple[str, ...] = ()

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [error.to_dict() for error in self.parse.errors] if self.parse else []


def history_parse(source: IO[bytes] | str | Path, *, options: ParseOptions) -> ParseResult:
    """Parse an upload with the core parser and the size limit; raises ValueError."""
    upload_texts_check(default_gpu_type=options.default_gpu_type, origin=options.origin)
    return parse_job_history(
        source,
        options.fmt,
        mapping=dict(options.column_map) or None,
        time_unit=options.time_unit or None,
        origin=options.origin or None,
        default_gpu_type=options.default_gpu_type or None,
        skip_bad_rows=options.is_skipping_bad_rows,
        max_bytes=settings.UPLOAD_MAX_BYTES,
        max_errors=MAX_ROW_ERRORS,
        now_epoch_s=int(time.time()),
        duplicate_ids=options.duplicate_ids,
    )


def _records(history: JobHistory | UsageHistory) -> pd.DataFrame:
    return history.jobs if isinstance(history, JobHistory) else history.samples


def demand_frame(demand: HourlyDemand) -> pd.DataFrame:
    """Firm and interruptible columns side by side: ("firm"|"interruptible", gpu_type)."""
    return pd.concat(
        {"firm": demand.firm_gpus, "interruptible": demand.interruptible_gpus}, axis=1
    ).set_axis(
        [f"{part}:{name}" for part in ("firm", "interruptible") for name in demand.gpu_types],
        axis=1,
    )


def demand_from_frame(
    frame: pd.DataFrame,
    job_gpus: Mapping[str, float],
    job_gpu_hours: Mapping[str, Mapping[str, float]] | None = None,
    off_spot_gpu_hours: Mapping[str, float] | None = None,
) -> HourlyDemand:
    firm = {c.split(":", 1)[1]: frame[c] for c in frame.columns if c.startswith("firm:")}
    spare = {c.split(":", 1)[1]: frame[c] for c in frame.columns if c.startswith("interruptible:")}
    index = frame.index.rename("hour")
    columns = pd.Index(list(firm), name="gpu_type", dtype="str")
    return HourlyDemand(
        firm_gpus=pd.DataFrame(firm, index=index).set_axis(columns, axis=1),
        interruptible_gpus=pd.DataFrame(spare, index=index).set_axis(columns, axis=1),
        interruptible_job_gpus=dict(job_gpus),
        interruptible_gpu_hours_by_job_gpus={
            name: {int(gpus): float(hours) for gpus, hours in sizes.items()}
            for name, sizes in (job_gpu_hours or {}).items()
        },
        off_spot_gpu_hours=dict(off_spot_gpu_hours or {}),
    )


def _save_files(upload: IO[bytes], history: JobHistory | UsageHistory) -> dict[str, str]:
    """Write the original, the parsed rows and the hourly demand under random names."""
    stem = f"{UPLOAD_DIR}/{uuid.uuid4().hex}"
    upload.seek(0)
    demand = split_hourly_demand(history)
    frame = demand_frame(demand)
    frame.attrs["interruptible_job_gpus"] = dict(demand.interruptible_job_gpus)
    frame.attrs["job_gpu_hours"] = {
        name: {str(gpus): hours for gpus, hours in sizes.items()}
        for name, sizes in demand.interruptible_gpu_hours_by_job_gpus.items()
    }
    frame.attrs["off_spot_gpu_hours"] = dict(demand.off_spot_gpu_hours)
    saved: dict[str, str] = {}
    try:  # all three or none: a full disk on the last leaves none of the first two
        saved["upload"] = default_storage.save(f"{stem}.csv", File(upload))
        saved["parsed"] = frame_save(f"{stem}.jobs.parquet", _records(history))
        saved["demand"] = frame_save(f"{stem}.demand.parquet", frame)
    except BaseException:
        _delete_files(saved)
        raise
    return saved


def _delete_files(names: Mapping[str, str]) -> None:
    for name in names.values():
        default_storage.delete(name)


def history_create(
    *,
    owner_id: int,
    upload: IO[bytes],
    name: str,
    size_bytes: int,
    options: ParseOptions,
    run_options: RunOptions | None = None,
) -> UploadOutcome:
    """Parse an upload; when it is clean (or bad rows are skipped) store it and queue a run.

    All or nothing: files are written first, rows (with the run's outbox entry) in one
    transaction, files removed only if that transaction fails; a committed history keeps them
    whatever is raised after the commit (QueueUnavailableError: the task queue is down).
    Raises UploadTooLargeError above settings.UPLOAD_MAX_BYTES, StorageQuotaError (one) when
    the owner's histories would exceed settings.USER_STORAGE_QUOTA_BYTES.
    """
    if size_bytes > settings.UPLOAD_MAX_BYTES:
        raise UploadTooLargeError(_too_large_message(size_bytes))
    quota_check(owner_id, size_bytes)
    disk_room_check(settings.MEDIA_ROOT, size_bytes)  # 507 before parsing, not after
    run_options_check(run_options or RunOptions())
    try:
        parsed = history_parse(upload, options=options)
    except UploadSettingError as error:
        return UploadOutcome(None, None, None, error=str(error), setting=error.setting,
                             missing=error.missing)
    except ValueError as error:
        return UploadOutcome(None, None, None, error=str(error))
    if parsed.history is None:
        return UploadOutcome(None, None, parsed, error=_row_error_message(parsed))
    # A clean file queues an analysis: the user's share of the workers (a refused file is not
    # counted, so fixing one costs nothing).
    creation_check(owner_id=owner_id, kind="analysis")
    names = _save_files(upload, parsed.history)
    written = False
    try:
        with transaction.atomic():
            # Again inside the write: two uploads at once cannot both take the last room.
            get_user_model().objects.select_for_update().filter(pk=owner_id).first()
            quota_check(owner_id, files_bytes(names.values()))
            history = History.objects.create(
                owner_id=owner_id,
                **_history_fields(name, size_bytes, options, parsed, parsed.history),
                **names,
            )
            run = run_create(history_id=history.pk, options=run_options or RunOptions())
            written = True
    except Exception:
        # Raised by the commit or after it (the queue or the connection gone while the run's
        # task was sent: the outbox sends it later), the history and its run may be saved and
        # need the files: kept (at worst unused), never deleted under a committed row.
        if not written:
            _delete_files(names)
        raise
    return UploadOutcome(history, run, parsed)


def _too_large_message(size_bytes: int) -> str:
    limit_mb = settings.UPLOAD_MAX_BYTES / 1024**2
    return f"The file is {size_bytes / 1024**2:,.1f} MB; the upload limit is {limit_mb:,.0f} MB."


def _row_error_message(parsed: ParseResult) -> str:
    rows = parsed.bad_rows or min(parsed.error_count, parsed.rows_read)
    problems = (f" ({parsed.error_count:,} problems in all)"
                if parsed.error_count > rows else "")
    return (
        f"{rows:,} of {parsed.rows_read:,} rows have problems{problems}; nothing was stored. "
        "Fix the file, or tick “skip bad rows” to store the good rows only."
    )


def _history_fields(
    name: str,
    size_bytes: int,
    options: ParseOptions,
    parsed: ParseResult,
    history: JobHistory | UsageHistory,
) -> dict[str, Any]:
    return {
        "name": name[:255],
        "fmt": options.fmt,
        "column_map": dict(options.column_map),
        "time_unit": options.time_unit,
        "origin": options.origin,
        "default_gpu_type": options.default_gpu_type,
        "is_skipping_bad_rows": options.is_skipping_bad_rows,
        "size_bytes": size_bytes,
        "rows_read": parsed.rows_read,
        "rows_skipped": parsed.rows_skipped,
        "rows_ignored": parsed.rows_ignored,
        "records": len(_records(history)),
        "encoding": parsed.encoding,
        "delimiter": parsed.delimiter,
        "gpu_types": list(history.gpu_types),
        "is_usage": isinstance(history, UsageHistory),
    }


def run_recompute(*, owner_id: int, history_id: int, options: RunOptions) -> AnalysisRun:
    """Queue another analysis of a stored history, within the owner's share of the workers."""
    creation_check(owner_id=owner_id, kind="analysis")
    return run_create(history_id=history_id, options=options)


def run_create(*, history_id: int, options: RunOptions) -> AnalysisRun:
    """Queue an analysis run; the task starts when the transaction commits."""

    with transaction.atomic():
        run = AnalysisRun.objects.create(
            history_id=history_id,
            provider=options.provider,
            region=options.region,
            lookback_days=options.lookback_days,
            spot_bands=dict(options.spot_bands),
            accelerator_map=dict(options.accelerator_map),
            growth_scenarios=list(options.growth_scenarios),
            is_spot_alternative=options.is_spot_alternative,
            is_elsewhere_alternative=options.is_elsewhere_alternative,
        )
        run_enqueue(run)
    return run


def _progress(run_id: int) -> Callable[[int], None]:
    def report(pct: int) -> None:
        run_progress(AnalysisRun, run_id, pct, "analyzing demand and sizing the mix")

    return report


def history_load(history: History) -> JobHistory | UsageHistory:
    with history.parsed.open("rb") as handle:
        frame = frame_load(handle)
    if history.is_usage:
        return UsageHistory(samples=frame)
    return JobHistory(jobs=frame)


def history_demand(history: History) -> HourlyDemand:
    with history.demand.open("rb") as handle:
        frame = frame_load(handle)
    attrs = frame.attrs
    return demand_from_frame(
        frame, attrs.get("interruptible_job_gpus", {}), attrs.get("job_gpu_hours", {}),
        attrs.get("off_spot_gpu_hours", {}),
    )


def _compute(run: AnalysisRun) -> dict[str, Any]:
    history = History.objects.get(pk=run.history_id)
    return recommendation_document(
        history_load(history), options=run_options_of(run), report=_progress(run.pk)
    )


def run_execute(*, run_id: int, attempt: Attempt) -> None:
    """Analyze and recommend for a run once; the document replaces any earlier one."""
    runs.run_execute(AnalysisRun, run_id, _compute, attempt=attempt, message="reading the history")


def run_options_of(run: AnalysisRun) -> RunOptions:
    return RunOptions(
        provider=run.provider,
        region=run.region,
        lookback_days=run.lookback_days,
        spot_bands=run.spot_bands,
        accelerator_map=run.accelerator_map,
        growth_scenarios=tuple(float(g) for g in run.growth_scenarios or ()),
        is_spot_alternative=run.is_spot_alternative,
        is_elsewhere_alternative=run.is_elsewhere_alternative,
    )


def history_payload(history: History | None, run: AnalysisRun | None) -> dict[str, Any]:
    """The JSON the API returns for a history (and `recommend_mix --json` prints)."""
    return {
        "id": history.pk if history else None,
        "name": history.name if history else None,
        "format": history.fmt if history else None,
        "upload": _upload_summary(history) if history else None,
        "run_id": run.pk if run else None,
        "status": run.status if run else None,
        "progress_pct": run.progress_pct if run else 0,
        "message": run.error if run else "",
        "document": document_current(run.result)
        if run and run.status == AnalysisRun.Status.DONE else None,
    }


def _upload_summary(history: History) -> dict[str, Any]:
    return {
        "rows_read": history.rows_read,
        "rows_skipped": history.rows_skipped,
        "rows_ignored": history.rows_ignored,
        "records": history.records,
        "size_bytes": history.size_bytes,
        "encoding": history.encoding,
        "delimiter": history.delimiter,
        "gpu_types": history.gpu_types,
        "created_at": history.created_at.isoformat(),
    }


def file_document(path: Path, *, options: ParseOptions, run_options: RunOptions) -> dict[str, Any]:
    """Parse a file and recommend without storing anything (the command line).

    Raises ValueError for file problems, and for row errors with the first lines named.
    """
    run_options_check(run_options)
    with path.open("rb") as handle:
        parsed = history_parse(handle, options=options)
    if parsed.history is None:
        first = "; ".join(
            f"line {e.line}, {e.field}: {e.message}" for e in parsed.errors[:10]
        )
        raise ValueError(f"{parsed.error_count} bad rows (skip them with --skip-bad-rows): {first}")
    document = recommendation_document(parsed.history, options=run_options)
    payload = history_payload(None, None)
    upload = {**parsed.to_dict(), "records": len(_records(parsed.history))}
    upload.pop("errors", None)
    return {
        **payload,
        "name": path.name,
        "format": options.fmt,
        "upload": upload,
        "status": AnalysisRun.Status.DONE.value,
        "progress_pct": 100,
        "document": document,
    }


@dataclass(frozen=True)
class HistoryReport:
    """What the history page shows: the stored document plus core objects for the charts.
    `purchase` is what to buy (the document's recommendation) replayed on the sizing window."""

    document: dict[str, Any]
    demand: HourlyDemand
    purchase: MixReplay
    trend_growth_per_year: float | None
    trend_daily_gpus: pd.Series
    trend_projected_gpus: pd.Series
    trend_fitted_growth_per_year: float | None


def _offer(data: Mapping[str, Any]) -> GpuOffer:
    fields = dict(data)
    fields["commitments"] = tuple(CommitmentOption(**item) for item in fields["commitments"])
    return GpuOffer(**fields)


def offers_from_document(document: Mapping[str, Any]) -> list[GpuOffer]:
    """Rebuild the GpuOffers a run used from its document (prices as they were then)."""
    stored = document.get("offers")
    if stored is None:  # documents stored before the "offers" key
        stored = [item["offer"] for item in document["what_to_buy"]["types"]]
    return [_offer(data) for data in stored]


def decisions_from_document(document: Mapping[str, Any]) -> tuple[TypeDecision, ...]:
    """What to buy as replayable levels: per GPU type, instances per commitment option of its
    offer (in offer order), and whether its interruptible jobs run on spot."""
    decisions = []
    for item in document["what_to_buy"]["types"]:
        layers = item["sizing"]["layers"]
        levels = tuple(sum(layer["count"] for layer in layers if layer["option"] == option)
                       for option in item["offer"]["commitments"])
        decisions.append(TypeDecision(item["gpu_type"], levels, bool(item["is_spot"])))
    return tuple(decisions)


def trend_horizon_days(demand: HourlyDemand) -> int:
    """Project as far ahead as the history reaches back (30 to 365 days): a short history
    says little about next year, and a year-long axis would squash it."""
    return min(TREND_HORIZON_DAYS, max(30, -(-demand.n_hours // 24)))


def run_report(
    *, history: History, run: AnalysisRun, growth_per_year: float | None
) -> HistoryReport:
    """Re-plays a finished run's what-to-buy on the stored hourly demand (fast) and refits
    the trend with the chosen growth rate; the rest comes from the stored document."""
    document = document_current(run.result) or {}
    demand = history_demand(history)
    purchase = replay_mix(decisions_from_document(document),
                          fit_window(demand, run.lookback_days), offers_from_document(document))
    trend = fit_trend(
        demand.total_gpus.sum(axis=1),
        growth_per_year=growth_per_year,
        horizon_days=trend_horizon_days(demand),
    )
    return HistoryReport(
        document=document,
        demand=demand,
        purchase=purchase,
        trend_growth_per_year=growth_per_year,
        trend_daily_gpus=trend.daily_gpus,
        trend_projected_gpus=trend.projected_daily_gpus,
        trend_fitted_growth_per_year=trend.fitted_growth_per_year,
    )

