"""Purchase-mix pages (job histories and their analyses): access check, form, one service
or selector call, render."""

import hashlib
from typing import IO, Any

import plotly.graph_objects as go
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import filesizeformat
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.functional import SimpleLazyObject
from django.utils.html import json_script
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET, require_POST
from plotly.utils import PlotlyJSONEncoder

from planner.fair_shares import download_check
from planner.purchase_mix import charts, selectors, services, staging
from planner.purchase_mix import reports as mix_reports
from planner.purchase_mix.forms import GrowthForm, RunForm, UploadForm, run_initial
from planner.purchase_mix.models import AnalysisRun, History
from planner.purchase_mix.staging import StagedUpload
from planner.reports import services as report_services
from planner.reports import views as report_views
from planner.runs import run_status
from pricing.selectors import catalog_version, stale_before

RUN_FORM_FIELDS = "planner/purchase_mix/_run_form_fields.html"


def _figure_script(figure: go.Figure, element_id: str) -> SafeString:
    return json_script(figure.to_plotly_json(), element_id, encoder=PlotlyJSONEncoder)


def _owned(request: HttpRequest, pk: int) -> History:
    assert request.user.pk is not None
    return get_object_or_404(selectors.owned_histories(request.user.pk), pk=pk)


@login_required
def history_list(request: HttpRequest) -> HttpResponse:
    assert request.user.pk is not None
    histories = selectors.histories_with_status(request.user.pk)
    return render(request, "planner/purchase_mix/list.html", {
        "histories": histories, "storage_used": services.storage_used(request.user.pk),
        "storage_quota": settings.USER_STORAGE_QUOTA_BYTES})


STAGED_KEY = "purchase_mix_staged_upload"


def _staged(request: HttpRequest) -> tuple[StagedUpload | None, IO[bytes] | None]:
    """The file this user chose before a refused submit, if it is still kept."""
    assert request.user.pk is not None
    staged = StagedUpload.from_session(request.session.get(STAGED_KEY))
    handle = staging.staging_open(owner_id=request.user.pk, staged=staged) if staged else None
    if handle is None:
        request.session.pop(STAGED_KEY, None)
        return None, None
    return staged, handle


def _keep_chosen_file(request: HttpRequest, form: UploadForm) -> None:
    """After a refused submit, keep a newly chosen file (replacing the kept one) so the next
    submit can use it without choosing it again."""
    upload = request.FILES.get("file")
    if upload is None or form.is_too_large:
        return
    assert request.user.pk is not None
    staging.staging_delete(owner_id=request.user.pk, staged=form.staged)
    form.staged = staging.staging_save(owner_id=request.user.pk, upload=upload,
                                       name=upload.name, size_bytes=upload.size)
    request.session[STAGED_KEY] = form.staged.to_session()


def _upload_done(request: HttpRequest, staged: StagedUpload | None) -> None:
    assert request.user.pk is not None
    staging.staging_delete(owner_id=request.user.pk, staged=staged)
    request.session.pop(STAGED_KEY, None)


@login_required
def history_upload(request: HttpRequest) -> HttpResponse:
    staged, staged_file = _staged(request)
    try:
        return _history_upload(request, staged, staged_file)
    finally:
        if staged_file is not None:
            staged_file.close()


def _history_upload(request: HttpRequest, staged: StagedUpload | None,
                    staged_file: IO[bytes] | None) -> HttpResponse:
    max_mb = settings.UPLOAD_MAX_BYTES // 1024**2
    if request.method != "POST" and staged is None:
        # A blank form: its fields (provider and region choices from the current prices) are
        # rendered once per catalog version, and the form is built only to render them.
        return render(request, "planner/purchase_mix/upload.html", {
            "form": SimpleLazyObject(UploadForm), "max_mb": max_mb,
            "fields_key": f"{catalog_version()}:{max_mb}"})
    form = UploadForm(request.POST or None, request.FILES or None, staged=staged,
                      staged_file=staged_file)
    context: dict[str, Any] = {"form": form, "max_mb": max_mb}
    if request.method != "POST":
        return render(request, "planner/purchase_mix/upload.html", context)
    if form.is_valid():
        upload, name, size = form.chosen_file()
        assert request.user.pk is not None
        try:
            outcome = services.history_create(
                owner_id=request.user.pk, upload=upload, name=name, size_bytes=size,
                options=form.parse_options(), run_options=form.run_options(),
            )
        except services.UploadTooLargeError as error:  # over the storage quota
            form.add_error("file", ValidationError(str(error), code="too_large"))
        else:
            if outcome.history is not None:
                _upload_done(request, staged)
                return redirect("planner:history_detail", pk=outcome.history.pk)
            form.show_outcome(outcome)
            context.update(outcome=outcome, parse=outcome.parse)
    _keep_chosen_file(request, form)
    status = 413 if form.is_too_large else 400
    return render(request, "planner/purchase_mix/upload.html", context, status=status)


@login_required
@require_GET
def history_detail(request: HttpRequest, pk: int) -> HttpResponse:
    history = _owned(request, pk)
    run = selectors.latest_run(history.pk, with_result=False)
    growth_form = GrowthForm(request.GET or None)
    context: dict[str, Any] = {"history": history, "run": run, "growth_form": growth_form}
    if run is not None:
        context["run_form_html"] = _run_form_html(run)
    if run is not None and run.status == AnalysisRun.Status.DONE:
        context["report_html"] = _report_html(request, history, run, growth_form)
    return render(request, "planner/purchase_mix/detail.html", context)


def _run_form_html(run: AnalysisRun) -> SafeString:
    """The recompute form's fields with the run's settings, rendered once per run and catalog
    version (its provider, region and spot choices come from the current prices; Django's
    widget templates made its hundreds of options a third of the page's time)."""
    def fields() -> SafeString:
        form = RunForm(initial=run_initial(services.run_options_of(run)))
        return render_to_string(RUN_FORM_FIELDS, {"run_form": form})  # a SafeString

    html: SafeString = cache.get_or_set(
        f"history-run-form:{run.pk}:{catalog_version()}", fields, 3600)
    return html


def _report_html(request: HttpRequest, history: History, run: AnalysisRun,
                 growth_form: GrowthForm) -> SafeString:
    """The finished analysis (what to buy, charts, folded sections), rendered once per run and
    growth rate and cached: a finished run does not change, and replaying it, drawing its
    figures and rendering its tables was most of the page's time (tens of ms at 5,000 jobs)."""
    growth = hashlib.sha256(request.GET.get("growth", "").encode()).hexdigest()[:16]
    # The stale flags follow the catalog's newest prices (pricing.selectors.stale_before).
    cutoffs = stale_before()
    key = (f"history-report:{run.pk}:{run.finished_at and run.finished_at.timestamp()}:{growth}:"
           f"{hashlib.sha256(str(sorted(cutoffs.items())).encode()).hexdigest()[:16]}")
    html: SafeString | None = cache.get(key)
    if html is None:
        run.refresh_from_db(fields=["result"])
        report = services.run_report(
            history=history, run=run, growth_per_year=growth_form.growth_per_year()
        )
        figures = _figure_scripts(run, report)
        html = render_to_string("planner/purchase_mix/_report.html", {
            "history": history, "run": run, "growth_form": growth_form, "report": report,
            "doc": report.document, "figure_ids": list(figures), "figures": list(figures.values()),
            "stale_before": cutoffs, "stale_days": settings.PRICE_STALE_DAYS,
        }, request=request)
        cache.set(key, html, 3600)
    return html


def _figure_scripts(run: AnalysisRun, report: services.HistoryReport) -> dict[str, SafeString]:
    figures = charts.history_figures(
        demand=report.demand, purchase=report.purchase,
        analysis=report.document["analysis"], daily_gpus=report.trend_daily_gpus,
        projected_gpus=report.trend_projected_gpus,
        growth_per_year=report.trend_growth_per_year,
    )
    return {name: _figure_script(fig, name) for name, fig in figures.items()}


@login_required
def history_delete(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: what deleting the history removes; POST: delete it (files once committed)."""
    history = _owned(request, pk)
    if request.method == "POST":
        assert request.user.pk is not None
        services.history_delete(owner_id=request.user.pk, history_id=history.pk)
        messages.success(request, f"Deleted “{history.name}”: "
                                  f"{filesizeformat(history.size_bytes)} of storage freed.")
        return redirect("planner:history_list")
    runs = history.runs.count()
    return render(request, "forms/confirm_delete.html", {
        "name": history.name, "back_url": reverse("planner:history_detail", args=[history.pk]),
        "what": f"A {history.get_fmt_display()} history of {history.records:,} "
                f"{'samples' if history.is_usage else 'jobs'}, uploaded "
                f"{history.created_at:%Y-%m-%d %H:%M} UTC.",
        "consequences": [
            f"The uploaded file ({filesizeformat(history.size_bytes)}) and its parsed jobs "
            "and hourly demand.",
            f"Its {runs} {'analysis' if runs == 1 else 'analyses'} and any capacity sweeps.",
            "Reports already made from it stay in Reports until you delete them there.",
        ]})


@login_required
@require_POST
def history_run_create(request: HttpRequest, pk: int) -> HttpResponse:
    history = _owned(request, pk)
    form = RunForm(request.POST)
    if not form.is_valid():
        context = {"history": history, "run": selectors.latest_run(history.pk),
                   "run_form_html": render_to_string(RUN_FORM_FIELDS, {"run_form": form}),
                   "growth_form": GrowthForm()}
        return render(request, "planner/purchase_mix/detail.html", context, status=400)
    services.run_recompute(owner_id=request.user.pk, history_id=history.pk,
                           options=form.run_options())
    return redirect("planner:history_detail", pk=history.pk)


@login_required
@require_GET
def history_status(request: HttpRequest, pk: int) -> JsonResponse:
    history = _owned(request, pk)
    run = selectors.latest_run(history.pk)
    if run is None:
        return JsonResponse({"status": None, "progress_pct": 0, "is_finished": True})
    return JsonResponse(run_status(run))


# Reports: the analysis exported as PDF, XLSX, CSV or one self-contained HTML file.


@login_required
@require_GET
def history_report(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    _owned(request, pk)
    download_check(owner_id=request.user.pk)
    return report_views.report_download(
        lambda: mix_reports.history_report(history_id=pk, owner_id=request.user.pk), fmt)


@login_required
@require_POST
def history_report_start(request: HttpRequest, pk: int) -> HttpResponse:
    _owned(request, pk)
    try:
        document = mix_reports.history_report(history_id=pk, owner_id=request.user.pk)
        stored = report_services.report_create(
            owner_id=request.user.pk, document=document, fmt=request.POST.get("format", "pdf"))
    except ValueError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    return redirect("planner:report_detail", report_id=stored.id)
