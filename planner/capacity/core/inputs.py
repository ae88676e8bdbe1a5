"""A capacity sweep's inputs, checked once for the form, the API and the command line.

Every error is a ValueError whose message starts with the field's name ("pool_gpus: ...").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from planner.capacity.core.frontier import (
    DEFAULT_POOL_POINTS,
    MAX_HOURS,
    check_points,
    parse_hours_list,
    parse_pool_sizes,
)
from planner.capacity.core.jobs import DISCIPLINES, POLICIES
from planner.capacity.core.owned import OWNED_KEYS, checked
from planner.core.purchase_options import RESERVED_1Y, RESERVED_3Y

POOL_PRICES: tuple[str, ...] = ("cheapest", RESERVED_1Y, RESERVED_3Y, "owned")
# Owned hardware: the figures a user may give (blank: the GPU type's default, core/owned.py).
OWNED_FIGURES: tuple[str, ...] = OWNED_KEYS
DEFAULT_MAX_WAIT_HOURS = (2.0,)
DEFAULT_TARGET_P95_WAIT_HOURS = 2.0


@dataclass(frozen=True)
class CapacityInputs:
    """What to sweep. Blank gpu_type: the type with the most GPU-hours; no pool_gpus: about
    30 sizes from 0 to the no-wait peak. `pool_price`: "cheapest" commitment sold for the
    type, one reservation term, or "owned" hardware (`owned`)."""

    gpu_type: str = ""
    pool_gpus: tuple[int, ...] = ()
    disciplines: tuple[str, ...] = ("fifo",)
    policies: tuple[str, ...] = POLICIES
    max_wait_hours: tuple[float, ...] = DEFAULT_MAX_WAIT_HOURS
    target_p95_wait_hours: float = DEFAULT_TARGET_P95_WAIT_HOURS
    pool_price: str = "cheapest"
    owned: dict[str, float] | None = None
    is_spot_allowed: bool = False
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def n_points(self) -> int:
        """Points of the sweep (DEFAULT_POOL_POINTS pool sizes when none are given)."""
        per_size = len(self.disciplines) * sum(
            1 if policy == "none" else len(self.max_wait_hours) for policy in self.policies)
        return (len(self.pool_gpus) or DEFAULT_POOL_POINTS) * per_size

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe (an infinite limit is "inf"); capacity_inputs() reads it back."""
        return {
            "gpu_type": self.gpu_type, "pool_gpus": list(self.pool_gpus),
            "disciplines": list(self.disciplines), "policies": list(self.policies),
            "max_wait_hours": ["inf" if math.isinf(t) else t for t in self.max_wait_hours],
            "target_p95_wait_hours": self.target_p95_wait_hours,
            "pool_price": self.pool_price,
            "owned": None if self.owned is None else dict(self.owned),
            "is_spot_allowed": self.is_spot_allowed,
        }


def _choices(raw: Any, name: str, allowed: tuple[str, ...], default: tuple[str, ...]
             ) -> tuple[str, ...]:
    if raw in (None, "", []):
        return default
    items = raw.split(",") if isinstance(raw, str) else list(raw)
    values = tuple(dict.fromkeys(str(item).strip() for item in items if str(item).strip()))
    bad = [value for value in values if value not in allowed]
    if bad or not values:
        raise ValueError(f"{name}: {', '.join(bad) or 'nothing'} is not one of "
                         f"{', '.join(allowed)}")
    return values


def _text_list(raw: Any) -> str:
    if raw is None:
        return ""
    if isinstance(raw, list | tuple):
        return ",".join(str(item) for item in raw)
    return str(raw)


def _number(raw: Any, name: str, default: float) -> float:
    if raw in (None, ""):
        return default
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: {raw!r} is not a number") from None
    if math.isnan(value):
        raise ValueError(f"{name}: {raw!r} is not a number")
    return value


def _owned(raw: Mapping[str, Any] | None) -> dict[str, float]:
    if raw is not None and not isinstance(raw, Mapping):
        raise ValueError("owned: give the owned-hardware figures by name")
    return checked(raw or {})


def _flag(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw or "").strip().lower()
    if text in ("", "0", "false", "no", "off"):
        return False
    if text in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"is_spot_allowed: {raw!r} is not yes or no")


def capacity_inputs(raw: Mapping[str, Any]) -> CapacityInputs:
    """Checked inputs from a form, an API body, the command line or a stored dict."""
    target = _number(raw.get("target_p95_wait_hours"), "target_p95_wait_hours",
                     DEFAULT_TARGET_P95_WAIT_HOURS)
    if not 0 <= target <= MAX_HOURS:
        raise ValueError(f"target_p95_wait_hours: must be a number of hours from 0 to "
                         f"{MAX_HOURS:,.0f}")
    pool_price = str(raw.get("pool_price") or "cheapest")
    if pool_price not in POOL_PRICES:
        raise ValueError(f"pool_price: {pool_price!r} is not one of {', '.join(POOL_PRICES)}")
    waits = parse_hours_list(_text_list(raw.get("max_wait_hours")))
    sizes = parse_pool_sizes(_text_list(raw.get("pool_gpus")))
    if len(sizes) > 200:
        raise ValueError("pool_gpus: at most 200 pool sizes")
    if len(waits) > 10:
        raise ValueError("max_wait_hours: at most 10 limits")
    inputs = CapacityInputs(
        gpu_type=str(raw.get("gpu_type") or "").strip()[:64],
        pool_gpus=sizes,
        disciplines=_choices(raw.get("disciplines") or raw.get("discipline"), "discipline",
                             DISCIPLINES, ("fifo",)),
        policies=_choices(raw.get("policies") or raw.get("policy"), "policy", POLICIES,
                          POLICIES),
        max_wait_hours=waits or DEFAULT_MAX_WAIT_HOURS,
        target_p95_wait_hours=target,
        pool_price=pool_price,
        owned=_owned(raw.get("owned")) if pool_price == "owned" else None,
        is_spot_allowed=_flag(raw.get("is_spot_allowed")),
    )
    check_points(inputs.n_points)
    return inputs
