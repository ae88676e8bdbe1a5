"""Plan API: POST a scenario as JSON, GET its status, progress and ranked configurations."""

from typing import Any

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Router, Schema, Status
from ninja.errors import HttpError

from planner.plans import services
from planner.plans.models import PlanScenario

router = Router(tags=["plans"])


class PlanIn(Schema):
    """A training scenario. Exactly one goal; deadline as a date or in days; budget in USD."""

    name: str = ""
    workload: str = ""
    params_billion: float | None = None
    seq_len: int | None = None
    tokens: float | None = None
    samples: float | None = None
    epochs: float | None = None
    dataset_samples: float | None = None
    deadline: str | None = None
    deadline_days: float | None = None
    budget_usd: float | None = None
    providers: list[str] = []
    regions: list[str] = []
    gpus: list[str] = []
    purchase_options: list[str] = []
    dataset_gb: float | None = None
    checkpoint_gb: float | None = None
    storage_months: float | None = None
    egress_gb: float | None = None
    restart_overhead_hours: float | None = None
    commitment_reuse_fraction: float | None = None
    max_nodes: int | None = None
    layout: dict[str, Any] = {}


class PlanCreated(Schema):
    id: int
    status: str


class PlanOut(Schema):
    id: int
    name: str
    status: str
    progress_pct: float
    progress_message: str
    error: str
    inputs: dict[str, Any]
    result: dict[str, Any] | None


@router.post("", response={201: PlanCreated})
def create_plan(request: HttpRequest, payload: PlanIn) -> Status[Any]:
    """Check and store the scenario, then plan it in the background; 400 names the field."""
    try:
        stored = services.scenario_create(
            owner_id=request.user.id, raw=payload.dict(exclude_none=True)
        )
    except ValueError as exc:
        raise HttpError(400, str(exc)) from None
    return Status(201, {"id": stored.id, "status": stored.status})


@router.get("/{scenario_id}", response=PlanOut)
def get_plan(request: HttpRequest, scenario_id: int) -> PlanScenario:
    """Status, progress and, when done, the ranked configurations and recommendations."""
    return get_object_or_404(PlanScenario, pk=scenario_id, owner=request.user)
