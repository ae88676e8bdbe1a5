"""The serving plan's inputs, written once: the form, the API schema and its 422 messages, the
CLI options and the page derive from SERVING_FIELDS. `parse_serving_input` checks a mapping of
raw values and returns the request, or raises FieldError naming the field."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from planner.core.purchase_options import ON_DEMAND, PURCHASE_OPTION_CODES, SPOT
from planner.serving.core.plan import ServingRequest
from simulator.core.serving.models import PRECISION_LABELS, SERVING_PRESETS, serving_model


@dataclass(frozen=True)
class ServingField:
    name: str
    kind: str  # "choice", "float", "choices"
    label: str
    help: str
    example: Any
    low: float = 0.0
    high: float = math.inf
    is_required: bool = True


MODEL_CHOICES: tuple[tuple[str, str], ...] = tuple(
    (key, m.name) for key, m in SERVING_PRESETS.items())
PRECISION_CHOICES: tuple[tuple[str, str], ...] = tuple(PRECISION_LABELS.items())
# Spot is for offline batch work only (reclaims break latency targets), so a plan with targets
# does not offer it.
SERVING_PURCHASE_OPTIONS: tuple[str, ...] = tuple(c for c in PURCHASE_OPTION_CODES if c != SPOT)

SERVING_FIELDS: tuple[ServingField, ...] = (
    ServingField("model", "choice", "Model", "A preset model shape.", "llama3.1-70b"),
    ServingField("precision", "choice", "Precision",
                 "Weights (and KV cache with fp8); 4-bit is weight-only.", "fp8"),
    ServingField("rate", "float", "Request rate (requests/s)",
                 "Peak Poisson arrival rate the fleet must serve.", 20.0, 1e-3, 1e6),
    ServingField("input_tokens", "float", "Prompt length (tokens)", "Mean prompt tokens.",
                 2000.0, 1.0, 1.0e6),
    ServingField("output_tokens", "float", "Output length (tokens)", "Mean output tokens.",
                 300.0, 1.0, 1.0e5),
    ServingField("ttft_p99_ms", "float", "P99 time to first token (ms)",
                 "Blank: no TTFT target.", 2000.0, 1.0, 3.6e6, is_required=False),
    ServingField("tpot_p99_ms", "float", "P99 time per output token (ms)",
                 "Blank: no TPOT target.", 60.0, 0.1, 6.0e4, is_required=False),
    ServingField("purchase_options", "choices", "Purchase options",
                 "Spot is left out: reclaims break latency targets.", [ON_DEMAND]),
)
FIELDS_BY_NAME: dict[str, ServingField] = {f.name: f for f in SERVING_FIELDS}
# The longest name a choice may have (model presets and codes are far shorter): a longer or
# non-text value is refused before it is looked up or echoed in a message.
MAX_CHOICE_CHARS = 64


class FieldError(ValueError):
    """Bad input for one field; `field` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def _float(field: ServingField, raw: Any) -> float:
    if isinstance(raw, bool):  # JSON true is not one request per second
        raise FieldError(field.name, f"expected a number, got {str(raw).lower()}")
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise FieldError(field.name, f"expected a number, got {raw!r}") from None
    if not (math.isfinite(value) and field.low <= value <= field.high):
        raise FieldError(field.name, f"must be between {field.low:g} and {field.high:g}")
    return value


def _choice(field: ServingField, raw: Any) -> str:
    if not isinstance(raw, str):
        raise FieldError(field.name, f"expected a name, got {type(raw).__name__}")
    if len(raw) > MAX_CHOICE_CHARS:
        raise FieldError(field.name, f"expected a name of at most {MAX_CHOICE_CHARS} "
                                     f"characters, got {len(raw)}")
    return raw


def _choices(field: ServingField, raw: Any) -> list[str]:
    """A code or a list of distinct codes, each one of SERVING_PURCHASE_OPTIONS."""
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, (list, tuple)):
        raise FieldError(field.name, f"expected a list of options, got {type(raw).__name__}")
    if not items or len(items) > len(SERVING_PURCHASE_OPTIONS):
        raise FieldError(field.name, f"expected 1 to {len(SERVING_PURCHASE_OPTIONS)} "
                                     f"options, got {len(items)}")
    codes = [_choice(field, item) for item in items]
    bad = [c for c in codes if c not in SERVING_PURCHASE_OPTIONS]
    if bad:
        raise FieldError(field.name, f"unknown or unusable option {bad[0]!r}; usable: "
                                     f"{', '.join(SERVING_PURCHASE_OPTIONS)}")
    return list(dict.fromkeys(codes))


def _blank(raw: Any) -> bool:
    return raw is None or (isinstance(raw, str) and not raw.strip())


@dataclass(frozen=True)
class ServingInput:
    """A checked serving plan input: the core request and the purchase options to price."""

    request: ServingRequest
    purchase_options: tuple[str, ...]
    data: dict[str, Any]  # the checked values, JSON-safe (stored with a plan)


def parse_serving_input(raw: Mapping[str, Any]) -> ServingInput:
    """Check every field of `raw` (unknown keys refused); FieldError on the first bad one."""
    unknown = sorted(set(raw) - set(FIELDS_BY_NAME))
    if unknown:
        raise FieldError(unknown[0], "unknown field")
    data: dict[str, Any] = {}
    for field in SERVING_FIELDS:
        value = raw.get(field.name)
        if _blank(value):
            if field.is_required and field.kind != "choices":
                raise FieldError(field.name, "required")
            data[field.name] = field.example if field.kind == "choices" else None
            continue
        if field.kind == "float":
            data[field.name] = _float(field, value)
        elif field.kind == "choices":
            data[field.name] = _choices(field, value)
        else:
            data[field.name] = _choice(field, value)
    try:
        model = serving_model(data["model"])
    except ValueError as exc:
        raise FieldError("model", str(exc)) from None
    if data["precision"] not in PRECISION_LABELS:
        raise FieldError("precision", f"unknown precision {data['precision']!r}")
    ttft = data["ttft_p99_ms"] / 1e3 if data["ttft_p99_ms"] else math.inf
    tpot = data["tpot_p99_ms"] / 1e3 if data["tpot_p99_ms"] else math.inf
    request = ServingRequest(model, data["precision"], data["rate"], data["input_tokens"],
                             data["output_tokens"], ttft, tpot)
    return ServingInput(request, tuple(data["purchase_options"]), data)
