"""Storage what-if API: POST a fleet as JSON, get it priced per provider and tier policy."""

from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema
from ninja.errors import HttpError
from pydantic import ConfigDict, Field, create_model

from planner.storage import services
from planner.storage.core.inputs import NUMBER_FIELDS

router = Router(tags=["storage"])


class FleetModelIn(Schema):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    name: str = Field(max_length=100)
    checkpoint_gb: float
    checkpoints_per_day: float


class _Closed(Schema):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


# The body: the fleet, the providers and every setting of the what-if's input table.
StorageWhatIfIn: Any = create_model(
    "StorageWhatIfIn", __base__=_Closed,
    models=(list[FleetModelIn] | str, Field(description="The fleet: a list, or text lines "
                                            "'name, checkpoint GB, checkpoints per day'")),
    providers=(list[str] | str | None, None),
    **{name: (float | None, Field(None, description=f"{text} ({unit})" if unit else text))
       for name, (text, unit, _, _) in NUMBER_FIELDS.items()})


@router.post("/whatif")
def storage_whatif(request: HttpRequest, body: StorageWhatIfIn) -> dict[str, Any]:
    """The fleet priced per provider and policy, a year; 422 names the field."""
    raw = body.model_dump(exclude_none=True)
    try:
        return services.storage_whatif(raw=raw)
    except ValueError as exc:
        raise HttpError(422, str(exc)) from None
