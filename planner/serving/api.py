"""Serving plan API: POST an input as JSON (the fields of planner.serving.core.fields), GET a
stored plan. Bad input is a 422 whose detail names the field; nothing is stored."""

from typing import Any

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.urls import reverse
from ninja import Body, Router, Status
from ninja.errors import HttpError

from planner.serving import services
from planner.serving.core.fields import FieldError
from planner.serving.models import ServingPlan

router = Router(tags=["serving"])


def _body(plan: ServingPlan) -> dict[str, Any]:
    return {"id": plan.id, "name": plan.name,
            "url": reverse("planner:serving_detail", args=[plan.id]), **plan.result}


@router.post("", response={201: dict[str, Any]})
def serving_create(request: HttpRequest,
                   payload: dict[str, Any] = Body(...)) -> Status[dict[str, Any]]:  # noqa: B008
    assert request.user.pk is not None
    raw = dict(payload)
    name = str(raw.pop("name", "") or "")[:200]
    try:
        plan = services.serving_plan_create(owner_id=request.user.pk, raw=raw, name=name)
    except FieldError as exc:
        raise HttpError(422, str(exc)) from None
    return Status(201, _body(plan))


@router.get("/{plan_id}", response=dict[str, Any])
def serving_get(request: HttpRequest, plan_id: int) -> dict[str, Any]:
    plan = get_object_or_404(ServingPlan, pk=plan_id, owner_id=request.user.pk)
    return _body(plan)
