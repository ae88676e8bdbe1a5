"""The scenario form. Its GET query is the shareable state of a scenario (what-if links)."""

from typing import Any

from django import forms

from pricing.models import Accelerator, Provider, PurchaseOption
from simulator.core import PRESETS

RECOMPUTE = [("", "search"), ("none", "none"), ("selective", "selective"), ("full", "full")]


class PlanForm(forms.Form):
    name = forms.CharField(required=False, max_length=200)
    workload = forms.ChoiceField(
        required=False,
        label="Workload preset",
        choices=[("", "custom: give parameters below")] + [(k, w.name) for k, w in PRESETS.items()],
    )
    params_billion = forms.FloatField(
        required=False, min_value=0.001, label="Custom model: parameters (billions)"
    )
    seq_len = forms.IntegerField(
        required=False, min_value=1, label="Custom model: sequence length (tokens)"
    )
    n_layers = forms.IntegerField(required=False, min_value=1, label="Custom architecture: layers")
    hidden_size = forms.IntegerField(required=False, min_value=1, label="Hidden size")
    n_heads = forms.IntegerField(required=False, min_value=1, label="Attention heads")
    ffn_hidden_size = forms.IntegerField(required=False, min_value=1, label="FFN size")
    vocab_size = forms.IntegerField(required=False, min_value=1, label="Vocabulary (tokens)")
    tokens = forms.FloatField(required=False, label="Goal: tokens (e.g. 1e12)")
    samples = forms.FloatField(required=False, label="Goal: samples")
    epochs = forms.FloatField(required=False, label="Goal: epochs")
    dataset_samples = forms.FloatField(required=False, label="Dataset size (samples)")
    deadline = forms.DateField(
        required=False,
        label="Deadline (YYYY-MM-DD)",
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    deadline_days = forms.FloatField(required=False, label="…or deadline in days from today")
    budget_usd = forms.FloatField(required=False, label="Budget (USD)")
    providers = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    regions = forms.CharField(required=False, label="Regions (comma-separated codes; blank: all)")
    gpus = forms.MultipleChoiceField(required=False, label="GPU models (blank: all)")
    purchase_options = forms.MultipleChoiceField(
        required=False,
        choices=PurchaseOption.choices,
        widget=forms.CheckboxSelectMultiple,
        initial=["on_demand", "spot"],
    )
    dataset_gb = forms.FloatField(required=False, min_value=0, label="Data set size (GB)")
    checkpoint_gb = forms.FloatField(required=False, min_value=0, label="Checkpoint size (GB)")
    storage_months = forms.FloatField(required=False, min_value=0, label="Storage (months)")
    egress_gb = forms.FloatField(required=False, min_value=0, label="Network egress (GB)")
    restart_overhead_hours = forms.FloatField(
        required=False, min_value=0, label="Spot restart overhead (h)"
    )
    spot_interruptions_pct_per_month = forms.CharField(
        required=False,
        label="Spot interruptions, % of instances per month (e.g. aws=15,gcp=25;"
        " blank: Spot Advisor band defaults)",
    )
    commitment_reuse_fraction = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        label="Share of a 1y/3y commitment reused after this run (0-1)",
    )
    max_nodes = forms.IntegerField(
        required=False, min_value=1, max_value=512, label="Largest cluster (nodes)"
    )
    recompute = forms.ChoiceField(
        required=False, choices=RECOMPUTE, label="Activation recomputation"
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["providers"].choices = list(Provider.objects.values_list("slug", "name"))
        self.fields["gpus"].choices = [(a.slug, a.name) for a in Accelerator.objects.all()]

    def to_raw(self) -> dict[str, Any]:
        """The scenario input dict (planner.plans.scenario) from the cleaned form."""
        data = {k: v for k, v in self.cleaned_data.items() if v not in (None, "", [])}
        if "deadline" in data:
            data["deadline"] = data["deadline"].isoformat()
        return data


def initial_from_scenario(inputs: dict[str, Any]) -> dict[str, Any]:
    """Form initial values from a stored scenario (lists stay lists, regions joined)."""
    initial = dict(inputs)
    initial.update(inputs.get("layout", {}))
    if inputs.get("regions"):
        initial["regions"] = ",".join(inputs["regions"])
    bands = inputs.get("spot_interruptions_pct_per_month") or {}
    if bands:
        initial["spot_interruptions_pct_per_month"] = ",".join(
            f"{k}={v:g}" for k, v in bands.items()
        )
    return initial
