"""A planning scenario as plain JSON: normalise and check it. Bad input raises ValueError.

The same dict is the API body, the CLI's options, the form's data and the URL query of the
result page, so a scenario can be shared as a link.
"""

import math
from dataclasses import dataclass
from datetime import date
from typing import Any

from planner.core.formatting import parse_amount
from planner.core.layout_knobs import KNOBS_BY_NAME
from planner.core.purchase_options import (
    COMMITMENT_PAYMENTS,
    NO_UPFRONT,
    PAY_AS_YOU_GO,
    PURCHASE_OPTION_CODES,
)
from planner.plans.core.carbon import ACCOUNTING_CHOICES
from planner.plans.core.fields import (
    ARCH_FIELDS,
    EXTRA_INPUTS,
    FIELDS_BY_NAME,
    GOODPUT_FIELDS,
    LAYOUT_FIELDS,
    SCENARIO_FIELDS,
)
from planner.plans.core.storage import parse_retention
from simulator.core import PRESETS
from simulator.core.goodput import GOODPUT_PROFILES
from simulator.requests import parse_flag

PURCHASE_OPTIONS = PURCHASE_OPTION_CODES
DEFAULT_PURCHASE = PAY_AS_YOU_GO
NUMBER_KINDS = ("number", "integer")
PAYMENT_OPTIONS = tuple(value for value, _ in COMMITMENT_PAYMENTS)
DEFAULT_PAYMENT = (NO_UPFRONT,)
# Data set and checkpoint sizes default from the workload in the plan service (shown there).
DEFAULTS: dict[str, Any] = {
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
    """A finite number within the field's documented range; None when blank."""
    if value in (None, ""):
        return None
    field = FIELDS_BY_NAME.get(name)
    rule = field.rule_text[:-1] if field else f"{name} must be a number"
    if isinstance(value, bool):
        raise ValueError(f"{name}: {rule} (you gave {value!r}).")
    try:
        number = parse_amount(value) if isinstance(value, str) else float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name}: {rule} (you gave {str(value)[:40]!r}).") from None
    if not math.isfinite(number):
        raise ValueError(f"{name}: {rule} (you gave {number}).")
    if field is not None:
        if field.kind == "integer" and not number.is_integer():
            raise ValueError(f"{name}: {rule}: a whole number (you gave {number:g}).")
        field.check_number(number)
    elif number < 0:
        raise ValueError(f"{name}: must be zero or more")
    return number


def _reject_unknown(raw: dict[str, Any]) -> None:
    unknown = sorted(set(raw) - set(FIELDS_BY_NAME) - set(EXTRA_INPUTS))
    if unknown:
        raise ValueError(f"{unknown[0]}: unknown field (known: {', '.join(FIELDS_BY_NAME)})")


def _layout(raw: dict[str, Any]) -> dict[str, Any]:
    given = dict(raw["layout"]) if isinstance(raw.get("layout"), dict) else {}
    if raw.get("layout") not in (None, "", {}) and not isinstance(raw.get("layout"), dict):
        raise ValueError("layout: must be an object of layout fields")
    unknown = sorted(set(given) - set(LAYOUT_FIELDS))
    if unknown:
        raise ValueError(f"layout.{unknown[0]}: unknown layout field ({', '.join(LAYOUT_FIELDS)})")
    given.update({k: raw[k] for k in LAYOUT_FIELDS if raw.get(k) not in (None, "")})
    layout: dict[str, Any] = {}
    for name, value in given.items():
        if value in (None, ""):
            continue
        field = FIELDS_BY_NAME[name]
        if field.kind == "flag":
            if parse_flag(name, value):
                layout[name] = True
            continue
        if field.kind == "integer":
            layout[name] = int(_number(name, value) or 0)
        else:
            allowed = KNOBS_BY_NAME[name].choices
            if value not in allowed:
                raise ValueError(f"{name}: {FIELDS_BY_NAME[name].label} must be one of "
                                 f"{', '.join(allowed)} (you gave {value!r}).")
            layout[name] = value
    return layout


def _goodput_profile(value: Any, data: dict[str, Any]) -> str:
    """The goodput profile (simulator.core.goodput.GOODPUT_PROFILES): blank is typical, or
    custom when a production overhead is given; a named well_run or typical refuses one."""
    overhead = data.get("production_overhead_pct") is not None
    if value in (None, ""):
        return "custom" if overhead else "typical"
    if value not in GOODPUT_PROFILES:
        raise ValueError(f"goodput_profile: {FIELDS_BY_NAME['goodput_profile'].label} must be "
                         f"one of {', '.join(GOODPUT_PROFILES)} (you gave {str(value)[:40]!r}).")
    if overhead and value != "custom":
        raise ValueError(f"production_overhead_pct: the {value} goodput profile sets the "
                         "production overhead; choose custom to give your own.")
    return str(value)


def _carbon_accounting(value: Any) -> str | None:
    """"location", "market" or None (blank: location-based)."""
    if value in (None, ""):
        return None
    allowed = dict(ACCOUNTING_CHOICES)
    if value not in allowed:
        raise ValueError(f"carbon_accounting: {FIELDS_BY_NAME['carbon_accounting'].label} must "
                         f"be one of {', '.join(allowed)} (you gave {str(value)[:40]!r}).")
    return str(value)


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
            raise ValueError("spot_interruptions_pct_per_month: Write spot interruptions as "
                             "provider=percent pairs, e.g. aws=15,gcp=25.")
        provider, pct = str(pair[0]).strip(), _number("spot_interruptions_pct_per_month", pair[1])
        if not provider:
            raise ValueError("spot_interruptions_pct_per_month: Each spot interruption band needs "
                             "a provider, e.g. aws=15.")
        if pct is None or pct >= 100:
            raise ValueError(f"spot_interruptions_pct_per_month: Spot interruptions for {provider} "
                             "must be from 0 to less than 100 % per month.")
        bands[provider] = pct
    return bands


def _deadline_days(raw: dict[str, Any], today: date) -> float | None:
    if raw.get("deadline"):
        try:
            deadline = date.fromisoformat(str(raw["deadline"]))
        except ValueError:
            raise ValueError(f"deadline: Deadline date must be a date such as 2027-06-30 "
                             f"(you gave {str(raw['deadline'])[:40]!r}).") from None
        if deadline <= today:
            raise ValueError(f"deadline: Deadline date must be after today ({today}); "
                             f"you gave {deadline}.")
        days_away = float((deadline - today).days)
        limit = FIELDS_BY_NAME["deadline_days"].maximum or math.inf
        if days_away > limit:
            raise ValueError(f"deadline: Deadline date must be at most {limit:,.0f} days away "
                             f"(you gave {deadline}, {days_away:,.0f} days away).")
        return days_away
    days = _number("deadline_days", raw.get("deadline_days"))
    if days is not None and days <= 0:
        raise ValueError(f"deadline_days: {FIELDS_BY_NAME['deadline_days'].rule_text}")
    return days


def _check_goal(data: dict[str, Any]) -> None:
    goals = [k for k in ("tokens", "samples", "epochs") if data.get(k)]
    if len(goals) != 1:
        which = "more than one" if goals else "none"
        raise ValueError(
            f"tokens: Give exactly one training goal: training tokens (e.g. 2e12), training "
            f"samples or epochs (you gave {which})."
        )
    if "epochs" in goals and not data.get("dataset_samples"):
        raise ValueError("dataset_samples: An epoch goal needs the dataset size in samples, "
                         "e.g. 1.2e6.")


def preset_architecture(key: str) -> dict[str, Any]:
    """The architecture fields a preset fills in the form (0-valued ones left out), and its
    parameters in billions to 4 significant digits."""
    workload = PRESETS[key]
    shape = {name: int(getattr(workload, name)) for name in ARCH_FIELDS}
    return {k: v for k, v in shape.items() if v > 0 and not (k == "seq_len" and v == 1)} | {
        "params_billion": float(f"{workload.params / 1e9:.4g}")}


def _preset_or_variant(data: dict[str, Any]) -> None:
    """A preset whose filled-in architecture is unchanged stays the preset (the copies are
    dropped); a changed LLM architecture or size becomes a custom model of that shape."""
    key = data.get("workload") or ""
    if key not in PRESETS:
        return
    shape = preset_architecture(key)
    given = {k: data[k] for k in (*ARCH_FIELDS, "params_billion") if data.get(k) is not None}
    changed = [k for k, v in given.items() if not math.isclose(v, shape.get(k, 0), rel_tol=5e-3)]
    for name in given:
        data.pop(name)
    if not changed:
        return
    if PRESETS[key].kind != "llm":
        raise ValueError(f"{changed[0]}: The {PRESETS[key].name} preset's architecture is "
                         "fixed; choose no preset to plan a custom model.")
    data["workload"] = ""
    data["name"] = data.get("name") or f"{PRESETS[key].name} variant"
    if changed == ["params_billion"]:
        data.update(params_billion=given["params_billion"], seq_len=shape["seq_len"])
    else:
        arch = {k: v for k, v in shape.items() if k != "params_billion"}
        data.update(arch | {k: v for k, v in given.items() if k != "params_billion"})


def _check_workload(data: dict[str, Any]) -> None:
    preset = data.get("workload") or ""
    if preset and preset not in PRESETS:
        raise ValueError(f"workload: Model preset {preset!r} is unknown; choose one of "
                         f"{', '.join(PRESETS)}.")
    has_arch = all(data.get(k) for k in ("n_layers", "hidden_size", "n_heads", "seq_len"))
    if not preset and not data.get("params_billion") and not has_arch:
        raise ValueError(
            "workload: Choose a model preset, or give the parameters (in billions), or the "
            "architecture (layers, hidden size, attention heads and sequence length)."
        )


def plan_name(raw: Any) -> str:
    """A plan's name as stored: trimmed to 200 characters; ValueError for a NUL, which no
    database text holds (PostgreSQL: a 500, not a message)."""
    name = str(raw or "").strip()[:200]
    if "\x00" in name:
        raise ValueError("name: must not contain a NUL character")
    return name


def scenario_from_input(raw: dict[str, Any], *, today: date) -> Scenario:
    """Normalise form/API/CLI input; `today` turns a deadline date into days."""
    _reject_unknown(raw)
    data: dict[str, Any] = dict(DEFAULTS)
    data["workload"] = str(raw.get("workload") or "").strip()
    data["name"] = plan_name(raw.get("name"))
    for field in SCENARIO_FIELDS:
        if field.kind in NUMBER_KINDS and not field.is_layout:
            value = _number(field.name, raw.get(field.name))
            if value is not None:
                data[field.name] = int(value) if field.kind == "integer" else value
    data["deadline_days"] = _deadline_days(raw, today)
    for field in SCENARIO_FIELDS:
        if field.kind == "choices":
            data[field.name] = _list(field.name, raw.get(field.name))
    data["purchase_options"] = data["purchase_options"] or list(DEFAULT_PURCHASE)
    data["payment_options"] = data["payment_options"] or list(DEFAULT_PAYMENT)
    unknown_payment = set(data["payment_options"]) - set(PAYMENT_OPTIONS)
    if unknown_payment:
        raise ValueError(f"payment_options: unknown {', '.join(sorted(unknown_payment))}")
    for field in SCENARIO_FIELDS:
        is_set = field.kind == "flag" and not field.is_layout
        if is_set and parse_flag(field.name, raw.get(field.name)):
            data[field.name] = True
    unknown = set(data["purchase_options"]) - set(PURCHASE_OPTIONS)
    if unknown:
        raise ValueError(f"purchase_options: unknown {', '.join(sorted(unknown))}")
    data["spot_interruptions_pct_per_month"] = _spot_bands(
        raw.get("spot_interruptions_pct_per_month")
    )
    data["layout"] = _layout(raw)
    if str(raw.get("retention") or "").strip():
        data["retention"] = parse_retention(str(raw["retention"])).text
    data["carbon_accounting"] = _carbon_accounting(raw.get("carbon_accounting"))
    data["goodput_profile"] = _goodput_profile(raw.get("goodput_profile"), data)
    _preset_or_variant(data)
    _check_workload(data)
    _check_goal(data)
    if data.get("budget_usd") == 0:
        raise ValueError(f"budget_usd: {FIELDS_BY_NAME['budget_usd'].rule_text}")
    return Scenario(
        {k: v for k, v in data.items() if v not in (None, [], {})}
        | {"purchase_options": data["purchase_options"],
           "payment_options": data["payment_options"]}
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
    goal = {k: data.get(k) for k in ("tokens", "samples", "epochs", "dataset_samples",
                                     "global_batch_tokens")}
    goodput = {k: data[k] for k in GOODPUT_FIELDS if data.get(k) is not None}
    return {"workload": workload, "goal": goal, "layout": data.get("layout", {}),
            "goodput": goodput, "goodput_profile": data.get("goodput_profile") or "typical"}
