"""Fair shares: what one user may keep, create per minute and have queued at once.

Every create service (plans, simulations, reports, capacity sweeps, serving plans) calls
`creation_check` once the input is checked (a refused input counts for nothing), pages and API
alike; beyond a limit it raises, and `LimitsMiddleware` answers:
- RateLimitedError: 429 with Retry-After: more than <KIND>S_PER_MINUTE creations in a minute,
  or USER_MAX_ACTIVE_RUNS of the user's runs (of any kind) queued or running, so one user's
  burst waits for their own runs and cannot fill the queue ahead of everyone else's;
- QuotaExceededError: 403: USER_MAX_<KIND>S stored (delete some to make room);
- DiskFullError (planner.disk): 507 while VAR_DIR's disk is below DISK_MIN_FREE_BYTES.
Both are JSON `{"detail": ...}` under /api/ and a page elsewhere. (What one input may ask of a
worker, its counts and sizes, is the bounds table planner.core.limits.)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from django.apps import apps
from django.conf import settings
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.http import HttpRequest, HttpResponse

from planner.disk import disk_room_check
from planner.refusals import ExceptionMiddleware, refusal_response
from planner.runs import TrackedRun
from planner.throttle import throttle_hit, throttle_key, throttle_seconds_left

RATE_WINDOW_SECONDS = 60
# What a 429 for too many active runs asks to wait: a typical plan's time on a busy worker.
ACTIVE_RETRY_SECONDS = 10


@dataclass(frozen=True)
class Share:
    """One kind of object a user creates: its model, the path to its owner, its settings."""

    model: str  # "app_label.Model"
    owner: str  # the lookup from the model to the user's id
    max_setting: str
    rate_setting: str
    noun: str  # plural, as the messages say it


SHARES: dict[str, Share] = {
    "plan": Share("planner.PlanScenario", "owner_id", "USER_MAX_PLANS", "PLANS_PER_MINUTE",
                  "plans"),
    "simulation": Share("simulator.SimulationRun", "owner_id", "USER_MAX_SIMULATIONS",
                        "SIMULATIONS_PER_MINUTE", "simulations"),
    "report": Share("planner.Report", "owner_id", "USER_MAX_REPORTS", "REPORTS_PER_MINUTE",
                    "reports"),
    "capacity": Share("planner.CapacityRun", "history__owner_id", "USER_MAX_CAPACITY_RUNS",
                      "CAPACITY_RUNS_PER_MINUTE", "capacity sweeps"),
    "serving": Share("planner.ServingPlan", "owner_id", "USER_MAX_SERVING_PLANS",
                     "SERVING_PLANS_PER_MINUTE", "serving plans"),
    # Every upload and every recompute queues one analysis of a job history.
    "analysis": Share("planner.AnalysisRun", "history__owner_id", "USER_MAX_ANALYSES",
                      "ANALYSES_PER_MINUTE", "analyses"),
}


class RateLimitedError(Exception):
    """Too many creations in the window, or too many runs queued: 429 with Retry-After."""

    def __init__(self, message: str, retry_after_seconds: int) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


class QuotaExceededError(Exception):
    """The user keeps as many objects of this kind as one account may: 403."""


def _owner_lookup(model: type[models.Model]) -> str:
    """How a run model reaches its owner ("" for parts of a run, which have none)."""
    for lookup in ("owner", "history"):
        try:
            model._meta.get_field(lookup)
        except FieldDoesNotExist:
            continue
        return "owner_id" if lookup == "owner" else "history__owner_id"
    return ""


@cache
def _owned_run_models() -> tuple[tuple[type[TrackedRun], str], ...]:
    """Each run model with an owner, and the lookup to it (the registry is fixed once loaded)."""
    return tuple((model, lookup) for model in apps.get_models()
                 if issubclass(model, TrackedRun) and (lookup := _owner_lookup(model)))


def active_runs(owner_id: int) -> int:
    """The user's runs queued or running, of every kind (plans, simulations, analyses,
    reports, capacity sweeps, calibration fits; a split sweep counts once), in one query."""
    active = (TrackedRun.Status.QUEUED, TrackedRun.Status.RUNNING)
    each = [model._default_manager.filter(**{lookup: owner_id}, status__in=active)
            .order_by().values("pk")
            for model, lookup in _owned_run_models()]
    if not each:
        return 0
    first, *rest = each
    return int(first.union(*rest, all=True).count())


def creation_check(*, owner_id: int | None, kind: str) -> None:
    """Count one creation of `kind` for the user and refuse it beyond their share; nothing
    for runs without an owner (commands)."""
    if owner_id is None:
        return
    share = SHARES[kind]
    key = throttle_key("create", kind, str(owner_id))
    per_minute = int(getattr(settings, share.rate_setting))
    if throttle_hit(key, RATE_WINDOW_SECONDS) > per_minute:
        wait = throttle_seconds_left(key) or RATE_WINDOW_SECONDS
        raise RateLimitedError(
            f"Too many {share.noun} started: at most {per_minute} a minute per account; "
            f"try again in {wait} s.", wait)
    running, most = active_runs(owner_id), settings.USER_MAX_ACTIVE_RUNS
    if running >= most:
        raise RateLimitedError(
            f"You have {running} runs queued or running, the most one account may have at "
            f"once; this starts once one of them finishes (try again in a few seconds).",
            ACTIVE_RETRY_SECONDS)
    # A run stores its result (a plan: about 1 MB) and perhaps files: not on a full disk.
    disk_room_check(settings.VAR_DIR)
    kept, limit = _kept(share, owner_id), int(getattr(settings, share.max_setting))
    if kept >= limit:
        raise QuotaExceededError(
            f"You keep {kept} {share.noun}, the most one account may keep ({limit}); delete "
            f"some you no longer need to make room.")


def download_check(*, owner_id: int | None) -> None:
    """Count one report rendered for download at once (a PDF takes seconds of a web process)
    and refuse it past REPORT_DOWNLOADS_PER_MINUTE."""
    if owner_id is None:
        return
    key = throttle_key("download", str(owner_id))
    per_minute = int(settings.REPORT_DOWNLOADS_PER_MINUTE)
    if throttle_hit(key, RATE_WINDOW_SECONDS) > per_minute:
        wait = throttle_seconds_left(key) or RATE_WINDOW_SECONDS
        raise RateLimitedError(
            f"Too many reports downloaded: at most {per_minute} a minute per account; try "
            f"again in {wait} s.", wait)


def _kept(share: Share, owner_id: int) -> int:
    model = apps.get_model(share.model)
    return int(model._default_manager.filter(**{share.owner: owner_id}).count())


def share_refusal(request: HttpRequest, exception: RateLimitedError | QuotaExceededError
                  ) -> HttpResponse:
    """The refusal for a share exceeded: 429 with Retry-After, or 403 (planner.refusals: JSON
    under /api/, else a page); LimitsMiddleware's answer and the API's."""
    if isinstance(exception, RateLimitedError):
        return refusal_response(request, str(exception), 429,
                                {"Retry-After": str(exception.retry_after_seconds)})
    return refusal_response(request, str(exception), 403)


class LimitsMiddleware(ExceptionMiddleware):
    """429 (Retry-After) and 403 for the errors above, whichever view or API raised them."""

    def process_exception(self, request: HttpRequest, exception: Exception
                          ) -> HttpResponse | None:
        if isinstance(exception, (RateLimitedError, QuotaExceededError)):
            return share_refusal(request, exception)
        return None
