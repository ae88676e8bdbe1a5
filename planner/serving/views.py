"""Serving plan pages: the user's list (/serving/), the form (/serving/new), a stored plan
(/serving/<id>), the what-if (/serving/whatif?model=...&rate=...: computed, not stored, with
a save action), reports and deletion (/serving/<id>/delete)."""

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import json_script
from django.views.decorators.http import require_POST
from plotly.utils import PlotlyJSONEncoder

from planner.fair_shares import download_check
from planner.purchase_mix.quota import UploadTooLargeError
from planner.reports.core.serving import report_from_serving
from planner.reports.views import report_download
from planner.serving import charts, services
from planner.serving.core.fields import SERVING_FIELDS, FieldError
from planner.serving.forms import ServingForm
from planner.serving.models import ServingPlan


@login_required
def serving_list(request: HttpRequest) -> HttpResponse:
    """The user's serving plans, newest first, each with its cheapest option's costs."""
    rows = [{"plan": plan, "best": services.cheapest(plan)}
            for plan in services.serving_plans(owner_id=request.user.pk)]
    return render(request, "planner/serving/list.html", {"rows": rows})


@login_required
def serving_new(request: HttpRequest) -> HttpResponse:
    form = ServingForm(request.POST or None, request.FILES or None)
    status = 422 if request.method == "POST" else 200
    if request.method == "POST" and form.is_valid():
        try:
            plan = services.serving_plan_create(owner_id=request.user.pk, raw=form.to_raw(),
                                                log_file=form.request_log)
        except FieldError as exc:
            form.add_field_error(exc)
        except UploadTooLargeError as exc:
            form.add_error("request_log", str(exc).split(": ", 1)[-1])
            status = 413
        else:
            return redirect("planner:serving_detail", plan_id=plan.id)
    if form.has_error("request_log", "too_large"):
        status = 413
    return render(request, "planner/serving/new.html", {"form": form}, status=status)


def _figures(document: dict[str, Any]) -> list[str]:
    """The page's charts, serialized for static/js/figures.js."""
    built = [charts.latency_throughput_figure(document), charts.cost_latency_figure(document)]
    if document.get("traffic"):
        built.append(charts.replicas_day_figure(document))
    return [json_script(f.to_plotly_json(), f"serving-figure-{i}", encoder=PlotlyJSONEncoder)
            for i, f in enumerate(built)]


def whatif_query(inputs: dict[str, Any]) -> str:
    """A plan's input as the what-if URL's query; a blank field stays in it, empty (a field
    left out of the URL takes the form's default)."""
    return urlencode({k: "" if v is None else v for k, v in inputs.items()}, doseq=True)


def _whatif_form(request: HttpRequest) -> ServingForm:
    """The what-if's form: the URL's values over the new-plan form's defaults."""
    defaults = {f.name: f.example for f in SERVING_FIELDS if f.example not in (None, "")}
    query = request.GET.copy()
    for name, value in defaults.items():
        if name not in query:
            query.setlist(name, value if isinstance(value, list) else [str(value)])
    return ServingForm(query, with_log=False)


@login_required
def serving_detail(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = get_object_or_404(ServingPlan, pk=plan_id, owner_id=request.user.pk)
    return render(request, "planner/serving/detail.html",
                  {"plan": plan, "doc": plan.result, "figures": _figures(plan.result),
                   "share_query": whatif_query(plan.inputs)})


@login_required
def serving_whatif(request: HttpRequest) -> HttpResponse:
    """Plan from the URL's query without storing it (a shareable link); a bad parameter is a
    400 naming the field, with the form to fix it."""
    form = _whatif_form(request)
    if form.is_valid():
        try:
            document = services.serving_plan_compute(raw=form.to_raw())
        except FieldError as exc:
            form.add_field_error(exc)
        else:
            return render(request, "planner/serving/detail.html", {
                "plan": None, "doc": document, "figures": _figures(document),
                "share_query": request.GET.urlencode(), "is_whatif": True})
    return render(request, "planner/serving/whatif_error.html", {"form": form}, status=400)


@login_required
@require_POST
def serving_whatif_save(request: HttpRequest) -> HttpResponse:
    """Keep the what-if of the query as one of your serving plans."""
    form = _whatif_form(request)
    if form.is_valid():
        try:
            plan = services.serving_plan_create(owner_id=request.user.pk, raw=form.to_raw())
        except FieldError as exc:
            form.add_field_error(exc)
        else:
            messages.success(request, f"Saved {plan} to your serving plans.")
            return redirect("planner:serving_detail", plan_id=plan.id)
    return render(request, "planner/serving/whatif_error.html", {"form": form}, status=400)


@login_required
def serving_report(request: HttpRequest, plan_id: int, fmt: str) -> HttpResponse:
    """Download the plan's report (pdf, xlsx, csv, html): the figures the page shows."""
    plan = get_object_or_404(ServingPlan, pk=plan_id, owner_id=request.user.pk)
    download_check(owner_id=request.user.pk)
    return report_download(
        lambda: report_from_serving(plan.result, subject_id=plan.id, title=plan.name,
                                    generated_at=timezone.now().isoformat()), fmt)


@login_required
def serving_delete(request: HttpRequest, plan_id: int) -> HttpResponse:
    """GET: what deleting the serving plan removes; POST: delete it."""
    plan = get_object_or_404(ServingPlan, pk=plan_id, owner_id=request.user.pk)
    if request.method == "POST":
        services.serving_plan_delete(owner_id=request.user.pk, plan_id=plan.id)
        messages.success(request, f"Deleted {plan}.")
        return redirect("planner:serving_list")
    return render(request, "forms/confirm_delete.html", {
        "name": str(plan), "back_url": reverse("planner:serving_detail", args=[plan.id]),
        "what": f"A serving plan made {plan.created_at:%Y-%m-%d %H:%M} UTC.",
        "consequences": ["Its input and its ranked options (reports are rendered from the "
                         "plan, so its report links stop working)."]})
