"""Capacity API: sweep an analysed history's pool sizes x waiting policies, then poll it.

POST /api/histories/{id}/capacity queues a sweep (202); GET returns its state and, when
done, the document `capacity_plan --json` prints (`points`, `recommended`, ...). Private:
another user's history answers 404.
"""

from typing import Annotated, Any, Literal

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from ninja import Router, Schema
from ninja.errors import HttpError
from ninja.responses import Status
from pydantic import Field, StrictBool, StrictFloat, StrictInt

from planner.capacity import reports as capacity_reports
from planner.capacity import services
from planner.capacity.core.frontier import MAX_HOURS
from planner.capacity.core.inputs import DEFAULT_TARGET_P95_WAIT_HOURS
from planner.capacity.core.jobs import POLICIES
from planner.fair_shares import download_check
from planner.purchase_mix import selectors
from planner.reports.api import api_report_download
from simulator.schemas import ClosedSchema, Key

router = Router(tags=["capacity"])


# Bounded like every API body (simulator/schemas.py): closed, finite, strings short and
# NUL-free, lists short; the service's checks (capacity_inputs) then name what is wrong.
Hours = Annotated[StrictFloat, Field(ge=0, le=MAX_HOURS, allow_inf_nan=False)]


class CapacityIn(ClosedSchema):
    gpu_type: Key = ""
    pool_gpus: Annotated[list[Annotated[StrictInt, Field(ge=-10_000_000, le=10_000_000)]],
                         Field(max_length=200)] = []
    disciplines: Annotated[list[Key], Field(max_length=10)] = ["fifo"]
    policies: Annotated[list[Key], Field(max_length=10)] = list(POLICIES)
    max_wait_hours: Annotated[list[Hours | Literal["inf"]], Field(max_length=50)] = [2.0]
    target_p95_wait_hours: Hours = DEFAULT_TARGET_P95_WAIT_HOURS
    pool_price: Key = "cheapest"
    owned: Annotated[dict[Key, Annotated[StrictFloat, Field(ge=0, le=1e9, allow_inf_nan=False)]],
                     Field(max_length=20)] | None = None
    is_spot_allowed: StrictBool = False


class QueuedOut(Schema):
    run_id: int
    status: str
    status_url: str


class ErrorOut(Schema):
    detail: str


def _owner_id(request: HttpRequest) -> int:
    user = getattr(request, "auth", None) or request.user
    assert user.pk is not None
    return int(user.pk)


@router.post("/{history_id}/capacity", response={202: QueuedOut, 400: ErrorOut, 409: ErrorOut},
             summary="Queue a capacity sweep of an analysed history")
def create_capacity(request: HttpRequest, history_id: int, body: CapacityIn) -> Status[Any]:
    """pool_gpus: sizes to replay ([] = about 30 from 0 to the peak concurrent GPUs); disciplines:
    fifo, backfill; policies: none, constant, size_aware; max_wait_hours: T values ("inf"
    allowed); pool_price: cheapest, reserved_1y, reserved_3y or owned (with `owned`:
    purchase_usd_per_gpu, lifetime_years, power_kw_per_gpu, pue, usd_per_kwh). 400 names
    the field; 409 when the history has no finished analysis or no jobs."""
    history = get_object_or_404(selectors.owned_histories(_owner_id(request)), pk=history_id)
    try:
        run = services.capacity_create(history=history, raw=body.dict())
    except ValueError as error:
        status = 409 if str(error).startswith("history:") else 400
        return Status(status, {"detail": str(error)})
    return Status(202, {"run_id": run.pk, "status": run.status,
                        "status_url": f"/api/histories/{history.pk}/capacity"})


@router.get("/{history_id}/capacity", summary="The latest capacity sweep: state and result")
def get_capacity(request: HttpRequest, history_id: int) -> dict[str, Any]:
    """`points`: every pool size x discipline x policy x T with its GPU-hours, waits (hours),
    utilisation and dollars; `recommended`: the cheapest point meeting the P95 wait target;
    `against`: what it saves and adds against all on demand and the purchase mix's no-wait
    commitments, each priced as the purchase mix buys it (`bought_as`, `pool_usd_per_hour`)
    with `purchase_mix_total_usd` (its own replay) and a `note` on any difference;
    `prices.pool_statement`: what the swept pools' price assumes."""
    history = get_object_or_404(selectors.owned_histories(_owner_id(request)), pk=history_id)
    return services.capacity_payload(history, services.latest_capacity(history.pk))


@router.get("/{history_id}/capacity/report.{fmt}", response={200: None},
            summary="The latest capacity sweep as a pdf, xlsx, csv or html report")
def get_capacity_report(request: HttpRequest, history_id: int, fmt: str) -> HttpResponse:
    get_object_or_404(selectors.owned_histories(_owner_id(request)), pk=history_id)
    download_check(owner_id=_owner_id(request))
    return api_report_download(
        lambda: capacity_reports.capacity_report(history_id=history_id,
                                                 owner_id=_owner_id(request)), fmt)


@router.delete("/{history_id}/capacity", response={204: None},
               summary="Delete every capacity sweep of a history")
def delete_capacity(request: HttpRequest, history_id: int) -> Status[None]:
    """204 (the history and its analyses stay); 404 for a history that is not yours."""
    if services.capacity_delete(owner_id=_owner_id(request), history_id=history_id) is None:
        raise HttpError(404, "Not Found")
    return Status(204, None)
