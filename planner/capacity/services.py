"""Capacity workflows: queue a sweep of an analysed history, run it (in parts for large
sweeps), and the payload the page, the API and the command line show.

Interfaces (views, API, tasks, command) call these; these call the core and the ORM.
"""

from __future__ import annotations

import contextlib
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd
from django.conf import settings
from django.db import transaction

from planner.capacity.core.frontier import check_points, figures_from_dict, sweep_points
from planner.capacity.core.inputs import CapacityInputs, capacity_inputs
from planner.capacity.core.jobs import PoolJobs
from planner.capacity.documents import (
    capacity_document,
    capacity_grid,
    capacity_jobs,
    capacity_prices,
    document_from_points,
)
from planner.capacity.models import CapacityPart, CapacityRun
from planner.capacity.purchase import pool_gate
from planner.core.serialize import json_safe
from planner.fair_shares import creation_check
from planner.purchase_mix import offers as offer_service
from planner.purchase_mix import selectors as mix_selectors
from planner.purchase_mix import services as mix_services
from planner.purchase_mix.core.analysis import analyze_demand
from planner.purchase_mix.core.buy import what_to_buy
from planner.purchase_mix.core.hindsight import hindsight_replay
from planner.purchase_mix.core.upload.jobs import JobHistory
from planner.purchase_mix.documents import (
    TREND_HORIZON_DAYS,
    RunOptions,
    fit_window,
    service_years_left,
)
from planner.purchase_mix.models import AnalysisRun, History
from planner.runs import (
    RESOURCE_ERRORS,
    TRANSIENT_ERRORS,
    TRANSIENT_MESSAGE,
    Attempt,
    resource_message,
    run_claim,
    run_enqueue,
    run_execute,
    run_fail,
    run_lease,
    run_progress,
    run_store,
)

MAX_PARTS = 16


def _analysis(history: History) -> AnalysisRun:
    run = mix_selectors.latest_run(history.pk)
    if run is None or run.status != AnalysisRun.Status.DONE:
        raise ValueError("history: analyse the history first (its purchase-mix analysis "
                         "gives the prices and today's no-wait commitment)")
    return run


def history_jobs(history: History) -> pd.DataFrame:
    """The history's parsed jobs; ValueError for a usage series (it has no jobs)."""
    if history.is_usage:
        raise ValueError("history: a usage series has no jobs to queue; upload a job "
                         "history (generic, Slurm or mapped)")
    loaded = mix_services.history_load(history)
    assert isinstance(loaded, JobHistory)
    return loaded.jobs


def capacity_create(*, history: History, raw: dict[str, Any]) -> CapacityRun:
    """Check the inputs against the history and queue a sweep; ValueError naming the field."""
    inputs = capacity_inputs(raw)
    analysis = _analysis(history)
    if history.is_usage:
        history_jobs(history)  # raises the usage-series message
    if inputs.gpu_type and inputs.gpu_type not in history.gpu_types:
        raise ValueError(f"gpu_type: {inputs.gpu_type!r} is not in the history "
                         f"({', '.join(history.gpu_types)})")
    if inputs.pool_gpus and inputs.pool_price != "owned":
        # whole instances: a size that cannot be bought is refused now, not in the sweep
        capacity_grid(capacity_jobs(history_jobs(history), inputs), inputs, analysis.result)
    creation_check(owner_id=history.owner_id, kind="capacity")
    if len(history.gpu_types) == 1:  # then every job is swept: the bound is known now
        check_points(inputs.n_points, history.records)
    with transaction.atomic():  # the row and its outbox entry: both or neither
        run = CapacityRun.objects.create(history=history, analysis=analysis,
                                         inputs=inputs.to_dict())
        run_enqueue(run)
    return run


def capacity_delete(*, owner_id: int, history_id: int) -> int | None:
    """Delete every capacity sweep of the owner's history (a worker still sweeping one
    stores nothing); how many, or None when the history is not theirs."""
    if not History.objects.filter(owner_id=owner_id, pk=history_id).exists():
        return None
    deleted, by_model = CapacityRun.objects.filter(history_id=history_id).delete()
    return int(by_model.get(CapacityRun._meta.label, 0))


def latest_capacity(history_id: int) -> CapacityRun | None:
    return CapacityRun.objects.filter(history_id=history_id).order_by("-created_at", "-id").first()


def _loaded(run: CapacityRun) -> tuple[PoolJobs, CapacityInputs, dict[str, Any]]:
    history = History.objects.get(pk=run.history_id)
    inputs = capacity_inputs(run.inputs)
    analysis = AnalysisRun.objects.filter(pk=run.analysis_id).values_list(
        "result", flat=True).first()
    if not analysis:
        raise ValueError("history: its analysis was replaced or deleted; run the sweep again")
    return capacity_jobs(history_jobs(history), inputs), inputs, analysis


def _part_count(n_jobs: int, n_points: int) -> int:
    return max(1, min(MAX_PARTS, n_points,
                      math.ceil(n_jobs * n_points / settings.CAPACITY_PART_JOB_POINTS)))


def _compute(run: CapacityRun) -> dict[str, Any] | None:
    jobs, inputs, analysis = _loaded(run)
    grid = capacity_grid(jobs, inputs, analysis)
    n_parts = _part_count(jobs.n_jobs, len(grid))
    if n_parts > 1:
        capacity_split(run_id=run.pk, n_points=len(grid), n_parts=n_parts)
        return None  # the last part to finish stores the sweep
    prices, _ = capacity_prices(analysis, jobs.gpu_type, inputs, pool_gate(jobs))

    def report(done: int, total: int) -> None:
        run_progress(CapacityRun, run.pk, 5 + 85 * done / total,
                     f"replayed {done} of {total} points")

    points = sweep_points(jobs, grid, prices, report=report)
    return _document(jobs, inputs, analysis, points)


def _document(jobs: PoolJobs, inputs: CapacityInputs, analysis: dict[str, Any],
              points: list[Any]) -> dict[str, Any]:
    return document_from_points(jobs, inputs, analysis, points)


def capacity_execute(*, run_id: int, attempt: Attempt) -> None:
    """Claim a queued sweep and run it (or split it into parts); a second call does nothing."""
    run_execute(CapacityRun, run_id, _compute, attempt=attempt, message="reading the jobs")


def capacity_split(*, run_id: int, n_points: int, n_parts: int) -> None:
    """One row and one task per part; a repeated split adds no row and resends only the
    parts not finished (their claim makes a duplicate send harmless)."""
    from planner.capacity.core.frontier import grid_parts

    with transaction.atomic():
        ranges = grid_parts(n_points, n_parts)
        for index, (start, stop) in enumerate(ranges):
            part, _ = CapacityPart.objects.get_or_create(
                capacity_run_id=run_id, index=index,
                defaults={"n_parts": len(ranges), "start": start, "stop": stop})
            if not part.is_finished:
                run_enqueue(part, on_unavailable="keep")
        run_progress(CapacityRun, run_id, 5, f"sweeping in {len(ranges)} parts")


def capacity_part_execute(*, part_id: int, attempt: Attempt) -> None:
    """Sweep one part; the last part to finish merges every part and stores the sweep. A
    failed part fails the sweep with its message; a second delivery does nothing."""
    part = run_claim(CapacityPart, part_id, attempt, "sweeping")
    if part is None:
        return
    label = f"sweep part {part.index + 1} of {part.n_parts}"
    try:
        with run_lease(CapacityPart, part.pk, attempt.task_id):
            run = CapacityRun.objects.get(pk=part.capacity_run_id)
            jobs, inputs, analysis = _loaded(run)
            grid = capacity_grid(jobs, inputs, analysis)
            prices, _ = capacity_prices(analysis, jobs.gpu_type, inputs, pool_gate(jobs))
            points = sweep_points(jobs, grid[part.start:part.stop], prices)
        _part_finish(part, [p.to_dict() for p in points], (jobs, inputs, analysis))
    except TRANSIENT_ERRORS:
        if attempt.is_last_try:
            _part_fail(part, TRANSIENT_MESSAGE)
        raise
    except ValueError as exc:
        _part_fail(part, f"{label}: {exc}")
    except RESOURCE_ERRORS as exc:  # the worker lives: see planner.runs
        _part_fail(part, f"{label}: {resource_message(exc)}")
    except Exception as exc:
        _part_fail(part, f"{label}: internal error: {exc.__class__.__name__}")
        raise


def _part_finish(part: CapacityPart, points: list[dict[str, Any]],
                 loaded: tuple[PoolJobs, CapacityInputs, dict[str, Any]]) -> None:
    with transaction.atomic():
        # The lock serialises the parts' endings: exactly one sees every part done.
        run = CapacityRun.objects.select_for_update().only("status").get(
            pk=part.capacity_run_id)
        if run.status != CapacityRun.Status.RUNNING:
            CapacityPart.objects.filter(pk=part.pk).delete()  # the sweep ended without it
            return
        run_store(CapacityPart, part.pk, {"points": points})
        parts = CapacityPart.objects.filter(capacity_run_id=run.pk)
        done = parts.filter(status=CapacityPart.Status.DONE).count()
        if done < part.n_parts:
            run_progress(CapacityRun, run.pk, 5 + 85 * done / part.n_parts,
                         f"swept {done} of {part.n_parts} parts")
            return
        stored = parts.order_by("index").values_list("result", flat=True)
        merged = [figures_from_dict(p) for result in stored for p in result["points"]]
        run_store(CapacityRun, run.pk, _document(*loaded, merged))
        parts.delete()


def _part_fail(part: CapacityPart, message: str) -> None:
    with contextlib.suppress(*TRANSIENT_ERRORS), transaction.atomic():
        if CapacityRun.objects.filter(pk=part.capacity_run_id,
                                      status=CapacityRun.Status.RUNNING).exists():
            run_fail(CapacityRun, part.capacity_run_id, message)
        CapacityPart.objects.filter(capacity_run_id=part.capacity_run_id).delete()


def capacity_payload(history: History, run: CapacityRun | None) -> dict[str, Any]:
    """The JSON of GET /api/histories/{id}/capacity (and `capacity_plan --json`): the run's
    state and, once done, the capacity document's keys (`points`, `recommended`, ...)."""
    document = run.result if run is not None and run.status == CapacityRun.Status.DONE else {}
    return {
        "history_id": history.pk, "run_id": run.pk if run else None,
        "status": run.status if run else None,
        "progress_pct": run.progress_pct if run else 0,
        "message": run.error if run else "",
        "points": [], "recommended": None, **(document or {}),
    }


def _offers_document(history: JobHistory, options: RunOptions) -> dict[str, Any]:
    """The part of a purchase-mix analysis a sweep needs: the offers and prices per GPU type,
    what to buy now and the hindsight optimum (no look-back sensitivity, no backtest)."""
    analysis = analyze_demand(history, horizon_days=TREND_HORIZON_DAYS)
    offer_set = offer_service.gpu_offers(
        sizes=[offer_service.GpuDemandSize(name, analysis.stats[name].p90_gpus)
               for name in analysis.demand.gpu_types],
        provider=options.provider, region=options.region, spot_bands=options.spot_bands,
        accelerator_map=options.accelerator_map)
    window = fit_window(analysis.demand, options.lookback_days)
    buy = what_to_buy(window, offer_set.offers, settings=options.risk_settings,
                      is_spot_allowed=options.is_spot_alternative,
                      is_elsewhere_allowed=options.is_elsewhere_alternative,
                      service_years_left=service_years_left(offer_set.accelerators),
                      savings_plans=offer_set.savings_plans)
    hindsight = hindsight_replay(window, offer_set.offers, is_gated=True).to_dict()
    hindsight.pop("demand", None)
    return {"offers": [json_safe(offer) for offer in offer_set.offers],
            "prices": offer_set.prices, "unpriced": offer_set.unpriced,
            "what_to_buy": buy.to_dict(), "hindsight_reference": hindsight}


def file_capacity(path: Path, *, options: mix_services.ParseOptions,
                  run_options: RunOptions, raw: dict[str, Any]
                  ) -> dict[str, Any]:
    """Parse a file, analyse it for prices and the no-wait commitment, sweep on this
    machine's cores, store nothing (the command line)."""
    inputs = capacity_inputs(raw)
    with path.open("rb") as handle:
        parsed = mix_services.history_parse(handle, options=options)
    if parsed.history is None:
        first = "; ".join(f"line {e.line}, {e.field}: {e.message}" for e in parsed.errors[:10])
        raise ValueError(f"{parsed.error_count} bad rows (skip them with --skip-bad-rows): "
                         f"{first}")
    if not isinstance(parsed.history, JobHistory):
        raise ValueError("format: a usage series has no jobs to queue; give a job history")
    analysis = _offers_document(parsed.history, run_options)
    threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1

    def sweep(jobs: PoolJobs, grid: Any, prices: Any) -> list[Any]:
        return sweep_points(jobs, grid, prices, threads=threads)

    document = capacity_document(parsed.history.jobs, analysis, inputs, sweep=sweep)
    return {"history_id": None, "name": path.name, "run_id": None, "status": "done",
            "progress_pct": 100, "message": "", **document}
