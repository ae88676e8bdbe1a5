"""The simulation form: a workload, a goal, the hardware and optional layout choices."""

from typing import Any, ClassVar

from django import forms

from pricing.models import InstanceType
from simulator.core import PRESETS

RECOMPUTE = [("", "search"), ("none", "none"), ("selective", "selective"), ("full", "full")]
PRECISION = [
    ("", "best supported"),
    ("fp32", "fp32"),
    ("tf32", "tf32"),
    ("fp16", "fp16"),
    ("bf16", "bf16"),
    ("fp8", "fp8"),
]


def _bound(value: float) -> str:
    return f"{value:,.0f}" if value < 1e7 else f"{value:.0e}".replace("e+", "e")


def _number(label: str, unit: str, low: float, high: float, example: str, *,
            is_integer: bool = False, **extra: Any) -> forms.Field:
    """A number field whose every error is one plain sentence with the allowed range."""
    rule = (f"{label} must be a {'whole ' if is_integer else ''}number from {_bound(low)} to "
            f"{_bound(high)}{' ' + unit if unit else ''}, e.g. {example}.")
    field_class = forms.IntegerField if is_integer else forms.FloatField
    attrs = {"inputmode": "numeric" if is_integer else "decimal", "placeholder": f"e.g. {example}"}
    extra.setdefault("required", False)
    allowed = f"Allowed: {_bound(low)} to {_bound(high)}{' ' + unit if unit else ''}."
    return field_class(
        min_value=low, max_value=high, label=f"{label} ({unit})" if unit else label,
        help_text=" ".join(part for part in (extra.pop("help_text", ""), allowed) if part),
        error_messages={k: rule for k in ("invalid", "min_value", "max_value", "required")},
        widget=forms.TextInput(attrs=attrs), **extra)


class SimulationForm(forms.Form):
    kind = forms.ChoiceField(
        label="What to simulate",
        choices=[("single", "One configuration"), ("sweep", "Whole catalog sweep")],
        initial="single",
    )
    preset = forms.ChoiceField(
        required=False,
        label="Model preset",
        choices=[("", "custom (below)")] + [(k, w.name) for k, w in PRESETS.items()],
    )
    params_billion = _number("Custom model parameters", "billion", 0.001, 100_000, "7")
    seq_len = _number("Custom sequence length", "tokens", 1, 1_048_576, "4096", is_integer=True)
    tokens = _number("Training tokens", "tokens", 1, 1e16, "2e12",
                     help_text="Leave both goals blank for throughput, memory and MFU only.")
    samples = _number("Training samples", "samples", 1, 1e13, "5e8")
    global_batch_samples = _number("Global batch", "samples", 1, 1e7, "1024", is_integer=True)
    instance_type = forms.ModelChoiceField(
        required=False,
        queryset=InstanceType.objects.select_related("provider", "accelerator"),
        label="Instance type (one configuration)",
        error_messages={"invalid_choice": "Instance type: choose one from the list."},
    )
    nodes = _number("Nodes", "", 1, 512, "4", is_integer=True, initial=1, required=True)
    tp = _number("Tensor parallel", "GPUs", 1, 64, "8", is_integer=True)
    pp = _number("Pipeline parallel", "stages", 1, 128, "4", is_integer=True)
    zero_stage = forms.TypedChoiceField(
        required=False,
        coerce=int,
        empty_value=None,
        label="ZeRO stage",
        choices=[("", "search")] + [(i, i) for i in range(4)],
    )
    recompute = forms.ChoiceField(required=False, choices=RECOMPUTE,
                                  label="Activation recomputation")
    precision = forms.ChoiceField(required=False, choices=PRECISION)
    micro_batch = _number("Micro-batch", "samples per GPU", 1, 4096, "2", is_integer=True)
    tp_comm_overlap = forms.BooleanField(
        required=False, label="Overlap tensor-parallel communication",
        help_text="Megatron-Core --tp-comm-overlap or PyTorch async TP: part of the TP traffic "
                  "runs under the GEMMs (the hidden share is fitted on the published "
                  "Megatron-Core and torchtitan async-TP runs).")

    GROUPS: ClassVar[tuple[tuple[str, tuple[str, ...]], ...]] = (
        ("Workload and goal", ("kind", "preset", "params_billion", "seq_len", "tokens",
                               "samples", "global_batch_samples")),
        ("Hardware", ("instance_type", "nodes")),
        ("Parallel layout (blank: the simulator searches)",
         ("tp", "pp", "zero_stage", "recompute", "precision", "micro_batch",
          "tp_comm_overlap")),
    )

    @property
    def grouped_fields(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [(legend, [self[name] for name in names]) for legend, names in self.GROUPS]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("preset") and not data.get("params_billion") and (
                "params_billion" not in self.errors):
            self.add_error("preset", "Choose a model preset, or give the custom model's "
                           "parameters (in billions, e.g. 7).")
        if data.get("kind") == "single" and not data.get("instance_type"):
            self.add_error("instance_type", "Choose an instance type to simulate one "
                           "configuration (or simulate the whole catalog sweep).")
        return data

    def to_request(self) -> dict[str, Any]:
        """The JSON request the service stores (see simulator.requests)."""
        d = self.cleaned_data
        workload = (
            {"preset": d["preset"]}
            if d["preset"]
            else {"params_billion": d["params_billion"], "seq_len": d.get("seq_len")}
        )
        layout = {
            k: d.get(k)
            for k in ("tp", "pp", "zero_stage", "recompute", "precision", "micro_batch")
            if d.get(k) not in (None, "")
        }
        if d.get("tp_comm_overlap"):
            layout["tp_comm_overlap"] = True
        instance = d.get("instance_type")
        return {
            "workload": workload,
            "goal": {
                "tokens": d.get("tokens"),
                "samples": d.get("samples"),
                "global_batch_samples": d.get("global_batch_samples"),
            },
            "instance_type_id": instance.id if instance else None,
            "nodes": d["nodes"],
            "layout": layout,
        }
