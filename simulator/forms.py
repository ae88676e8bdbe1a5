"""The simulation form: a workload, a goal, the hardware and optional layout choices."""

from typing import Any

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


class SimulationForm(forms.Form):
    kind = forms.ChoiceField(
        choices=[("single", "One configuration"), ("sweep", "Whole catalog sweep")],
        initial="single",
    )
    preset = forms.ChoiceField(
        required=False,
        label="Workload preset",
        choices=[("", "custom (below)")] + [(k, w.name) for k, w in PRESETS.items()],
    )
    params_billion = forms.FloatField(
        required=False, min_value=0.001, label="Custom: parameters (billions)"
    )
    seq_len = forms.IntegerField(required=False, min_value=1, label="Custom: sequence (tokens)")
    tokens = forms.FloatField(
        required=False, min_value=1, label="Goal: tokens",
        help_text="blank tokens and samples: throughput, memory and MFU only (no time)",
    )
    samples = forms.FloatField(required=False, min_value=1, label="Goal: samples")
    global_batch_samples = forms.IntegerField(
        required=False, min_value=1, label="Global batch (samples)"
    )
    instance_type = forms.ModelChoiceField(
        required=False,
        queryset=InstanceType.objects.select_related("provider", "accelerator"),
        label="Instance type (single configuration)",
    )
    nodes = forms.IntegerField(min_value=1, max_value=512, initial=1, label="Nodes (count)")
    tp = forms.IntegerField(required=False, min_value=1, label="Tensor parallel")
    pp = forms.IntegerField(required=False, min_value=1, label="Pipeline parallel")
    zero_stage = forms.TypedChoiceField(
        required=False,
        coerce=int,
        empty_value=None,
        choices=[("", "search")] + [(i, i) for i in range(4)],
    )
    recompute = forms.ChoiceField(required=False, choices=RECOMPUTE)
    precision = forms.ChoiceField(required=False, choices=PRECISION)
    micro_batch = forms.IntegerField(required=False, min_value=1)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("preset") and not data.get("params_billion"):
            self.add_error("preset", "Choose a preset or give the custom model's parameters.")
        if data.get("kind") == "single" and not data.get("instance_type"):
            self.add_error("instance_type", "Choose an instance type for one configuration.")
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
