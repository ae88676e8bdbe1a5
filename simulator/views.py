"""Simulation pages: form, result with breakdown charts, a JSON status for polling, and the
simulator's out-of-family accuracy."""

import csv
from functools import cached_property
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import json_script
from plotly.utils import PlotlyJSONEncoder

from planner.core.spreadsheet import inert
from planner.runs import run_status
from simulator import charts, services
from simulator.accuracy import (
    ACCURACY_COLUMNS,
    SECTIONS,
    accuracy_figure,
    accuracy_report,
    accuracy_version,
    goodput_summary,
)
from simulator.core.envelope import ENVELOPE_GROUP_WORDS
from simulator.forms import SimulationForm
from simulator.models import SimulationRun
from simulator.serving import serving_validation


@login_required
def simulation_list(request: HttpRequest) -> HttpResponse:
    runs = SimulationRun.objects.filter(owner=request.user)[:200]
    return render(request, "simulator/list.html", {"runs": runs})


@login_required
def simulation_new(request: HttpRequest) -> HttpResponse:
    """The form; "Show its instance types" (the GPU chosen without JavaScript) or ?gpu=
    shows it again with the instance list scoped to that GPU, nothing checked or saved."""
    if "show_instances" in request.POST or request.method == "GET":
        values = request.POST.dict() if request.method == "POST" else {
            "gpu": request.GET.get("gpu", "")}
        form = SimulationForm(initial=values)
        return _new_page(request, form, status=200, is_cached=request.method == "GET")
    form = SimulationForm(request.POST)
    if form.is_valid():
        try:
            run = services.simulation_create(
                owner_id=request.user.id, kind=form.cleaned_data["kind"], request=form.to_request()
            )
        except ValueError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("simulator:detail", run_id=run.id)
    return _new_page(request, form, status=400)


def _new_page(request: HttpRequest, form: SimulationForm, *, status: int,
              is_cached: bool = False) -> HttpResponse:
    runs = SimulationRun.objects.filter(owner=request.user)[:20]
    context = {"form": form, "runs": runs, "form_key": form.cache_key if is_cached else ""}
    return render(request, "simulator/new.html", context, status=status)


def _figures(run: SimulationRun) -> list[str]:
    """The finished single run's charts as json_script strings; a finished run never changes,
    so they are built once per charts.FIGURES_VERSION (plotly's figure objects cost most of the
    page: 90 -> 10 ms)."""
    if run.status != SimulationRun.Status.DONE or run.kind != SimulationRun.Kind.SINGLE:
        return []

    def build() -> list[str]:
        sim = run.result["simulation"]
        figures = [
            charts.time_figure(sim["time"]),
            charts.memory_figure(sim["memory"]),
            charts.scaling_figure(run.result["scaling"]),
        ]
        return [
            str(json_script(f.to_plotly_json(), f"figure-{i}", encoder=PlotlyJSONEncoder))
            for i, f in enumerate(figures)
        ]

    finished = run.finished_at.timestamp() if run.finished_at else 0
    key = f"simulation-figures:{charts.FIGURES_VERSION}:{run.pk}:{finished}"
    # Plain strings: the {% chart %} tag parses each and writes it again with json_script.
    return list(cache.get_or_set(key, build, 24 * 3600))


@login_required
def simulation_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(SimulationRun, pk=run_id, owner=request.user)
    return render(request, "simulator/detail.html", {"run": run, "figures": _figures(run)})


@login_required
def simulation_delete(request: HttpRequest, run_id: int) -> HttpResponse:
    """GET: what deleting the simulation removes; POST: delete it."""
    run = get_object_or_404(SimulationRun, pk=run_id, owner=request.user)
    if request.method == "POST":
        services.simulation_delete(owner_id=request.user.pk, run_id=run.id)
        messages.success(request, f"Deleted {run}.")
        return redirect("simulator:list")
    running = "" if run.is_finished else " It is still running: the run stops."
    return render(request, "forms/confirm_delete.html", {
        "name": str(run), "back_url": reverse("simulator:detail", args=[run.id]),
        "what": f"A simulation asked for {run.created_at:%Y-%m-%d %H:%M} UTC.{running}",
        "consequences": ["Its request and its result."]})


@login_required
def simulation_status(request: HttpRequest, run_id: int) -> JsonResponse:
    run = get_object_or_404(SimulationRun, pk=run_id, owner=request.user)
    return JsonResponse(run_status(run))


def simulation_accuracy(request: HttpRequest) -> HttpResponse:
    """How far the shipped simulator is from published runs it never saw (public); the page
    is cached per accuracy file and calibration, so a hit builds nothing."""
    context = {"page": AccuracyPage(), "version": accuracy_version()}
    return render(request, "simulator/accuracy.html", context)


class AccuracyPage:
    """What the accuracy page shows, each part built when the template first asks for it."""

    @cached_property
    def report(self) -> Any:
        return accuracy_report()

    @cached_property
    def figure(self) -> str:
        return json_script(accuracy_figure(self.report).to_plotly_json(), "figure-accuracy",
                           encoder=PlotlyJSONEncoder)

    @cached_property
    def overall(self) -> list[dict[str, Any]]:
        return list(self.report.table("overall") + self.report.table("metric_class"))

    @cached_property
    def sections(self) -> list[tuple[str, str, list[dict[str, Any]]]]:
        """Each grouping's rows that have a prediction (a family of listed-only whole runs
        has no error to show: unpredicted_families names them)."""
        return [(group_by, title, [r for r in self.report.table(group_by) if r["n_predicted"]])
                for group_by, title in SECTIONS]

    @property
    def envelope_group_words(self) -> list[tuple[str, str]]:
        return list(ENVELOPE_GROUP_WORDS.items())

    @cached_property
    def envelope_groups(self) -> list[dict[str, Any]]:
        return self.report.envelope_groups(services.shipped_calibration().domain.envelope_scales)

    @cached_property
    def unpredicted_families(self) -> list[str]:
        return [str(r["group"]) for r in self.report.table("family") if not r["n_predicted"]]

    @property
    def n_predicted(self) -> int:
        return int(self.report.rows["predicted"].notna().sum())

    @property
    def n_not_predicted(self) -> int:
        return self.n_rows - self.n_predicted

    @property
    def beaten(self) -> int:
        return int(self.report.families_beaten()[0])

    @property
    def families(self) -> int:
        return int(self.report.families_beaten()[1])

    @property
    def n_rows(self) -> int:
        return len(self.report.rows)

    @cached_property
    def not_beaten(self) -> Any:
        return self.report.families_not_beaten()

    @cached_property
    def whole_run_floor(self) -> Any:
        return self.report.whole_run_floor()

    @cached_property
    def serving(self) -> dict[str, Any]:
        return serving_validation()

    @cached_property
    def goodput(self) -> Any:
        return goodput_summary(services.shipped_calibration().production_overhead_fraction)


def simulation_accuracy_csv(request: HttpRequest) -> HttpResponse:
    """The per-run out-of-family predictions behind the accuracy page, as CSV."""
    rows = accuracy_report().rows
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="simulator-accuracy.csv"'
    writer = csv.writer(response)
    writer.writerow(ACCURACY_COLUMNS)
    for record in rows[ACCURACY_COLUMNS].itertuples(index=False):
        writer.writerow(["" if inert(v) is None else inert(v) for v in record])
    return response
