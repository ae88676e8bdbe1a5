"""Validate a simulation request (plain JSON) into core inputs. Bad input raises ValueError."""

import math
from dataclasses import dataclass
from typing import Any

from planner.core.layout_knobs import LAYOUT_KNOBS
from simulator.core import (
    PRESETS,
    GoodputAssumptions,
    LayoutConstraints,
    TrainingGoal,
    Workload,
    dense_llm,
    llm_from_params,
    lora,
    moe_llm,
)
from simulator.core.goodput import GOODPUT_PROFILES, profile_goodput
from simulator.core.reference_runs import batch_note

_ARCH_FIELDS = ("n_layers", "hidden_size", "n_heads", "seq_len", "vocab_size")


@dataclass(frozen=True)
class Bound:
    """The range of one numeric request field (inclusive), and whether it is a whole number.
    The same numbers as the plan field table (planner/plans/core/fields.py) and the form."""

    minimum: float
    maximum: float
    is_integer: bool = False

    def check(self, name: str, value: Any) -> float:
        """The value as a number, or ValueError naming the field with the allowed range."""
        what = "a whole number" if self.is_integer else "a number"
        rule = f"must be {what} from {self.minimum:g} to {self.maximum:g}"
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError(f"{name}: {rule} (you gave {str(value)[:40]!r})")
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"{name}: {rule} (you gave {str(value)[:40]!r})") from None
        if not math.isfinite(number) or not self.minimum <= number <= self.maximum or (
                self.is_integer and not number.is_integer()):
            raise ValueError(f"{name}: {rule} (you gave {str(value)[:40]})")
        return number


# Ranges of the simulation request's numbers (API schema, form and stored-request checks):
# an answer outside them is meaningless (tp 0 divides by zero, n_layers 1e30 overflows).
WORKLOAD_BOUNDS = {
    "params_billion": Bound(0.001, 100_000), "seq_len": Bound(1, 1_048_576, True),
    "n_layers": Bound(1, 1_000, True), "hidden_size": Bound(1, 131_072, True),
    "n_heads": Bound(1, 1_024, True), "vocab_size": Bound(1, 10_000_000, True),
    "ffn_hidden_size": Bound(1, 1_048_576, True),
    "moe_total_params_billion": Bound(0.001, 100_000), "n_experts": Bound(1, 1_024, True),
    "lora_rank": Bound(1, 65_536, True),
}
GOAL_BOUNDS = {
    "tokens": Bound(1, 1e16), "samples": Bound(1, 1e13), "epochs": Bound(0.001, 10_000),
    "dataset_samples": Bound(1, 1e13), "global_batch_samples": Bound(1, 1e7, True),
    "global_batch_tokens": Bound(1, 1e9),
    # Goodput inputs (GOODPUT_INPUTS): the plan field table's ranges.
    "failures_per_million_gpu_hours": Bound(0, 100_000), "failure_restart_minutes":
    Bound(0, 10_080), "checkpoint_stall_seconds": Bound(0, 86_400),
    "eval_overhead_pct": Bound(0, 100), "production_overhead_pct": Bound(0, 1_000),
}
# Any other request number: finite, and no more than this.
ANY_AMOUNT = Bound(-1e12, 1e12)
LAYOUT_BOUNDS = {  # from the knob table (planner/core/layout_knobs.py)
    knob.name: Bound(knob.minimum or 0, knob.maximum or 0, True)
    for knob in LAYOUT_KNOBS if knob.kind == "integer"
}


# Time, GPU-hours and energy need the run's work; without it the simulator answers the rest.
MISSING_GOAL = "tokens_or_samples_total"
NOT_PREDICTED_NOTE = (f"not predicted: missing {MISSING_GOAL} "
                      "(give the training goal in tokens, samples or epochs)")


# Goodput inputs (plan assumptions) -> (GoodputAssumptions field, factor to its unit).
GOODPUT_INPUTS: dict[str, tuple[str, float]] = {
    "failures_per_million_gpu_hours": ("failures_per_gpu_hour", 1e-6),
    "failure_restart_minutes": ("restart_seconds", 60.0),
    "checkpoint_stall_seconds": ("checkpoint_write_seconds", 1.0),
    "eval_overhead_pct": ("eval_overhead_fraction", 0.01),
    "production_overhead_pct": ("production_overhead_fraction", 0.01),
}
# Modern decoder LLMs pretrain at 4,096 tokens when nothing says otherwise.
DEFAULT_SEQ_LEN = 4096


@dataclass(frozen=True)
class SimulationInputs:
    """Core inputs; `missing` names what a time prediction lacks (throughput still answers).

    `goodput` holds the GoodputAssumptions fields the user set (the rest come from the
    calibration: whole_run_goodput); `defaults` says which defaults filled blanks.
    """

    workload: Workload
    goal: TrainingGoal
    constraints: LayoutConstraints
    missing: tuple[str, ...] = ()
    goodput: tuple[tuple[str, float], ...] = ()
    defaults: tuple[str, ...] = ()
    goodput_profile: str = "typical"  # simulator.core.goodput.GOODPUT_PROFILES

    def goodput_assumptions(self, production_overhead_fraction: float) -> GoodputAssumptions:
        """Whole-run goodput of the profile (the calibration's production overhead for typical
        and custom, the well-run cap for well_run) with the user's settings."""
        return profile_goodput(self.goodput_profile, production_overhead_fraction,
                               dict(self.goodput))

    def band_goodput(self, production_overhead_fraction: float) -> GoodputAssumptions:
        """The other profile the time band covers: well_run for typical or custom, typical
        for well_run (the user's failure settings kept, not their production overhead)."""
        other = "typical" if self.goodput_profile == "well_run" else "well_run"
        settings = {k: v for k, v in self.goodput if k != "production_overhead_fraction"}
        return profile_goodput(other, production_overhead_fraction, settings)


def _positive(spec: dict[str, Any], name: str, kind: type = float) -> Any:
    number = WORKLOAD_BOUNDS[name].check(f"workload.{name}", spec.get(name))
    return int(number) if kind is int else number


def _custom_workload(spec: dict[str, Any]) -> Workload:
    name = str(spec.get("name") or "Custom model")
    if spec.get("params_billion") and not spec.get("n_layers"):
        seq = _positive(spec, "seq_len", int) if spec.get("seq_len") else DEFAULT_SEQ_LEN
        return llm_from_params(name, _positive(spec, "params_billion") * 1e9, seq_len=seq)
    arch = {field: _positive(spec, field, int) for field in _ARCH_FIELDS}
    ffn = _positive(spec, "ffn_hidden_size", int) if spec.get("ffn_hidden_size") else None
    return dense_llm(name, ffn_hidden_size=ffn, **arch)


def workload_from_spec(spec: dict[str, Any]) -> Workload:
    """`{"preset": key}` or a custom dense LLM; optional LoRA rank or MoE total parameters."""
    preset = spec.get("preset")
    if preset:
        if not isinstance(preset, str) or preset not in PRESETS:
            raise ValueError(f"workload.preset: unknown preset {preset!r}")
        workload = PRESETS[preset]
    else:
        workload = _custom_workload(spec)
    if spec.get("moe_total_params_billion"):
        total = _positive(spec, "moe_total_params_billion") * 1e9
        experts = _positive(spec, "n_experts", int) if spec.get("n_experts") else 8
        workload = moe_llm(workload, total_params=total, n_experts=experts)
    if spec.get("lora_rank"):
        workload = lora(workload, rank=_positive(spec, "lora_rank", int))
    return workload


def _number(name: str, value: Any) -> float:
    """A goal or goodput number, finite and in its range (ValueError naming the field)."""
    return GOAL_BOUNDS.get(name.rsplit(".", 1)[-1], ANY_AMOUNT).check(name, value)


def has_goal(spec: dict[str, Any]) -> bool:
    """True when the goal names tokens, samples or epochs (a work amount to time)."""
    return any(spec.get(k) not in (None, "") for k in ("tokens", "samples", "epochs"))


def goal_from_spec(spec: dict[str, Any]) -> TrainingGoal:
    """Exactly one of tokens, samples or epochs (with dataset_samples).

    Without any of them the goal is one global batch: throughput, memory and MFU are
    answered, time is not (see SimulationInputs.missing).
    """
    values = {k: spec.get(k) for k in ("tokens", "samples", "epochs", "dataset_samples")}
    numbers = {k: _number(f"goal.{k}", v) for k, v in values.items() if v not in (None, "")}
    batch_given = spec.get("global_batch_samples")
    batch = (int(_number("goal.global_batch_samples", batch_given))
             if batch_given not in (None, "") else None)
    if not has_goal(spec):
        return TrainingGoal(samples=1.0, global_batch_samples=batch)
    return TrainingGoal(
        tokens=numbers.get("tokens"),
        samples=numbers.get("samples"),
        epochs=numbers.get("epochs"),
        dataset_samples=numbers.get("dataset_samples"),
        global_batch_samples=batch,
    )


def constraints_from_spec(spec: dict[str, Any]) -> LayoutConstraints:
    values: dict[str, Any] = {}
    for knob in LAYOUT_KNOBS:
        value = spec.get(knob.name)
        if value in (None, ""):
            continue
        if knob.kind == "flag":
            values[knob.name] = parse_flag(f"layout.{knob.name}", value)
            continue
        if knob.kind == "integer":
            values[knob.name] = int(LAYOUT_BOUNDS[knob.name].check(f"layout.{knob.name}", value))
            continue
        if value not in knob.choices:
            raise ValueError(f"layout.{knob.name}: must be one of {', '.join(knob.choices)} "
                             f"(you gave {str(value)[:40]!r})")
        values[knob.name] = value
    return LayoutConstraints(**values)


def parse_flag(name: str, value: Any) -> bool:
    """A yes/no input from JSON, a form or the command line; blank is no."""
    if isinstance(value, bool):
        return value
    text = "" if value is None else str(value).strip().lower()
    if text in ("", "no", "false", "0", "off"):
        return False
    if text in ("yes", "true", "1", "on"):
        return True
    raise ValueError(f"{name}: must be yes or no (you gave {value!r}); tick the box or leave "
                     "it empty.")


def goodput_from_spec(spec: dict[str, Any]) -> tuple[tuple[str, float], ...]:
    """GoodputAssumptions fields set by GOODPUT_INPUTS entries (ValueError when negative)."""
    unknown = sorted(set(spec) - set(GOODPUT_INPUTS))
    if unknown:
        raise ValueError(f"goodput.{unknown[0]}: unknown goodput input")
    out = []
    for name, value in spec.items():
        if value in (None, ""):
            continue
        number = _number(f"goodput.{name}", value)
        field, factor = GOODPUT_INPUTS[name]
        out.append((field, number * factor))
    return tuple(out)


def _batch_tokens(goal: dict[str, Any], workload: Workload) -> tuple[dict[str, Any], str]:
    """The goal with a batch in tokens turned into samples, and what the batch default was."""
    tokens = goal.pop("global_batch_tokens", None)
    if tokens not in (None, ""):
        samples = max(1, round(_number("goal.global_batch_tokens", tokens)
                               / workload.tokens_per_sample))
        return {**goal, "global_batch_samples": samples}, ""
    if goal.get("global_batch_samples") not in (None, ""):
        return goal, ""
    return goal, batch_note(workload)


def inputs_from_request(request: dict[str, Any]) -> SimulationInputs:
    """Core inputs of a stored request: {"workload": {...}, "goal": {...}, "layout": {...},
    "goodput": {...}}; `defaults` names the sequence length and batch defaults used."""
    spec = dict(request.get("workload") or {})
    workload = workload_from_spec(spec)
    goal, note = _batch_tokens(dict(request.get("goal") or {}), workload)
    defaults = [note] if note else []
    if not spec.get("preset") and spec.get("params_billion") and not spec.get("seq_len"):
        defaults.insert(0, f"sequence length assumed {DEFAULT_SEQ_LEN:,} tokens (modern "
                           "decoder LLM default)")
    return SimulationInputs(
        workload=workload,
        goal=goal_from_spec(goal),
        constraints=constraints_from_spec(dict(request.get("layout") or {})),
        missing=() if has_goal(goal) else (MISSING_GOAL,),
        goodput=goodput_from_spec(dict(request.get("goodput") or {})),
        defaults=tuple(defaults),
        goodput_profile=_profile(request.get("goodput_profile")),
    )


def _profile(code: Any) -> str:
    if code in (None, ""):
        return "typical"
    if code not in GOODPUT_PROFILES:
        raise ValueError(f"goodput_profile: {code!r} is not one of {', '.join(GOODPUT_PROFILES)}")
    return str(code)


# Result fields that need the run's work (blanked, with NOT_PREDICTED_NOTE, without a goal).
TIME_FIELDS = ("time_to_train_hours", "time_to_train_days", "time_to_train_p10_hours",
               "time_to_train_p90_hours", "steady_state_hours", "goodput_fraction", "gpu_hours",
               "energy_kwh")


def without_time(result: dict[str, Any], inputs: SimulationInputs) -> dict[str, Any]:
    """`result` with TIME_FIELDS set to None and a `not_predicted` note when the goal is
    missing; unchanged otherwise."""
    if not inputs.missing:
        return result
    blank = {k: None for k in TIME_FIELDS if k in result}
    return {**result, **blank, "not_predicted": NOT_PREDICTED_NOTE}
