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
from planner.serving.core.traffic import (
    DailyTraffic,
    constant_traffic,
    parse_daily_profile,
    profile_traffic,
)
from simulator.core.serving.models import PRECISION_LABELS, SERVING_PRESETS, serving_model


@dataclass(frozen=True)
class ServingField:
    name: str
    kind: str  # "choice", "float", "choices", "profile" (24 comma-separated numbers)
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
    ServingField("daily_profile", "profile", "Daily profile (24 hourly weights)",
                 "Hour 0 to 23, comma-separated relative weights or rates; the busiest hour "
                 "runs at the request rate. Blank: the same rate all day.", "",
                 is_required=False),
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
    ServingField("scale_up_minutes", "float", "Scale-up delay (minutes)",
                 "From asking for an on-demand instance to its replicas serving (boot and "
                 "weight load): each hour's added instances start this much earlier, billed.",
                 10.0, 0.0, 60.0, is_required=False),
)
# What a daily profile looks like (docs, the CLI's help): quiet nights, a working-day peak.
EXAMPLE_PROFILE = ("2,1,1,1,1,2,4,7,9,10,10,10,9,9,10,10,9,8,7,6,5,4,3,2")
DEFAULT_SCALE_UP_MINUTES = 10.0
FIELDS_BY_NAME: dict[str, ServingField] = {f.name: f for f in SERVING_FIELDS}
# What an uploaded request log decides instead of the typed fields.
FROM_LOG = ("rate", "daily_profile", "input_tokens", "output_tokens")
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
    traffic: DailyTraffic


def _checked(raw: Mapping[str, Any], *, has_log: bool = False) -> dict[str, Any]:
    unknown = sorted(set(raw) - set(FIELDS_BY_NAME))
    if unknown:
        raise FieldError(unknown[0], "unknown field")
    data: dict[str, Any] = {}
    for field in SERVING_FIELDS:
        value = None if has_log and field.name in FROM_LOG else raw.get(field.name)
        if _blank(value):
            if field.is_required and field.kind != "choices" and not (
                    has_log and field.name in FROM_LOG):
                raise FieldError(field.name, "required")
            data[field.name] = field.example if field.kind == "choices" else None
            continue
        if field.kind == "float":
            data[field.name] = _float(field, value)
        elif field.kind == "choices":
            data[field.name] = _choices(field, value)
        elif field.kind == "profile":
            data[field.name] = _profile(field, value)
        else:
            data[field.name] = _choice(field, value)
    return data


def _profile(field: ServingField, raw: Any) -> str:
    """The profile as checked text: 24 weights, the largest 1 (4 significant digits)."""
    if not isinstance(raw, str):
        if not isinstance(raw, (list, tuple)):
            raise FieldError(field.name, f"expected 24 comma-separated numbers, got "
                                         f"{type(raw).__name__}")
        raw = ",".join(str(v) for v in raw[:25])
    try:
        weights = parse_daily_profile(raw)
    except ValueError as exc:
        raise FieldError(field.name, str(exc)) from None
    return ",".join(f"{w:.4g}" for w in weights)


def _log_values(data: dict[str, Any], log: DailyTraffic) -> None:
    """A request log sets the rate, the profile and the mean lengths (typed values unused)."""
    if log.output_tokens_mean < 1:
        raise FieldError("request_log", f"the mean output length is "
                                        f"{log.output_tokens_mean:.2f} tokens; at least 1")
    data["rate"] = log.peak_rate_per_s
    data["daily_profile"] = ",".join(f"{r / log.peak_rate_per_s:.4g}"
                                     for r in log.hourly_rate_per_s)
    data["input_tokens"] = log.prompt_tokens_mean
    data["output_tokens"] = log.output_tokens_mean


def parse_serving_input(raw: Mapping[str, Any], *,
                        request_log: DailyTraffic | None = None) -> ServingInput:
    """Check every field of `raw` (unknown keys refused); FieldError on the first bad one.
    `request_log`: the traffic of an uploaded log (planner.serving.core.request_log), which
    then sets the rate, the daily profile and the mean prompt and output lengths."""
    data = _checked(raw, has_log=request_log is not None)
    if request_log is not None:
        _log_values(data, request_log)
    try:
        model = serving_model(data["model"])
    except ValueError as exc:
        raise FieldError("model", str(exc)) from None
    if data["precision"] not in PRECISION_LABELS:
        raise FieldError("precision", f"unknown precision {data['precision']!r}")
    ttft = data["ttft_p99_ms"] / 1e3 if data["ttft_p99_ms"] else math.inf
    tpot = data["tpot_p99_ms"] / 1e3 if data["tpot_p99_ms"] else math.inf
    traffic = _traffic(data, request_log)
    p99 = (request_log.prompt_tokens_p99 + request_log.output_tokens_p99
           if request_log is not None else 0.0)
    if data["scale_up_minutes"] is None:
        data["scale_up_minutes"] = DEFAULT_SCALE_UP_MINUTES
    request = ServingRequest(model, data["precision"], data["rate"], data["input_tokens"],
                             data["output_tokens"], ttft, tpot,
                             traffic.hourly_rate_per_s if data["daily_profile"] else (), p99,
                             data["scale_up_minutes"])
    return ServingInput(request, tuple(data["purchase_options"]), data, traffic)


def _traffic(data: dict[str, Any], request_log: DailyTraffic | None) -> DailyTraffic:
    if request_log is not None:
        return request_log
    if not data["daily_profile"]:
        return constant_traffic(data["rate"])
    return profile_traffic(data["rate"], parse_daily_profile(data["daily_profile"]))
