"""The front door: what GPU Planner answers, where to start, and the worked example."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from planner.plans.example import EXAMPLE_INPUT, EXAMPLE_NAME, example_open


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html", {"example": EXAMPLE_INPUT, "example_name": EXAMPLE_NAME})


@login_required
def example_plan(request: HttpRequest) -> HttpResponse:
    """Open the signed-in user's copy of the worked example (planned on first use)."""
    try:
        scenario = example_open(owner_id=request.user.pk)
    except ValueError as exc:
        context = {"example": EXAMPLE_INPUT, "example_name": EXAMPLE_NAME, "example_error": exc}
        return render(request, "home.html", context, status=503)
    return redirect("planner:plan_detail", scenario_id=scenario.id)
