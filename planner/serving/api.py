"""Serving plan API: POST an input as JSON (the fields of planner.serving.core.fields), or a
request log with the other fields as a multipart form (POST /api/serving/log), GET the user's
plans or one stored plan, DELETE one. Bad input is a 422 whose detail names the field (and a
bad log row its line); a file over the upload limit is a 413; nothing is stored."""

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.urls import reverse
from ninja import Body, File, Router, Schema, Status
from ninja.errors import HttpError
from ninja.files import UploadedFile

from planner.purchase_mix.quota import UploadTooLargeError
from planner.serving import services
from planner.serving.core.fields import FieldError
from planner.serving.models import ServingPlan

router = Router(tags=["serving"])


class ServingPlanItem(Schema):
    id: int
    name: str
    url: str
    created_at: datetime


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


@router.post("/log", response={201: dict[str, Any], 413: dict[str, Any]},
             summary="Plan from an uploaded request log")
def serving_create_from_log(request: HttpRequest,
                            request_log: File[UploadedFile]) -> Status[dict[str, Any]]:
    """Multipart: `request_log` (CSV: timestamp, input_tokens, output_tokens) and the other
    fields of POST /api/serving as form fields (`purchase_options` repeated). The log sets the
    rate, the daily profile and the mean lengths."""
    assert request.user.pk is not None
    raw: dict[str, Any] = {k: request.POST.getlist(k) if k == "purchase_options" else v
                           for k, v in request.POST.items()
                           if k not in ("name", "csrfmiddlewaretoken")}
    try:
        plan = services.serving_plan_create(owner_id=request.user.pk, raw=raw,
                                            name=request.POST.get("name", "")[:200],
                                            log_file=request_log)
    except FieldError as exc:
        raise HttpError(422, str(exc)) from None
    except UploadTooLargeError as exc:
        return Status(413, {"detail": str(exc)})
    return Status(201, _body(plan))


@router.get("/{plan_id}", response=dict[str, Any])
def serving_get(request: HttpRequest, plan_id: int) -> dict[str, Any]:
    plan = get_object_or_404(ServingPlan, pk=plan_id, owner_id=request.user.pk)
    return _body(plan)


@router.get("", response=list[ServingPlanItem], summary="Your serving plans, newest first")
def serving_list(request: HttpRequest) -> list[dict[str, Any]]:
    assert request.user.pk is not None
    return [{"id": p.id, "name": p.name, "created_at": p.created_at,
             "url": reverse("planner:serving_detail", args=[p.id])}
            for p in services.serving_plans(owner_id=request.user.pk)]


@router.delete("/{plan_id}", response={204: None}, summary="Delete a serving plan")
def serving_delete(request: HttpRequest, plan_id: int) -> Status[None]:
    """204; 404 for a serving plan that is not yours."""
    assert request.user.pk is not None
    if services.serving_plan_delete(owner_id=request.user.pk, plan_id=plan_id) is None:
        raise HttpError(404, "Not Found")
    return Status(204, None)
