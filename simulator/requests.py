"""Validate a simulation request (plain JSON) into core inputs. Bad input raises ValueError."""

from dataclasses import dataclass
from typing import Any

from simulator.core import (
    PRESETS,
    LayoutConstraints,
    TrainingGoal,
    Workload,
    dense_llm,
    llm_from_params,
    lora,
    moe_llm,
)

LAYOUT_FIELDS = ("tp", "pp", "dp", "cp", "zero_stage", "recompute", "precision", "micro_batch")
_INT_LAYOUT = {"tp", "pp", "dp", "cp", "zero_stage", "micro_batch"}
_ARCH_FIELDS = ("n_layers", "hidden_size", "n_heads", "seq_len", "vocab_size")


@dataclass(frozen=True)
class SimulationInputs:
    workload: Workload
    goal: TrainingGoal
    constraints: LayoutConstraints


def _positive(spec: dict[str, Any], name: str, kind: type = float) -> Any:
    value = spec.get(name)
    try:
        number = kind(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: {value!r} is not a number") from None
    if number <= 0:
        raise ValueError(f"{name}: must be positive")
    return number


def _custom_workload(spec: dict[str, Any]) -> Workload:
    name = str(spec.get("name") or "Custom model")
    if spec.get("params_billion") and not spec.get("n_layers"):
        seq = int(spec.get("seq_len") or 2048)
        return llm_from_params(name, _positive(spec, "params_billion") * 1e9, seq_len=seq)
    arch = {field: _positive(spec, field, int) for field in _ARCH_FIELDS}
    ffn = int(spec["ffn_hidden_size"]) if spec.get("ffn_hidden_size") else None
    return dense_llm(name, ffn_hidden_size=ffn, **arch)


def workload_from_spec(spec: dict[str, Any]) -> Workload:
    """`{"preset": key}` or a custom dense LLM; optional LoRA rank or MoE total parameters."""
    preset = spec.get("preset")
    if preset:
        if preset not in PRESETS:
            raise ValueError(f"workload.preset: unknown preset {preset!r}")
        workload = PRESETS[preset]
    else:
        workload = _custom_workload(spec)
    if spec.get("moe_total_params_billion"):
        total = _positive(spec, "moe_total_params_billion") * 1e9
        experts = int(spec.get("n_experts") or 8)
        workload = moe_llm(workload, total_params=total, n_experts=experts)
    if spec.get("lora_rank"):
        workload = lora(workload, rank=_positive(spec, "lora_rank", int))
    return workload


def goal_from_spec(spec: dict[str, Any]) -> TrainingGoal:
    """Exactly one of tokens, samples or epochs (with dataset_samples)."""
    values = {k: spec.get(k) for k in ("tokens", "samples", "epochs", "dataset_samples")}
    numbers = {k: float(v) for k, v in values.items() if v not in (None, "")}
    batch = spec.get("global_batch_samples")
    return TrainingGoal(
        tokens=numbers.get("tokens"),
        samples=numbers.get("samples"),
        epochs=numbers.get("epochs"),
        dataset_samples=numbers.get("dataset_samples"),
        global_batch_samples=int(batch) if batch not in (None, "") else None,
    )


def constraints_from_spec(spec: dict[str, Any]) -> LayoutConstraints:
    values: dict[str, Any] = {}
    for name in LAYOUT_FIELDS:
        value = spec.get(name)
        if value in (None, ""):
            continue
        values[name] = int(value) if name in _INT_LAYOUT else str(value)
    return LayoutConstraints(**values)


def inputs_from_request(request: dict[str, Any]) -> SimulationInputs:
    """Core inputs of a stored request: {"workload": {...}, "goal": {...}, "layout": {...}}."""
    return SimulationInputs(
        workload=workload_from_spec(dict(request.get("workload") or {})),
        goal=goal_from_spec(dict(request.get("goal") or {})),
        constraints=constraints_from_spec(dict(request.get("layout") or {})),
    )
