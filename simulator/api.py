"""Simulation API: create a run from JSON, read its status and result."""

from typing import Any

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Router, Schema, Status
from ninja.errors import HttpError

from simulator import services
from simulator.models import SimulationRun
from simulator.schemas import SimulationIn

router = Router(tags=["simulations"])


class SimulationCreated(Schema):
    id: int
    status: str


class SimulationOut(Schema):
    id: int
    kind: str
    status: str
    progress_pct: float
    progress_message: str
    error: str
    request: dict[str, Any]
    result: dict[str, Any] | None


@router.post("", response={201: SimulationCreated},
             summary="Simulate one configuration or sweep the catalog (in the background)")
def create_simulation(request: HttpRequest, payload: SimulationIn) -> Status[Any]:
    """Validate and enqueue; 422 (the schema) or 400 (the simulator's checks) names the bad
    field. Poll GET /api/simulations/{id}."""
    body = payload.dict(exclude_none=True)
    kind = body.pop("kind")
    try:
        run = services.simulation_create(owner_id=request.user.id, kind=kind, request=body)
    except ValueError as exc:
        raise HttpError(400, str(exc)) from None
    return Status(201, {"id": run.id, "status": run.status})


@router.get("/{run_id}", response=SimulationOut,
            summary="Status, progress and (when done) the simulation's breakdown")
def get_simulation(request: HttpRequest, run_id: int) -> SimulationRun:
    """Status, progress and, when done, the full breakdown (memory GiB, seconds, tokens/s)."""
    return get_object_or_404(SimulationRun, pk=run_id, owner=request.user)


@router.delete("/{run_id}", response={204: None}, summary="Delete a simulation")
def delete_simulation(request: HttpRequest, run_id: int) -> Status[None]:
    """204; 404 for a simulation that is not yours."""
    if services.simulation_delete(owner_id=request.user.pk, run_id=run_id) is None:
        raise HttpError(404, "Not Found")
    return Status(204, None)
