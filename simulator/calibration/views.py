"""Users' own measured runs: upload, the model's error on them, and their own calibration."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from simulator.calibration import services
from simulator.calibration.forms import MeasuredRunsUploadForm


@login_required
def measured_runs(request: HttpRequest) -> HttpResponse:
    form = MeasuredRunsUploadForm(request.POST or None, request.FILES or None)
    errors: list[services.RowError] = []
    if request.method == "POST" and form.is_valid():
        outcome = services.measured_runs_import(
            owner_id=request.user.id, data=form.cleaned_data["file"].read()
        )
        if outcome.is_ok:
            messages.success(
                request, f"Stored {outcome.n_created} new and replaced {outcome.n_updated} runs."
            )
            return redirect("simulator:runs")
        errors = outcome.errors
    report = services.measured_runs_report(owner_id=request.user.id)
    context = {
        "form": form,
        "errors": errors,
        "report": report,
        "max_runs": services.MAX_RUNS_PER_USER,
    }
    status = 400 if request.method == "POST" else 200
    return render(request, "simulator/runs.html", context, status=status)


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}%"


@login_required
@require_POST
def measured_runs_fit(request: HttpRequest) -> HttpResponse:
    try:
        outcome = services.user_calibration_fit(owner_id=request.user.id)
    except ValueError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"Fitted on {outcome.n_runs} runs ({outcome.n_own_runs} of yours) and switched to it."
            f" Median abs error on your runs: {_percent(outcome.before_median_ape_pct)} before,"
            f" {_percent(outcome.after_median_ape_pct)} after.",
        )
    return redirect("simulator:runs")


@login_required
@require_POST
def measured_runs_use_shipped(request: HttpRequest) -> HttpResponse:
    services.user_calibration_deactivate(owner_id=request.user.id)
    messages.success(request, "Simulations now use the shipped calibration.")
    return redirect("simulator:runs")


@login_required
@require_POST
def measured_runs_delete(request: HttpRequest) -> HttpResponse:
    deleted = services.measured_runs_delete(owner_id=request.user.id)
    messages.success(request, f"Deleted {deleted} measured runs.")
    return redirect("simulator:runs")


@login_required
def measured_runs_template(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(services.measured_runs_template_csv(), content_type="text/csv")
    response["Content-Disposition"] = 'attachment; filename="measured_runs_template.csv"'
    return response
