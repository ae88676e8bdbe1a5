"""Plan API: POST a scenario as JSON, GET its status, progress and ranked configurations."""

import hashlib
import json
import math
from typing import Annotated, Any, Literal

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from ninja import Router, Schema, Status
from ninja.errors import HttpError
from ninja.responses import NinjaJSONEncoder
from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    create_model,
    model_validator,
)

from planner.compression import STORED_LEVEL, compress, gzip_response
from planner.core.layout_knobs import KNOBS_BY_NAME
from planner.fair_shares import download_check
from planner.plans import reports as plan_reports
from planner.plans import services
from planner.plans.core.fields import (
    FIELDS_BY_NAME,
    SCENARIO_FIELDS,
    ScenarioField,
)
from planner.plans.models import PlanScenario
from planner.reports.api import api_report_download
from simulator.schemas import Key, Text

router = Router(tags=["plans"])


MAX_CHOICES = 200


def _not_a_boolean(value: Any) -> Any:
    """JSON true is not 1 ("tokens": true planned one token)."""
    if isinstance(value, bool):
        raise ValueError("a number or an amount such as 2T, not true or false")
    return value


def _annotation(field: ScenarioField) -> Any:
    """The JSON type of a scenario field, with its range in the schema: finite numbers in the
    table's range (whole numbers for integers), bounded NUL-free strings, closed choices."""
    description = f"{field.label}. {field.help}".strip(" .")
    if field.kind in ("number", "integer"):
        bounds: dict[str, Any] = {}
        if field.minimum is not None:
            bounds["gt" if field.is_min_exclusive else "ge"] = field.minimum
        if field.maximum is not None:
            bounds["le"] = field.maximum
        if field.kind == "integer":
            return Annotated[StrictInt | None, Field(None, description=description, **bounds)]
        if field.name in AMOUNT_FIELDS:  # "2T", "500B" or a number; the scenario checks it
            return Annotated[float | Text | None, BeforeValidator(_not_a_boolean),
                             Field(None, description=description)]
        return Annotated[StrictFloat | None, Field(None, description=description,
                                                   allow_inf_nan=False, **bounds)]
    if field.is_layout and field.choices_from in KNOBS_BY_NAME:
        choice: Any = Literal[KNOBS_BY_NAME[field.choices_from].choices]
        return Annotated[choice | None, Field(None, description=description)]
    band = Annotated[StrictFloat, Field(ge=field.minimum or 0, le=field.maximum or 100,
                                  allow_inf_nan=False)]
    json_type: Any = {
        "choices": Annotated[list[Key], Field(max_length=MAX_CHOICES)] | Text,
        "bands": Annotated[dict[Key, band], Field(max_length=MAX_CHOICES)] | Text,
        "flag": StrictBool | Key,
    }.get(field.kind, Text)
    return Annotated[json_type | None, Field(None, description=description)]


# Goal amounts people write with a suffix, as the page prints them ("2.0 T tokens").
AMOUNT_FIELDS = ("tokens", "samples")


# The request body: every field of the scenario table, and nothing else (unknown fields get
# a 422 naming them). Exactly one goal; deadline as a date or in days; budget in USD.
class _ClosedSchema(Schema):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _ranges_in_words(cls, data: Any) -> Any:
        """An out-of-range number gets the table's plain-words rule in its 422 (the same
        message the form shows), before pydantic's generic bound message."""
        items = data.items() if isinstance(data, dict) else ()
        for name, value in items:
            field = FIELDS_BY_NAME.get(name)
            if (field is not None and field.kind in ("number", "integer")
                    and isinstance(value, int | float) and not isinstance(value, bool)
                    and _is_finite(value)):
                field.check_number(float(value))
        return data


def _is_finite(value: float) -> bool:
    """False for inf, NaN and an int too large for a float (a 400-digit JSON integer)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


# The nested layout object: the table's layout fields, closed like the body.
PlanLayoutIn = create_model(  # type: ignore[call-overload]
    "PlanLayoutIn",
    __base__=_ClosedSchema,
    **{field.name: _annotation(field) for field in SCENARIO_FIELDS if field.is_layout},
)

PlanIn = create_model(  # type: ignore[call-overload]
    "PlanIn",
    __base__=_ClosedSchema,
    **{field.name: _annotation(field) for field in SCENARIO_FIELDS},
    layout=Annotated[PlanLayoutIn | None, Field(None, description="Fixed layout fields")],
)


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


@router.post("", response={201: PlanCreated},
             summary="Plan a training run (in the background)")
def create_plan(request: HttpRequest, payload: PlanIn) -> Status[Any]:  # type: ignore[valid-type]
    """Check the fields and store the scenario, then plan it in the background; 400 names the
    field. Whether any configuration fits is the plan's answer: `result.no_fit` names the
    field to change when none does."""
    try:
        stored = services.scenario_create(
            owner_id=request.user.id, raw=payload.dict(exclude_none=True)
        )
    except ValueError as exc:
        raise HttpError(400, str(exc)) from None
    return Status(201, {"id": stored.id, "status": stored.status})


@router.get("/{scenario_id}", response=PlanOut,
            summary="Status, progress and (when done) the ranked options")
def get_plan(request: HttpRequest, scenario_id: int) -> PlanScenario | HttpResponse:
    """Status, progress and, when done, the ranked configurations and recommendations."""
    head = get_object_or_404(
        PlanScenario.objects.only("id", "owner_id", "name", "status", "created_at",
                                  "finished_at"),
        pk=scenario_id, owner=request.user)
    if not head.is_finished:
        return get_object_or_404(PlanScenario, pk=scenario_id, owner=request.user)
    # A finished plan does not change: its JSON (about a megabyte for a whole-catalog plan,
    # whose decoding and encoding were most of the request's time) is encoded once.
    name = hashlib.sha256(head.name.encode()).hexdigest()[:16]
    stamp = (head.finished_at or head.created_at).timestamp()
    key = f"api-plan:{head.pk}:{head.status}:{stamp}:{name}"
    bodies: tuple[bytes, bytes] | None = cache.get(key)
    if bodies is None:
        scenario = PlanScenario.objects.get(pk=head.pk)
        out = PlanOut.model_validate(scenario, from_attributes=True).model_dump()
        content = json.dumps(out, cls=NinjaJSONEncoder).encode()
        # No secret in it: compressed once, without padding, at the strongest level.
        bodies = content, compress(content, level=STORED_LEVEL, max_random_bytes=0)
        cache.set(key, bodies, 3600)
    return gzip_response(request, *bodies, content_type="application/json; charset=utf-8")


@router.delete("/{scenario_id}", response={204: None},
               summary="Delete a plan with its sweep parts")
def delete_plan(request: HttpRequest, scenario_id: int) -> Status[None]:
    """Delete the plan with its sweep parts: 204; 404 for a plan that is not yours. Reports
    made from it stay."""
    if services.scenario_delete(owner_id=request.user.pk, scenario_id=scenario_id) is None:
        raise HttpError(404, "Not Found")
    return Status(204, None)


@router.get("/{scenario_id}/report.{fmt}", response={200: None},
            summary="The plan as a pdf, xlsx, csv or html report")
def get_plan_report(request: HttpRequest, scenario_id: int, fmt: str) -> HttpResponse:
    """The plan's report as pdf, xlsx, csv or html (400 names a bad format; 503 says what
    the PDF needs when WeasyPrint cannot load)."""
    scenario = get_object_or_404(PlanScenario, pk=scenario_id, owner=request.user)
    download_check(owner_id=request.user.pk)
    return api_report_download(lambda: plan_reports.plan_report(scenario=scenario), fmt)
