"""Serving plan pages: the user's list (/serving/), the form (/serving/new), a stored plan
(/serving/<id>), its reports and its deletion (/serving/<id>/delete)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import json_script
from plotly.utils import PlotlyJSONEncoder

from planner.fair_shares import download_check
from planner.reports.core.serving import report_from_serving
from planner.reports.views import report_download
from planner.serving import charts, services
from planner.serving.core.fields import FieldError
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
    form = ServingForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            plan = services.serving_plan_create(owner_id=request.user.pk, raw=form.to_raw())
        except FieldError as exc:
            form.add_field_error(exc)
        else:
            return redirect("planner:serving_detail", plan_id=plan.id)
    status = 422 if request.method == "POST" else 200
    return render(request, "planner/serving/new.html", {"form": form}, status=status)


@login_required
def serving_detail(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = get_object_or_404(ServingPlan, pk=plan_id, owner_id=request.user.pk)
    document = plan.result
    figures = [json_script(charts.latency_throughput_figure(document).to_plotly_json(),
                           "serving-figure-0", encoder=PlotlyJSONEncoder),
               json_script(charts.cost_latency_figure(document).to_plotly_json(),
                           "serving-figure-1", encoder=PlotlyJSONEncoder)]
    return render(request, "planner/serving/detail.html",
                  {"plan": plan, "doc": document, "figures": figures})


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
