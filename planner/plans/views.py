"""Plan pages: scenario form, result (stored or what-if), status JSON, save, duplicate, compare."""

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.functional import SimpleLazyObject
from django.views.decorators.http import require_POST

from planner.client_ip import client_address
from planner.fair_shares import download_check
from planner.plans import compare, preview, selectors, services
from planner.plans import reports as plan_reports
from planner.plans.core.fields import split_field_message
from planner.plans.forms import PlanForm, form_version, initial_from_scenario, number_value
from planner.plans.models import PlanScenario
from planner.plans.presenters import PlanView, plan_view, sort_order
from planner.plans.scenario import scenario_from_input
from planner.reports import services as report_services
from planner.reports import views as report_views
from planner.runs import run_status
from pricing.selectors import stale_before


def _owned(request: HttpRequest, scenario_id: int) -> PlanScenario:
    return get_object_or_404(PlanScenario, pk=scenario_id, owner_id=request.user.pk)


@login_required
def plan_list(request: HttpRequest) -> HttpResponse:
    plans = selectors.scenario_list(owner_id=request.user.pk)
    return render(request, "planner/plans/list.html", {"rows": compare.plan_list_rows(plans)})


LIST_INPUTS = ("providers", "gpus", "purchase_options", "payment_options")


@login_required
def plan_new(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        initial = request.GET.dict() | {
            k: request.GET.getlist(k) for k in LIST_INPUTS if k in request.GET}
        context = {"form": SimpleLazyObject(lambda: PlanForm(initial=initial)),
                   "form_key": form_version(initial)}
        return render(request, "planner/plans/new.html", context)
    form = PlanForm(request.POST)
    if form.is_valid():
        try:
            stored = services.scenario_create(owner_id=request.user.pk, raw=form.to_raw())
        except ValueError as exc:
            form.add_scenario_error(exc)
        else:
            return redirect("planner:plan_detail", scenario_id=stored.id)
    return render(request, "planner/plans/new.html", {"form": form}, status=400)


@login_required
def plan_detail(request: HttpRequest, scenario_id: int) -> HttpResponse:
    # The result document is loaded only if a rendered fragment of it is not cached yet.
    scenario = get_object_or_404(
        PlanScenario.objects.defer("result"), pk=scenario_id, owner_id=request.user.pk
    )
    sort = sort_order(request.GET.get("sort", "rank"))
    view = None
    if scenario.status == PlanScenario.Status.DONE:
        view = PlanView(lambda: selectors.scenario_result(scenario_id), sort=sort)
    inputs = scenario.inputs
    version = selectors.scenario_page_version(scenario)
    context = {
        "scenario": scenario, "view": view, "sort": sort,
        "result_key": version,
        # Called by the template only for a done plan: no charts or exports without an option.
        "has_feasible": lambda: selectors.scenario_has_feasible(scenario_id, version),
        "form": SimpleLazyObject(lambda: PlanForm(initial=initial_from_scenario(inputs))),
        "form_key": form_version(inputs),
        "share_query": urlencode(whatif_query(inputs), doseq=True),
        **_staleness(),
    }
    return render(request, "planner/plans/detail.html", context)


def _staleness() -> dict[str, Any]:
    """The catalog's stale days per provider (pricing.selectors.stale_before): the page
    flags by the plan's own (stored when it was made), else by these."""
    return {"stale_before": stale_before(), "stale_days": settings.PRICE_STALE_DAYS}


def whatif_query(inputs: dict) -> dict:
    """The scenario as a form query: numbers as people type them (1e+12, 60, not 60.0)."""
    flat = {k: v for k, v in inputs.items() if k != "layout" and v not in (None, "", [])}
    flat.update(inputs.get("layout", {}))
    if flat.get("regions"):
        flat["regions"] = ",".join(flat["regions"])
    bands = flat.get("spot_interruptions_pct_per_month")
    if isinstance(bands, dict):
        flat["spot_interruptions_pct_per_month"] = ",".join(f"{k}={v:g}" for k, v in bands.items())
    return {k: number_value(v) for k, v in flat.items()}


def plan_whatif(request: HttpRequest) -> HttpResponse:
    """Recompute a changed scenario at once (no storing); the URL holds the whole state.
    A visitor without an account sees it read-only (a shared link)."""
    form = PlanForm(request.GET)
    if not request.user.is_authenticated:
        raw = form.to_raw() if form.is_valid() else None
        return plan_preview(request, raw=raw, form=form, share_query=request.GET.urlencode())
    context: dict = {
        "form": form,
        "scenario": None,
        "view": None,
        "share_query": request.GET.urlencode(),
        **_staleness(),
    }
    if form.is_valid():
        try:
            scenario = scenario_from_input(form.to_raw(), today=timezone.now().date())
            document = services.plan_compute(scenario=scenario, owner_id=request.user.pk)
            context["view"] = plan_view(document, sort=request.GET.get("sort", "rank"))
            context["delta"] = _delta(request, document)
        except ValueError as exc:
            form.add_scenario_error(exc)
    status = 200 if context["view"] else 400
    return render(request, "planner/plans/detail.html", context, status=status)


def _delta(request: HttpRequest, document: dict[str, Any]) -> str:
    """The what-if against the saved plan it was opened from (`from`, yours only)."""
    base_id = request.GET.get("from", "")
    if not base_id.isdigit():
        return ""
    base = PlanScenario.objects.filter(pk=int(base_id), owner_id=request.user.pk).first()
    return compare.whatif_delta(base, document) if base is not None else ""


def plan_preview(request: HttpRequest, *, raw: dict[str, Any] | None, form: PlanForm | None,
                 share_query: str, name: str = "") -> HttpResponse:
    """A plan for a visitor without an account: read-only, from the preview cache, computed
    at most ANONYMOUS_PREVIEWS_PER_10_MINUTES times per address; sign up to save and change."""
    context: dict[str, Any] = {
        "form": form, "scenario": None, "view": None, "is_preview": True, "preview_name": name,
        "share_query": share_query, "sort": sort_order(request.GET.get("sort", "rank")),
        **_staleness(),
    }
    status = 400
    if raw is not None:
        try:
            found = preview.preview_plan(raw=raw, today=timezone.now().date(),
                                         client=client_address(request))
        except preview.PreviewLimitError as exc:
            context["preview_error"], status = str(exc), 429
        except ValueError as exc:
            context["preview_error"] = split_field_message(str(exc))[1]
        else:
            context["view"] = PlanView(lambda: found.document, sort=context["sort"])
            context["result_key"], status = found.version, 200
    response = render(request, "planner/plans/detail.html", context, status=status)
    if status == 429:
        response["Retry-After"] = str(preview.RATE_WINDOW_SECONDS)
    return response


@login_required
@require_POST
def plan_whatif_save(request: HttpRequest) -> HttpResponse:
    """Keep a what-if (its query is the scenario) as one of your plans, under a name."""
    form = PlanForm(request.GET)
    if not form.is_valid():
        return redirect(f"{reverse('planner:plan_whatif')}?{request.GET.urlencode()}")
    raw = form.to_raw() | {"name": request.POST.get("name", "").strip()[:200]}
    try:
        stored = services.scenario_create(owner_id=request.user.pk, raw=raw, is_saved=True)
    except ValueError as exc:
        messages.error(request, f"Not saved: {split_field_message(str(exc))[1]}")
        return redirect(f"{reverse('planner:plan_whatif')}?{request.GET.urlencode()}")
    messages.success(request, f"Saved “{stored.name}” to your plans.")
    return redirect("planner:plan_detail", scenario_id=stored.id)


@login_required
def plan_status(request: HttpRequest, scenario_id: int) -> JsonResponse:
    return JsonResponse(run_status(_owned(request, scenario_id)))


@login_required
@require_POST
def plan_save(request: HttpRequest, scenario_id: int) -> HttpResponse:
    _owned(request, scenario_id)
    try:
        name = services.scenario_save(
            scenario_id=scenario_id, owner_id=request.user.pk, name=request.POST.get("name", "")
        )
    except ValueError as exc:
        messages.error(request, f"Not saved: {split_field_message(str(exc))[1]}")
        return redirect("planner:plan_detail", scenario_id=scenario_id)
    messages.success(request, f"Saved “{name}”: it is kept in your plans.")
    return redirect("planner:plan_detail", scenario_id=scenario_id)


@login_required
def plan_duplicate(request: HttpRequest, scenario_id: int) -> HttpResponse:
    """An editable copy: the plan form prefilled with this plan's inputs; nothing runs until
    it is submitted."""
    original = _owned(request, scenario_id)
    query = whatif_query(original.inputs) | {"name": f"{original.name} (copy)"}
    messages.info(request, f"A copy of “{original.name}”: change anything, then Plan it.")
    return redirect(f"{reverse('planner:plan_new')}?{urlencode(query, doseq=True)}")


@login_required
def plan_delete(request: HttpRequest, scenario_id: int) -> HttpResponse:
    """GET: what deleting the plan removes; POST: delete it."""
    scenario = _owned(request, scenario_id)
    if request.method == "POST":
        services.scenario_delete(owner_id=request.user.pk, scenario_id=scenario.id)
        messages.success(request, f"Deleted the plan “{scenario.name}”.")
        return redirect("planner:plan_list")
    running = "" if scenario.is_finished else " It is still running: the run stops."
    return render(request, "forms/confirm_delete.html", {
        "name": scenario.name, "back_url": reverse("planner:plan_detail", args=[scenario.id]),
        "what": f"A plan created {scenario.created_at:%Y-%m-%d %H:%M} UTC.{running}",
        "consequences": [
            "Its inputs and ranked configurations, and its place in What-if and Compare.",
            "Reports already made from it stay in Reports until you delete them there.",
        ]})


@login_required
def plan_compare(request: HttpRequest) -> HttpResponse:
    # ASCII digits only: "²" passes str.isdigit() but not int(); at most 19 (a 64-bit id).
    ids = list(dict.fromkeys(int(i) for i in request.GET.getlist("id")
                             if i.isascii() and i.isdigit() and len(i) <= 18))
    if not compare.MIN_PLANS <= len(ids) <= compare.MAX_PLANS:
        context = {"error": "Tick 2 to 4 of your plans to compare them side by side."}
        return render(request, "planner/plans/compare.html", context, status=400)
    table = compare.plan_comparison([_owned(request, i) for i in ids])
    only = request.GET.get("only") == "differences"
    return render(request, "planner/plans/compare.html", {"table": table, "only": only})


# Reports: the plan exported as PDF, XLSX, CSV or one self-contained HTML file.


@login_required
def plan_report(request: HttpRequest, scenario_id: int, fmt: str) -> HttpResponse:
    """Download the plan's report at once (the PDF too, in a few seconds)."""
    download_check(owner_id=request.user.pk)
    return report_views.report_download(
        lambda: plan_reports.plan_report(scenario=_owned(request, scenario_id)), fmt)


@login_required
@require_POST
def plan_report_start(request: HttpRequest, scenario_id: int) -> HttpResponse:
    """Render the report in the background (PDF); its page shows progress, then the file."""
    try:
        document = plan_reports.plan_report(scenario=_owned(request, scenario_id))
        stored = report_services.report_create(
            owner_id=request.user.pk, document=document, fmt=request.POST.get("format", "pdf"))
    except ValueError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    return redirect("planner:report_detail", report_id=stored.id)
