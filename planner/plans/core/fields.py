"""The scenario field table: every input of a plan, once.

The form (planner.plans.forms), the API schema (planner.plans.api), the form template, the
`plan` command's options and the scenario checker (planner.plans.scenario) are all built from
SCENARIO_FIELDS, so a field added here appears everywhere and none is dropped silently.
Ranges are inclusive unless `is_min_exclusive`; units are in the names and labels. The same
plain-words rule (`rule_text`) is the form's message, the API's and the command's help.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.core.formatting import typed_number
from planner.core.layout_knobs import LAYOUT_KNOBS, LayoutKnob
from planner.core.providers import MAX_CLUSTER_NODES

# kinds: "text", "number", "integer", "choice" (one of `choices_from`), "choices" (a list of
# names), "date" (YYYY-MM-DD), "bands" (provider -> % per month).
# "flag" (yes/no, off when absent).
KINDS = ("text", "number", "integer", "choice", "choices", "date", "bands", "flag")
GROUPS: tuple[tuple[str, str], ...] = (
    ("workload", "Workload"),
    ("goal", "Goal"),
    ("constraints", "Constraints"),
    ("layout", "Parallel layout (blank: the planner searches)"),
    ("assumptions", "Data, storage, reliability and spot assumptions"),
)
# Groups shown folded, under one "Assumptions" disclosure (their defaults suit most runs).
FOLDED_GROUPS: tuple[str, ...] = ("layout", "assumptions")


@dataclass(frozen=True)
class ScenarioField:
    """One scenario input: how it is named, checked, grouped and shown.

    `label` is the plain name used in messages ("Training tokens"); `unit` follows numbers
    ("days"); `example` is a typical value written as a person would type it.
    """

    name: str
    kind: str
    label: str
    group: str
    minimum: float | None = None
    maximum: float | None = None
    is_min_exclusive: bool = False
    help: str = ""
    unit: str = ""
    example: str = ""
    # Where a choice's options come from: "presets", "providers", "gpus", "purchase_options",
    # "carbon_accounting", or a layout knob's name (its choices; the interface layer
    # resolves them).
    choices_from: str = ""
    is_assumption: bool = False  # passed to PlanAssumptions under the same name
    is_layout: bool = False  # fixes the simulator's layout search (stored under "layout")
    is_goodput: bool = False  # a whole-run goodput assumption (simulator.requests.GOODPUT_INPUTS)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: unknown kind {self.kind!r}")
        if self.group not in dict(GROUPS):
            raise ValueError(f"{self.name}: unknown group {self.group!r}")

    @property
    def label_with_unit(self) -> str:
        return f"{self.label} ({self.unit})" if self.unit else self.label

    @property
    def range_text(self) -> str:
        """The allowed range in words, with the unit ("" when unbounded): "from 1 to 512
        nodes", "more than 0 and up to 3,650 days", "a positive number up to 1e16 tokens"."""
        low, high = self.minimum, self.maximum
        unit = f" {self.unit}" if self.unit else ""
        if low is None and high is None:
            return ""
        if low is None:
            return f"up to {typed_number(high or 0)}{unit}"
        if high is None:
            word = "more than" if self.is_min_exclusive else "at least"
            return f"{word} {typed_number(low)}{unit}"
        if self.is_min_exclusive:
            start = "above 0" if low == 0 else f"more than {typed_number(low)}"
            return f"{start} and up to {typed_number(high)}{unit}"
        return f"from {typed_number(low)} to {typed_number(high)}{unit}"

    @property
    def rule_text(self) -> str:
        """What a valid value is, as one sentence: "Deadline must be a number above 0 and up
        to 3,650 days, e.g. 90." (the form's, the API's and the command's message)."""
        what = "a whole number" if self.kind == "integer" else "a number"
        if self.minimum == 0 and self.is_min_exclusive:
            what = "a positive whole number" if self.kind == "integer" else "a positive number"
            span = "" if self.maximum is None else f" up to {typed_number(self.maximum)}"
            rule = f"{what}{span}{' ' + self.unit if self.unit and span else ''}"
        else:
            rule = f"{what} {self.range_text}".strip()
        example = f", e.g. {self.example}" if self.example else ""
        return f"{self.label} must be {rule}{example}."

    def check_number(self, value: float) -> None:
        """ValueError "name: rule (you gave value)" when `value` is outside the range."""
        too_low = self.minimum is not None and (
            value <= self.minimum if self.is_min_exclusive else value < self.minimum)
        too_high = self.maximum is not None and value > self.maximum
        if too_low or too_high:
            given = typed_number(value)
            raise ValueError(f"{self.name}: {self.rule_text[:-1]} (you gave {given}).")


def _f(name: str, kind: str, label: str, group: str, **extra: object) -> ScenarioField:
    return ScenarioField(name, kind, label, group, **extra)  # type: ignore[arg-type]


def _knob(knob: LayoutKnob) -> ScenarioField:
    """A layout knob (planner.core.layout_knobs) as a scenario field of the layout group."""
    return ScenarioField(
        knob.name, knob.kind, knob.label, "layout", minimum=knob.minimum,
        maximum=knob.maximum, help=knob.help, unit=knob.unit, example=knob.example,
        choices_from=knob.name if knob.choices else "", is_layout=True)


SCENARIO_FIELDS: tuple[ScenarioField, ...] = (
    _f("name", "text", "Name", "workload", help="Blank: named after the model and goal."),
    _f("workload", "choice", "Model preset", "workload", choices_from="presets",
       help="A preset fills the architecture below (edit it to plan a variant); blank: a "
       "custom model from the parameters or the architecture."),
    _f("params_billion", "number", "Parameters", "workload", unit="billion", example="7",
       minimum=0.0, maximum=100_000.0, is_min_exclusive=True,
       help="A custom model of this size with a standard shape, when no layers are given."),
    _f("seq_len", "integer", "Sequence length", "workload", unit="tokens", example="4096",
       minimum=1, maximum=1_048_576),
    _f("n_layers", "integer", "Layers", "workload", example="32", minimum=1, maximum=1_000),
    _f("hidden_size", "integer", "Hidden size", "workload", example="4096", minimum=1,
       maximum=131_072),
    _f("n_heads", "integer", "Attention heads", "workload", example="32", minimum=1,
       maximum=1_024),
    _f("ffn_hidden_size", "integer", "FFN size", "workload", example="11008", minimum=1,
       maximum=1_048_576, help="Blank: 4 × hidden size."),
    _f("vocab_size", "integer", "Vocabulary", "workload", unit="tokens", example="32000",
       minimum=1, maximum=10_000_000),
    _f("tokens", "number", "Training tokens", "goal", unit="tokens", example="2e12",
       minimum=1.0, maximum=1e16,
       help="Give one goal: tokens, samples, or epochs with the dataset size."),
    _f("samples", "number", "Training samples", "goal", unit="samples", example="5e8",
       minimum=1.0, maximum=1e13),
    _f("epochs", "number", "Epochs", "goal", example="3", minimum=0.001, maximum=10_000.0),
    _f("dataset_samples", "number", "Dataset size", "goal", unit="samples", example="1.2e6",
       minimum=1.0, maximum=1e13, help="Needed with an epoch goal."),
    _f("global_batch_tokens", "number", "Global batch", "goal", unit="tokens", example="4e6",
       minimum=0.0, maximum=1e9, is_min_exclusive=True,
       help="Blank: published practice for the model size (1M tokens below 1B parameters, "
       "2M below 3B, 4M below 100B, 8M above)."),
    _f("deadline", "date", "Deadline date", "constraints", help="Or give it in days below."),
    _f("deadline_days", "number", "Deadline", "constraints", unit="days from today",
       example="90", minimum=0.0, maximum=3_650.0, is_min_exclusive=True),
    _f("budget_usd", "number", "Budget", "constraints", unit="USD", example="250000",
       minimum=0.0, maximum=1e10, is_min_exclusive=True),
    _f("miss_threshold_pct", "number", "Deadline miss chance allowed", "constraints",
       unit="%", example="10", minimum=0.0, maximum=100.0,
       help="Blank: 10 %. A card says it meets the deadline only when its chance of missing "
       "it is at or below this; otherwise it says how likely the miss is."),
    _f("max_co2e_kg", "number", "Most CO2e", "constraints", unit="kg CO2e", example="20000",
       minimum=0.0, maximum=1e10, is_min_exclusive=True,
       help="Leaves out options expected to emit more, and those without carbon data."),
    _f("carbon_accounting", "choice", "Carbon accounting", "constraints",
       choices_from="carbon_accounting",
       help="Blank: location-based. Market-based uses GCP's carbon-free-energy-adjusted "
       "factors; other providers publish none, so their options get no CO2e."),
    _f("providers", "choices", "Providers", "constraints", choices_from="providers",
       help="Blank: all."),
    _f("regions", "choices", "Regions", "constraints", example="us-east-1,europe-west4",
       help="Comma-separated region codes; blank: all."),
    _f("gpus", "choices", "GPU models", "constraints", choices_from="gpus",
       help="Blank: all."),
    _f("purchase_options", "choices", "Purchase options", "constraints",
       choices_from="purchase_options", help="Blank: on-demand and spot."),
    _f("payment_options", "choices", "Commitment payment", "constraints",
       choices_from="payment_options", help="Blank: no upfront (AWS reservations)."),
    _f("max_nodes", "integer", "Largest cluster", "constraints", unit="nodes", example="128",
       minimum=1, maximum=MAX_CLUSTER_NODES),
    _f("spot_node_limit", "integer", "Spot nodes one allocation can get", "constraints",
       unit="nodes", example="4", minimum=0, maximum=MAX_CLUSTER_NODES,
       help="Blank: 4 nodes of 4-8 GPU types, 16 of 1-2 GPU types; beyond it spot capacity "
       "is unlikely."),
    _f("allow_unlikely_capacity", "flag", "Recommend spot allocations beyond that limit",
       "constraints"),
    _f("allow_estimated_prices", "flag", "Recommend options with estimated prices",
       "constraints"),
    _f("horizon_days", "number", "Practical horizon without a deadline", "constraints",
       unit="days", example="365", minimum=0.0, maximum=36_500.0, is_min_exclusive=True,
       help="Blank: 365; longer options are marked impractical."),
    *(_knob(knob) for knob in LAYOUT_KNOBS if knob.is_on_forms and knob.is_planned),
    _f("dataset_gb", "number", "Data set size", "assumptions", unit="GB", example="4000",
       minimum=0.0, maximum=1e8, is_assumption=True, help="Blank: from the goal."),
    _f("checkpoint_gb", "number", "Checkpoint size", "assumptions", unit="GB", example="100",
       minimum=0.0, maximum=1e7, is_assumption=True, help="Blank: from the parameters."),
    _f("storage_months", "number", "Storage kept after the run", "assumptions",
       unit="months", example="1", minimum=0.0, maximum=120.0, is_assumption=True),
    _f("egress_gb", "number", "Network egress", "assumptions", unit="GB", example="500",
       minimum=0.0, maximum=1e8, is_assumption=True),
    _f("restart_overhead_hours", "number", "Spot restart overhead", "assumptions",
       unit="hours", example="0.25", minimum=0.0, maximum=168.0, is_assumption=True),
    _f("checkpoint_write_gbytes_per_s", "number", "Checkpoint write speed per node",
       "assumptions", unit="GB/s", example="2", minimum=0.0, maximum=1_000.0,
       is_min_exclusive=True, is_assumption=True),
    _f("failures_per_million_gpu_hours", "number", "Job-stopping failures", "assumptions",
       unit="per million GPU-hours", example="20", minimum=0.0, maximum=100_000.0,
       is_goodput=True, help="Hardware and software, on every purchase option; spot "
       "interruptions come on top. Blank: 19.7, Llama 3's 419 in 54 days on 16,384 GPUs."),
    _f("failure_restart_minutes", "number", "Restart after a failure", "assumptions",
       unit="minutes", example="5", minimum=0.0, maximum=10_080.0, is_goodput=True,
       help="Detect, re-queue and reload; the work since the last checkpoint is lost too. "
       "Blank: 5."),
    _f("checkpoint_stall_seconds", "number", "Checkpoint write stall", "assumptions",
       unit="seconds", example="30", minimum=0.0, maximum=86_400.0, is_goodput=True,
       help="Training pauses this long per checkpoint; the interval follows Young/Daly. "
       "Blank: 30."),
    _f("eval_overhead_pct", "number", "Evaluation", "assumptions", unit="% of training time",
       example="1", minimum=0.0, maximum=100.0, is_goodput=True, help="Blank: 1."),
    _f("goodput_profile", "choice", "Goodput profile", "assumptions",
       choices_from="goodput_profiles",
       help="well_run: at most 90 % effective training time, as published reliability "
       "studies report for well-run clusters (Llama 3, MegaScale), not fitted to any scored "
       "run; typical (blank): the production overhead fitted on published whole runs; "
       "custom: the overhead you give below. The time band covers well-run and typical."),
    _f("production_overhead_pct", "number", "Other production overhead", "assumptions",
       unit="% of training time", example="30", minimum=0.0, maximum=1_000.0, is_goodput=True,
       help="Data stalls, loss-spike rollbacks, slow nodes, ramp-up, and layouts slower "
       "than the planned one. Blank: fitted on published whole runs (the accuracy page). "
       "Giving it makes the goodput profile custom."),
    _f("checkpoint_every_hours", "number", "Checkpoint every", "assumptions", unit="hours",
       example="1", minimum=0.0, maximum=8_760.0, is_min_exclusive=True,
       help="Blank: the Young/Daly interval from the failure rate and the write stall."),
    _f("retention", "text", "Checkpoint retention", "assumptions",
       example="keep-last=3,milestone-days=7,delete-after-days=30",
       help="keep-last=K (or all) hot checkpoints, a milestone every M days to a colder "
       "tier, every copy deleted after D days. Blank: keep-last=2."),
    _f("checkpoint_compression_ratio", "number", "Checkpoint compression", "assumptions",
       unit="x", example="1.5", minimum=1.0, maximum=100.0,
       help="Stored size = checkpoint size / this. Lossless on bf16 weights stays near "
       "1.5x; more needs lossy or delta methods. Blank: 1 (none)."),
    _f("checkpoint_async", "flag", "Asynchronous checkpoint writes", "assumptions"),
    _f("power_limit_pct", "number", "GPU power limit", "assumptions",
       unit="% of the highest limit", example="70", minimum=50.0, maximum=100.0,
       help="Caps every GPU: slower steps, less energy per step, from measured curves "
       "(wider band for GPUs without a measurement). Blank: no cap."),
    _f("spot_interruptions_pct_per_month", "bands", "Spot interruptions", "assumptions",
       unit="% of instances per month", example="aws=15,gcp=25", minimum=0.0, maximum=100.0,
       help="provider=percent pairs; blank: the Spot Advisor band defaults."),
    _f("commitment_reuse_fraction", "number", "Commitment reused after this run",
       "assumptions", example="0.5", minimum=0.0, maximum=1.0, is_assumption=True,
       help="Share of a 1y/3y commitment's term used by other work after this run (0-1)."),
)
FIELDS_BY_NAME: dict[str, ScenarioField] = {f.name: f for f in SCENARIO_FIELDS}
ASSUMPTION_FIELDS: tuple[str, ...] = tuple(f.name for f in SCENARIO_FIELDS if f.is_assumption)
LAYOUT_FIELDS: tuple[str, ...] = tuple(f.name for f in SCENARIO_FIELDS if f.is_layout)
GOODPUT_FIELDS: tuple[str, ...] = tuple(f.name for f in SCENARIO_FIELDS if f.is_goodput)
ARCH_FIELDS = ("n_layers", "hidden_size", "n_heads", "seq_len", "vocab_size", "ffn_hidden_size")
# Inputs accepted besides the table: the stored layout object (older plans and API clients).
EXTRA_INPUTS = ("layout",)


def fields_in_group(group: str) -> tuple[ScenarioField, ...]:
    return tuple(f for f in SCENARIO_FIELDS if f.group == group)


def split_field_message(message: str) -> tuple[str | None, str]:
    """("tokens", "Training tokens must be ...") from "tokens: Training tokens must be ...";
    (None, message) when it names no field of the table (a form shows it at the top)."""
    head, sep, rest = message.partition(": ")
    name = head.split(".")[-1]
    if sep and name in FIELDS_BY_NAME:
        return name, rest[:1].upper() + rest[1:]
    return None, message
