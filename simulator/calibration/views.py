"""Users' own measured runs: upload, the model's error on them, and their own calibration."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from planner.runs import run_status
from simulator.calibration import services
from simulator.calibration.forms import MeasuredRunsUploadForm
from simulator.models import CalibrationFit


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
    fit = services.latest_calibration_fit(owner_id=request.user.id)
    context = {
        "form": form,
        "errors": errors,
        "report": report,
        "fit": fit,
        "is_fitting": fit is not None and not fit.is_finished,
        "max_runs": services.MAX_RUNS_PER_USER,
    }
    status = 400 if request.method == "POST" else 200
    return render(request, "simulator/runs.html", context, status=status)


@login_required
@require_POST
def measured_runs_fit(request: HttpRequest) -> HttpResponse:
    """Queue a refit (a Celery task); the runs page shows its progress, then its outcome."""
    try:
        services.calibration_fit_start(owner_id=request.user.id)
    except ValueError as exc:
        messages.error(request, str(exc))
    return redirect("simulator:runs")


@login_required
def measured_runs_fit_status(request: HttpRequest, fit_id: int) -> JsonResponse:
    fit = get_object_or_404(CalibrationFit, pk=fit_id, owner=request.user)
    return JsonResponse(run_status(fit))


@login_required
@require_POST
def measured_runs_use_shipped(request: HttpRequest) -> HttpResponse:
    try:
        services.user_calibration_deactivate(owner_id=request.user.id)
    except ValueError as exc:
        messages.error(request, str(exc))
    else:
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
