"""A planning scenario as plain JSON: normalise and check it. Bad input raises ValueError.

The same dict is the API body, the CLI's options, the form's data and the URL query of the
result page, so a scenario can be shared as a link.
"""

from dataclasses import dataclass
from datetime import date
from typing import Any

from pricing.models import PurchaseOption
from simulator.core import PRESETS

PURCHASE_OPTIONS = tuple(PurchaseOption.values)
DEFAULT_PURCHASE = ("on_demand", "spot")
LIST_FIELDS = ("providers", "regions", "gpus", "purchase_options")
NUMBER_FIELDS = (
    "tokens",
    "samples",
    "epochs",
    "dataset_samples",
    "params_billion",
    "seq_len",
    "deadline_days",
    "budget_usd",
    "dataset_gb",
    "checkpoint_gb",
    "storage_months",
    "egress_gb",
    "restart_overhead_hours",
    "checkpoint_write_gbytes_per_s",
    "commitment_reuse_fraction",
    "max_nodes",
)
LAYOUT_FIELDS = ("recompute", "zero_stage", "tp", "pp", "precision")
DEFAULTS: dict[str, Any] = {
    "dataset_gb": 0.0,
    "checkpoint_gb": 0.0,
    "storage_months": 1.0,
    "egress_gb": 0.0,
    "max_nodes": 128,
}


@dataclass(frozen=True)
class Scenario:
    """A checked scenario: `data` is the normalised JSON stored and shown."""

    data: dict[str, Any]

    @property
    def deadline_hours(self) -> float | None:
        days = self.data.get("deadline_days")
        return None if days is None else float(days) * 24.0


def _number(name: str, value: Any) -> float | None:
    if value in (None, ""):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: {value!r} is not a number") from None
    if number < 0 or number != number:
        raise ValueError(f"{name}: must be zero or more")
    return number


def _list(name: str, value: Any) -> list[str]:
    if value in (None, ""):
        return []
    items = value.split(",") if isinstance(value, str) else list(value)
    return sorted({str(item).strip() for item in items if str(item).strip()})


def _deadline_days(raw: dict[str, Any], today: date) -> float | None:
    if raw.get("deadline"):
        try:
            deadline = date.fromisoformat(str(raw["deadline"]))
        except ValueError:
            raise ValueError(f"deadline: {raw['deadline']!r} is not a date (YYYY-MM-DD)") from None
        if deadline <= today:
            raise ValueError(f"deadline: {deadline} is not in the future")
        return float((deadline - today).days)
    days = _number("deadline_days", raw.get("deadline_days"))
    if days is not None and days <= 0:
        raise ValueError("deadline_days: must be more than zero")
    return days


def _check_goal(data: dict[str, Any]) -> None:
    goals = [k for k in ("tokens", "samples", "epochs") if data.get(k)]
    if len(goals) != 1:
        raise ValueError(
            "tokens: give exactly one positive training goal (tokens, samples or epochs)"
        )
    if "epochs" in goals and not data.get("dataset_samples"):
        raise ValueError("dataset_samples: an epoch goal needs the dataset size in samples")


def _check_workload(data: dict[str, Any]) -> None:
    preset = data.get("workload") or ""
    if preset and preset not in PRESETS:
        raise ValueError(f"workload: unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    if not preset and not data.get("params_billion"):
        raise ValueError("workload: choose a preset or give params_billion")


def scenario_from_input(raw: dict[str, Any], *, today: date) -> Scenario:
    """Normalise form/API/CLI input; `today` turns a deadline date into days."""
    data: dict[str, Any] = dict(DEFAULTS)
    data["workload"] = str(raw.get("workload") or "").strip()
    data["name"] = str(raw.get("name") or "").strip()[:200]
    for name in NUMBER_FIELDS:
        value = _number(name, raw.get(name))
        if value is not None:
            data[name] = value
    data["deadline_days"] = _deadline_days(raw, today)
    for name in LIST_FIELDS:
        data[name] = _list(name, raw.get(name))
    data["purchase_options"] = data["purchase_options"] or list(DEFAULT_PURCHASE)
    unknown = set(data["purchase_options"]) - set(PURCHASE_OPTIONS)
    if unknown:
        raise ValueError(f"purchase_options: unknown {', '.join(sorted(unknown))}")
    data["layout"] = {k: raw[k] for k in LAYOUT_FIELDS if raw.get(k) not in (None, "")}
    if isinstance(raw.get("layout"), dict):
        data["layout"].update(raw["layout"])
    _check_workload(data)
    _check_goal(data)
    if data.get("budget_usd") == 0:
        raise ValueError("budget_usd: must be more than zero")
    return Scenario(
        {k: v for k, v in data.items() if v not in (None, [], {})}
        | {"purchase_options": data["purchase_options"]}
    )


def simulation_request(scenario: Scenario) -> dict[str, Any]:
    """The simulator's request dict (see simulator.specs) for this scenario."""
    data = scenario.data
    workload = (
        {"preset": data["workload"]}
        if data.get("workload")
        else {"params_billion": data["params_billion"], "seq_len": data.get("seq_len")}
    )
    goal = {k: data.get(k) for k in ("tokens", "samples", "epochs", "dataset_samples")}
    return {"workload": workload, "goal": goal, "layout": data.get("layout", {})}
