"""The storage what-if's inputs from a form, the API or the command: checked, with errors
naming the field ("models: line 2: ..."), and the field report's example stated once.

`models` is text, one model a line: "name, checkpoint GB, checkpoints per day" (commas or
tabs), or a list of {name, checkpoint_gb, checkpoints_per_day}.
"""

from __future__ import annotations

import math
from typing import Any

from planner.core.providers import AWS, AZURE, GCP
from planner.storage.core.fleet import FleetInputs, FleetModel

PROVIDERS = (AWS, GCP, AZURE)
# name: (label, unit, default, whole number?)
NUMBER_FIELDS: dict[str, tuple[str, str, float, bool]] = {
    "before_days": ("Kept on block volumes (before)", "days", 60.0, False),
    "headroom_pct": ("Block volumes provisioned above what they hold", "%", 25.0, False),
    "hot_data_gb": ("Hot data on block volumes (every policy)", "GB", 0.0, False),
    "hot_keep_last": ("Last checkpoints per model kept on block volumes (after)", "", 2, True),
    "after_days": ("Lifecycle: delete checkpoints after (after)", "days", 30.0, False),
    "compression_ratio": ("Compression (after)", "x", 1.0, False),
    "files_per_checkpoint": ("Files per checkpoint", "", 8, True),
}
MAX_MODELS = 200
# The field report (a computer-vision team, block volumes -> S3 Intelligent-Tiering,
# $120k -> $38k a year): it states the totals and the three changes (checkpoints 65 %
# smaller, versions deleted after 30 days, gp3 only for hot data), not the fleet. This fleet
# is one consistent with its before-figure; the after-figure follows from the model.
FIELD_REPORT_EXAMPLE: dict[str, Any] = {
    "models": "\n".join(f"vision-{i}, 60, 4" for i in range(1, 6)),
    "before_days": 60, "headroom_pct": 25, "hot_data_gb": 30_000, "hot_keep_last": 2,
    "after_days": 30, "compression_ratio": round(1 / 0.35, 4), "files_per_checkpoint": 8,
}
FIELD_REPORT_USD_PER_YEAR = (120_000.0, 38_000.0)


def _model_line(number: int, parts: list[str]) -> FleetModel:
    if len(parts) != 3:
        raise ValueError(f"models: line {number}: give name, checkpoint GB, checkpoints per "
                         "day (e.g. vision-1, 60, 4)")
    try:
        gb, per_day = float(parts[1]), float(parts[2])
    except ValueError:
        raise ValueError(f"models: line {number}: checkpoint GB and checkpoints per day "
                         "must be numbers") from None
    try:
        return FleetModel(parts[0][:100] or f"model {number}", gb, per_day)
    except ValueError as exc:
        raise ValueError(f"models: line {number}: {str(exc).split(': ', 2)[-1]}") from None


def parse_models(value: Any) -> tuple[FleetModel, ...]:
    """The fleet from text lines or a list of dicts; ValueError "models: ..."."""
    if isinstance(value, list):
        rows = [[str(item.get(k, "")) for k in ("name", "checkpoint_gb", "checkpoints_per_day")]
                if isinstance(item, dict) else ["?"] for item in value]
    else:
        text = str(value or "").replace("\x00", "")
        rows = [[p.strip() for p in line.replace("\t", ",").split(",")]
                for line in text.splitlines() if line.strip()]
    if not rows:
        raise ValueError("models: give at least one model (name, checkpoint GB, per day)")
    if len(rows) > MAX_MODELS:
        raise ValueError(f"models: at most {MAX_MODELS} models")
    return tuple(_model_line(i, parts) for i, parts in enumerate(rows, start=1))


def _number(name: str, value: Any) -> float:
    label, unit, default, is_whole = NUMBER_FIELDS[name]
    if value in (None, ""):
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: {label} must be a number") from None
    if not math.isfinite(number) or (is_whole and not number.is_integer()):
        raise ValueError(f"{name}: {label} must be a {'whole ' if is_whole else ''}number")
    return number


def fleet_inputs(raw: dict[str, Any]) -> tuple[FleetInputs, tuple[str, ...]]:
    """(checked inputs, providers) from raw input; ValueError "field: message"."""
    unknown = sorted(set(raw) - set(NUMBER_FIELDS) - {"models", "providers"})
    if unknown:
        raise ValueError(f"{unknown[0]}: not an input of the storage what-if")
    values: dict[str, Any] = {name: _number(name, raw.get(name)) for name in NUMBER_FIELDS}
    for name in ("hot_keep_last", "files_per_checkpoint"):
        values[name] = int(values[name])
    providers = raw.get("providers") or list(PROVIDERS)
    if isinstance(providers, str):
        providers = [p.strip() for p in providers.split(",") if p.strip()]
    if not isinstance(providers, list | tuple) or any(p not in PROVIDERS for p in providers):
        raise ValueError(f"providers: choose among {', '.join(PROVIDERS)}")
    try:
        inputs = FleetInputs(models=parse_models(raw.get("models")), **values)
    except ValueError as exc:
        message = str(exc)
        name = message.split(":", 1)[0]
        if name in NUMBER_FIELDS:
            label, unit, _, _ = NUMBER_FIELDS[name]
            raise ValueError(f"{name}: {label} is out of range"
                             f"{f' ({unit})' if unit else ''}") from None
        raise
    return inputs, tuple(providers)
