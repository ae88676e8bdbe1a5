"""Simulation pages: form, result with breakdown charts, and a JSON status for polling."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.html import json_script
from plotly.utils import PlotlyJSONEncoder

from planner.runs import run_status
from simulator import charts, services
from simulator.forms import SimulationForm
from simulator.models import SimulationRun


@login_required
def simulation_list(request: HttpRequest) -> HttpResponse:
    runs = SimulationRun.objects.filter(owner=request.user)[:200]
    return render(request, "simulator/list.html", {"runs": runs})


@login_required
def simulation_new(request: HttpRequest) -> HttpResponse:
    form = SimulationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            run = services.simulation_create(
                owner_id=request.user.id, kind=form.cleaned_data["kind"], request=form.to_request()
            )
        except ValueError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("simulator:detail", run_id=run.id)
    status = 400 if request.method == "POST" else 200
    runs = SimulationRun.objects.filter(owner=request.user)[:20]
    return render(request, "simulator/new.html", {"form": form, "runs": runs}, status=status)


def _figures(run: SimulationRun) -> list:
    if run.status != SimulationRun.Status.DONE or run.kind != SimulationRun.Kind.SINGLE:
        return []
    sim = run.result["simulation"]
    figures = [
        charts.time_figure(sim["time"]),
        charts.memory_figure(sim["memory"]),
        charts.scaling_figure(run.result["scaling"]),
    ]
    return [
        json_script(f.to_plotly_json(), f"figure-{i}", encoder=PlotlyJSONEncoder)
        for i, f in enumerate(figures)
    ]


@login_required
def simulation_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(SimulationRun, pk=run_id, owner=request.user)
    return render(request, "simulator/detail.html", {"run": run, "figures": _figures(run)})


@login_required
def simulation_status(request: HttpRequest, run_id: int) -> JsonResponse:
    run = get_object_or_404(SimulationRun, pk=run_id, owner=request.user)
    return JsonResponse(run_status(run))
