"""The Capacity view of an analysed history: the sweep form, its progress, the frontier,
the queue at the recommended point and the table; its status JSON and its exports."""

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import json_script
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from plotly.utils import PlotlyJSONEncoder

from planner.capacity import charts, services
from planner.capacity import reports as capacity_reports
from planner.capacity.documents import dated_sources
from planner.capacity.forms import CapacityForm, initial_from
from planner.capacity.models import CapacityRun
from planner.fair_shares import download_check
from planner.purchase_mix import selectors
from planner.purchase_mix.models import History
from planner.reports import services as report_services
from planner.reports import views as report_views
from planner.runs import run_status
from pricing.selectors import stale_before


def _owned(request: HttpRequest, pk: int) -> History:
    assert request.user.pk is not None
    return get_object_or_404(selectors.owned_histories(request.user.pk), pk=pk)


def _figures(run: CapacityRun) -> list[Any]:
    """The chart scripts, cached per finished sweep (a 90-point frontier encodes quickly,
    but the queue series is thousands of points)."""
    key = f"capacity-figures:{run.pk}:{run.finished_at and run.finished_at.timestamp()}"
    scripts: list[Any] | None = cache.get(key)
    if scripts is None:
        figures = {"capacity-frontier": charts.frontier_figure(run.result or {}),
                   "capacity-queue": charts.queue_figure(run.result or {})}
        scripts = [json_script(fig.to_plotly_json(), name, encoder=PlotlyJSONEncoder)
                   for name, fig in figures.items()]
        cache.set(key, scripts, 3600)
    return scripts


def _context(history: History, form: CapacityForm) -> dict[str, Any]:
    run = services.latest_capacity(history.pk)
    analysis = selectors.latest_run(history.pk)
    context: dict[str, Any] = {"history": history, "run": run, "form": form,
                               "is_analysed": analysis is not None
                               and analysis.status == analysis.Status.DONE}
    if run is not None and run.status == CapacityRun.Status.DONE:
        sources = ((run.result or {}).get("prices") or {}).get("sources") or []
        context.update(doc=run.result, figures=_figures(run), stale_days=settings.PRICE_STALE_DAYS,
                       price_rows=dated_sources(sources, today=timezone.now().date(),
                                                stale_days=settings.PRICE_STALE_DAYS,
                                                stale_before=stale_before()))
    return context


@login_required
@require_http_methods(["GET", "POST"])
def capacity_detail(request: HttpRequest, pk: int) -> HttpResponse:
    history = _owned(request, pk)
    if request.method == "POST":
        form = CapacityForm(request.POST, gpu_types=history.gpu_types)
        if form.is_valid():
            try:
                services.capacity_create(history=history, raw=form.raw())
                return redirect("planner:capacity_detail", pk=history.pk)
            except ValueError as exc:
                form.add_field_error(str(exc))
        return render(request, "planner/capacity/detail.html", _context(history, form),
                      status=400)
    run = services.latest_capacity(history.pk)
    initial = initial_from(run.inputs) if run is not None else {}
    form = CapacityForm(initial=initial, gpu_types=history.gpu_types)
    return render(request, "planner/capacity/detail.html", _context(history, form))


@login_required
@require_GET
def capacity_status(request: HttpRequest, pk: int) -> JsonResponse:
    run = services.latest_capacity(_owned(request, pk).pk)
    if run is None:
        return JsonResponse({"status": None, "progress_pct": 0, "is_finished": True})
    return JsonResponse(run_status(run))


@login_required
@require_GET
def capacity_report(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    _owned(request, pk)
    download_check(owner_id=request.user.pk)
    return report_views.report_download(
        lambda: capacity_reports.capacity_report(history_id=pk, owner_id=request.user.pk), fmt)


@login_required
@require_POST
def capacity_report_start(request: HttpRequest, pk: int) -> HttpResponse:
    _owned(request, pk)
    try:
        document = capacity_reports.capacity_report(history_id=pk, owner_id=request.user.pk)
        stored = report_services.report_create(
            owner_id=request.user.pk, document=document, fmt=request.POST.get("format", "pdf"))
    except ValueError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    return redirect("planner:report_detail", report_id=stored.id)


@login_required
@require_http_methods(["GET", "POST"])
def capacity_delete(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: what deleting the history's capacity sweeps removes; POST: delete them."""
    history = _owned(request, pk)
    if request.method == "POST":
        count = services.capacity_delete(owner_id=history.owner_id, history_id=history.pk)
        messages.success(request, f"Deleted {count} capacity sweep(s) of “{history.name}”.")
        return redirect("planner:capacity_detail", pk=history.pk)
    return render(request, "forms/confirm_delete.html", {
        "name": f"the capacity sweeps of {history.name}",
        "back_url": reverse("planner:capacity_detail", args=[history.pk]),
        "what": f"{history.capacity_runs.count()} capacity sweep(s) of this job history.",
        "consequences": ["Their frontiers and results (a running sweep stops).",
                         "The job history, its analyses and reports already made stay."]})
