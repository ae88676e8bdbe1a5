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
    "n_layers",
    "hidden_size",
    "n_heads",
    "ffn_hidden_size",
    "vocab_size",
)
ARCH_FIELDS = ("n_layers", "hidden_size", "n_heads", "seq_len", "vocab_size", "ffn_hidden_size")
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


def _spot_bands(value: Any) -> dict[str, float]:
    """Monthly spot interruption % per provider, from {"aws": 15} or "aws=15,gcp=25"."""
    if value in (None, "", {}):
        return {}
    pairs = (
        value.items()
        if isinstance(value, dict)
        else (item.split("=", 1) for item in str(value).split(",") if item.strip())
    )
    bands: dict[str, float] = {}
    for pair in pairs:
        if len(pair) != 2:
            raise ValueError("spot_interruptions_pct_per_month: write provider=percent, ...")
        provider, pct = str(pair[0]).strip(), _number("spot_interruptions_pct_per_month", pair[1])
        if pct is None or pct >= 100:
            raise ValueError(f"spot_interruptions_pct_per_month: {provider} must be 0 to <100 %")
        bands[provider] = pct
    return bands


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
    has_arch = all(data.get(k) for k in ("n_layers", "hidden_size", "n_heads", "seq_len"))
    if not preset and not data.get("params_billion") and not has_arch:
        raise ValueError(
            "workload: choose a preset, or give params_billion, or the architecture "
            "(n_layers, hidden_size, n_heads, seq_len)"
        )


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
    data["spot_interruptions_pct_per_month"] = _spot_bands(
        raw.get("spot_interruptions_pct_per_month")
    )
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
    """The simulator's request dict (see simulator.requests) for this scenario."""
    data = scenario.data
    if data.get("workload"):
        workload: dict[str, Any] = {"preset": data["workload"]}
    elif data.get("n_layers"):
        workload = {k: int(data[k]) for k in ARCH_FIELDS if data.get(k)}
    else:
        workload = {"params_billion": data["params_billion"], "seq_len": data.get("seq_len")}
    goal = {k: data.get(k) for k in ("tokens", "samples", "epochs", "dataset_samples")}
    return {"workload": workload, "goal": goal, "layout": data.get("layout", {})}
