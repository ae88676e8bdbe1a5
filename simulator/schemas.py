"""The simulation API's request body as declared, closed schemas (django-ninja / pydantic).

Every field has a type and a range taken from the request's bound tables (simulator/requests.py
WORKLOAD_BOUNDS, GOAL_BOUNDS, LAYOUT_BOUNDS): numbers finite and in range, whole numbers where
whole numbers are meant, strings bounded and free of NUL, nested workload, goal and layout
objects closed (an unknown field is refused). A body that breaks any of it gets a 422 whose
`loc` names the field ("body", "payload", "layout", "tp"), before anything is stored.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from ninja import Schema
from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    create_model,
)

from planner.core.layout_knobs import LAYOUT_KNOBS, LayoutKnob
from planner.core.providers import MAX_CLUSTER_NODES
from simulator.requests import (
    GOAL_BOUNDS,
    GOODPUT_INPUTS,
    LAYOUT_BOUNDS,
    WORKLOAD_BOUNDS,
    Bound,
)

MAX_NAME = 200
MAX_KEY = 64
MAX_ID = 2**63 - 1


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain a NUL character")
    return value


Text = Annotated[str, Field(max_length=MAX_NAME), AfterValidator(_no_nul)]
Key = Annotated[str, Field(max_length=MAX_KEY), AfterValidator(_no_nul)]


class ClosedSchema(Schema):
    """Unknown fields are refused; numbers must be finite."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


def bounded(bound: Bound, description: str = "") -> Any:
    """The annotation of an optional number in `bound`'s range (int when it is whole)."""
    if bound.is_integer:
        return Annotated[StrictInt | None, Field(None, ge=int(bound.minimum),
                                                 le=int(bound.maximum), description=description)]
    # Strict: JSON true is not 1 (a boolean is no number of anything).
    return Annotated[StrictFloat | None, Field(None, ge=bound.minimum, le=bound.maximum,
                                               description=description, allow_inf_nan=False)]


def closed_model(name: str, fields: dict[str, Any], doc: str) -> type[ClosedSchema]:
    model: type[ClosedSchema] = create_model(name, __base__=ClosedSchema, __doc__=doc, **fields)
    return model


WorkloadIn = closed_model("WorkloadIn", {
    "preset": Annotated[Key | None, Field(None, description="A preset key (GET /api/ lists)")],
    "name": Annotated[Text | None, Field(None, description="A custom model's name")],
    **{name: bounded(bound) for name, bound in WORKLOAD_BOUNDS.items()},
}, "A preset, or a custom dense LLM (by parameters or by architecture), optionally MoE/LoRA.")

GoalIn = closed_model("GoalIn", {
    name: bounded(bound) for name, bound in GOAL_BOUNDS.items() if name not in GOODPUT_INPUTS
}, "One of tokens, samples or epochs (with dataset_samples); none: throughput only.")

GoodputIn = closed_model("GoodputIn", {
    name: bounded(GOAL_BOUNDS[name]) for name in GOODPUT_INPUTS
}, "Whole-run goodput assumptions (blank: the calibrated defaults).")

def _knob(knob: LayoutKnob) -> Any:
    if knob.kind == "integer":
        return bounded(LAYOUT_BOUNDS[knob.name], knob.label)
    if knob.kind == "choice":
        return Annotated[Literal[knob.choices] | None,  # type: ignore[valid-type]
                         Field(None, description=knob.label)]
    return Annotated[StrictBool | None, Field(None, description=knob.label)]


LayoutIn = closed_model("LayoutIn", {knob.name: _knob(knob) for knob in LAYOUT_KNOBS},
                        "Fixed layout fields (planner/core/layout_knobs.py); blank: searched.")


class SimulationIn(ClosedSchema):
    kind: Literal["single", "sweep"] = "single"
    workload: WorkloadIn  # type: ignore[valid-type]
    goal: GoalIn = Field(default_factory=GoalIn)  # type: ignore[valid-type]
    instance_type_id: Annotated[StrictInt | None, Field(None, ge=1, le=MAX_ID)] = None
    nodes: Annotated[StrictInt, Field(ge=1, le=MAX_CLUSTER_NODES)] = 1
    layout: LayoutIn = Field(default_factory=LayoutIn)  # type: ignore[valid-type]
    goodput: GoodputIn = Field(default_factory=GoodputIn)  # type: ignore[valid-type]
