"""The scenario field table: every input of a plan, once.

The form (planner.plans.forms), the API schema (planner.plans.api), the form template, the
`plan` command's options and the scenario checker (planner.plans.scenario) are all built from
SCENARIO_FIELDS, so a field added here appears everywhere and none is dropped silently.
Ranges are inclusive unless `is_min_exclusive`; units are in the names and labels.
"""

from __future__ import annotations

from dataclasses import dataclass

# kinds: "text", "number", "integer", "choice" (one of `choices_from`), "choices" (a list of
# names), "date" (YYYY-MM-DD), "bands" (provider -> % per month).
# "flag" (yes/no, off when absent).
KINDS = ("text", "number", "integer", "choice", "choices", "date", "bands", "flag")
GROUPS: tuple[tuple[str, str], ...] = (
    ("workload", "Workload"),
    ("goal", "Training goal"),
    ("limits", "Deadline and budget"),
    ("where", "Where and how to buy"),
    ("layout", "Parallel layout (blank: the planner searches)"),
    ("assumptions", "Data, storage and assumptions"),
)
RECOMPUTE_CHOICES: tuple[tuple[str, str], ...] = (
    ("none", "none"), ("selective", "selective"), ("full", "full"))
PAYMENT_CHOICES: tuple[tuple[str, str], ...] = (
    ("no_upfront", "No upfront"), ("partial_upfront", "Partial upfront"),
    ("all_upfront", "All upfront"))
PRECISION_CHOICES: tuple[tuple[str, str], ...] = (
    ("bf16", "bf16"), ("fp16", "fp16"), ("fp8", "fp8"), ("tf32", "tf32"), ("fp32", "fp32"))


@dataclass(frozen=True)
class ScenarioField:
    """One scenario input: how it is named, checked, grouped and shown."""

    name: str
    kind: str
    label: str
    group: str
    minimum: float | None = None
    maximum: float | None = None
    is_min_exclusive: bool = False
    help: str = ""
    # Where a choice's options come from: "presets", "providers", "gpus", "purchase_options",
    # "recompute", "precision" (the interface layer resolves them).
    choices_from: str = ""
    is_assumption: bool = False  # passed to PlanAssumptions under the same name
    is_layout: bool = False  # fixes the simulator's layout search (stored under "layout")

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: unknown kind {self.kind!r}")
        if self.group not in dict(GROUPS):
            raise ValueError(f"{self.name}: unknown group {self.group!r}")

    @property
    def range_text(self) -> str:
        """The allowed range in words, for messages and help ("" when unbounded)."""
        low = ""
        if self.minimum is not None:
            word = "more than" if self.is_min_exclusive else "at least"
            low = f"{word} {self.minimum:g}"
        high = "" if self.maximum is None else f"at most {self.maximum:g}"
        return " and ".join(part for part in (low, high) if part)

    def check_number(self, value: float) -> None:
        """ValueError naming the field when `value` is outside the documented range."""
        too_low = self.minimum is not None and (
            value <= self.minimum if self.is_min_exclusive else value < self.minimum)
        too_high = self.maximum is not None and value > self.maximum
        if too_low or too_high:
            raise ValueError(f"{self.name}: must be {self.range_text} (got {value:g})")


def _f(name: str, kind: str, label: str, group: str, **extra: object) -> ScenarioField:
    return ScenarioField(name, kind, label, group, **extra)  # type: ignore[arg-type]


SCENARIO_FIELDS: tuple[ScenarioField, ...] = (
    _f("name", "text", "Name", "workload", help="blank: named after the model and goal"),
    _f("workload", "choice", "Workload preset", "workload", choices_from="presets",
       help="blank: a custom model from the parameters or architecture below"),
    _f("params_billion", "number", "Custom model: parameters (billions)", "workload",
       minimum=0.0, maximum=100_000.0, is_min_exclusive=True),
    _f("seq_len", "integer", "Sequence length (tokens)", "workload", minimum=1,
       maximum=1_048_576),
    _f("n_layers", "integer", "Custom architecture: layers", "workload", minimum=1,
       maximum=1_000),
    _f("hidden_size", "integer", "Hidden size", "workload", minimum=1, maximum=131_072),
    _f("n_heads", "integer", "Attention heads", "workload", minimum=1, maximum=1_024),
    _f("ffn_hidden_size", "integer", "FFN size", "workload", minimum=1, maximum=1_048_576),
    _f("vocab_size", "integer", "Vocabulary (tokens)", "workload", minimum=1,
       maximum=10_000_000),
    _f("tokens", "number", "Goal: tokens (e.g. 1e12)", "goal", minimum=0.0, maximum=1e16),
    _f("samples", "number", "Goal: samples", "goal", minimum=0.0, maximum=1e13),
    _f("epochs", "number", "Goal: epochs", "goal", minimum=0.0, maximum=10_000.0),
    _f("dataset_samples", "number", "Dataset size (samples)", "goal", minimum=0.0,
       maximum=1e13),
    _f("deadline", "date", "Deadline (YYYY-MM-DD)", "limits"),
    _f("deadline_days", "number", "…or deadline in days from today", "limits", minimum=0.0,
       maximum=3_650.0, is_min_exclusive=True),
    _f("budget_usd", "number", "Budget (USD)", "limits", minimum=0.0, maximum=1e10,
       is_min_exclusive=True),
    _f("providers", "choices", "Providers (blank: all)", "where", choices_from="providers"),
    _f("regions", "choices", "Regions (comma-separated codes; blank: all)", "where"),
    _f("gpus", "choices", "GPU models (blank: all)", "where", choices_from="gpus"),
    _f("purchase_options", "choices", "Purchase options", "where",
       choices_from="purchase_options", help="blank: on-demand and spot"),
    _f("payment_options", "choices", "Commitment payment options", "where",
       choices_from="payment_options", help="blank: no upfront (AWS reservations)"),
    _f("max_nodes", "integer", "Largest cluster (nodes)", "where", minimum=1, maximum=512),
    _f("spot_node_limit", "integer", "Spot nodes one allocation can get", "where", minimum=0,
       maximum=512, help="blank: 4 nodes of 4-8 GPU types, 16 of 1-2 GPU types; beyond it "
       "spot capacity is unlikely"),
    _f("allow_unlikely_capacity", "flag", "Recommend spot allocations beyond that limit",
       "where"),
    _f("allow_estimated_prices", "flag", "Recommend options with estimated prices", "where"),
    _f("horizon_days", "number", "Practical horizon without a deadline (days)", "limits",
       minimum=0.0, maximum=36_500.0, is_min_exclusive=True,
       help="blank: 365; longer options are marked impractical"),
    _f("recompute", "choice", "Activation recomputation", "layout", choices_from="recompute",
       is_layout=True),
    _f("zero_stage", "integer", "ZeRO stage", "layout", minimum=0, maximum=3, is_layout=True),
    _f("tp", "integer", "Tensor parallel (GPUs)", "layout", minimum=1, maximum=64,
       is_layout=True),
    _f("pp", "integer", "Pipeline parallel (stages)", "layout", minimum=1, maximum=128,
       is_layout=True),
    _f("precision", "choice", "Precision", "layout", choices_from="precision", is_layout=True),
    _f("dataset_gb", "number", "Data set size (GB)", "assumptions", minimum=0.0,
       maximum=1e8, is_assumption=True),
    _f("checkpoint_gb", "number", "Checkpoint size (GB)", "assumptions", minimum=0.0,
       maximum=1e7, is_assumption=True),
    _f("storage_months", "number", "Storage kept after the run (months)", "assumptions",
       minimum=0.0, maximum=120.0, is_assumption=True),
    _f("egress_gb", "number", "Network egress (GB)", "assumptions", minimum=0.0, maximum=1e8,
       is_assumption=True),
    _f("restart_overhead_hours", "number", "Spot restart overhead (hours)", "assumptions",
       minimum=0.0, maximum=168.0, is_assumption=True),
    _f("checkpoint_write_gbytes_per_s", "number", "Checkpoint write speed per node (GB/s)",
       "assumptions", minimum=0.0, maximum=1_000.0, is_min_exclusive=True,
       is_assumption=True),
    _f("spot_interruptions_pct_per_month", "bands",
       "Spot interruptions, % of instances per month (e.g. aws=15,gcp=25)", "assumptions",
       minimum=0.0, maximum=100.0, help="blank: the Spot Advisor band defaults"),
    _f("commitment_reuse_fraction", "number",
       "Share of a 1y/3y commitment reused after this run (0-1)", "assumptions", minimum=0.0,
       maximum=1.0, is_assumption=True),
)
FIELDS_BY_NAME: dict[str, ScenarioField] = {f.name: f for f in SCENARIO_FIELDS}
ASSUMPTION_FIELDS: tuple[str, ...] = tuple(f.name for f in SCENARIO_FIELDS if f.is_assumption)
LAYOUT_FIELDS: tuple[str, ...] = tuple(f.name for f in SCENARIO_FIELDS if f.is_layout)
ARCH_FIELDS = ("n_layers", "hidden_size", "n_heads", "seq_len", "vocab_size", "ffn_hidden_size")
# Inputs accepted besides the table: the stored layout object (older plans and API clients).
EXTRA_INPUTS = ("layout",)


def fields_in_group(group: str) -> tuple[ScenarioField, ...]:
    return tuple(f for f in SCENARIO_FIELDS if f.group == group)
