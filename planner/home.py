"""The front door: what GPU Planner answers, where to start, and the worked example."""

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from planner.plans.example import EXAMPLE_INPUT, EXAMPLE_NAME, example_open
from planner.plans.views import plan_preview, whatif_query


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html", {"example": EXAMPLE_INPUT, "example_name": EXAMPLE_NAME})


def example_plan(request: HttpRequest) -> HttpResponse:
    """Open the signed-in user's copy of the worked example (planned on first use); a visitor
    without an account sees it read-only."""
    if not request.user.is_authenticated:
        return plan_preview(request, raw=EXAMPLE_INPUT, form=None, name=EXAMPLE_NAME,
                            share_query=urlencode(whatif_query(EXAMPLE_INPUT), doseq=True))
    try:
        scenario = example_open(owner_id=request.user.pk)
    except ValueError as exc:
        context = {"example": EXAMPLE_INPUT, "example_name": EXAMPLE_NAME, "example_error": exc}
        return render(request, "home.html", context, status=503)
    return redirect("planner:plan_detail", scenario_id=scenario.id)
