"""The Capacity form: its fields are read by planner.capacity.core.inputs.capacity_inputs,
whose ValueError names the field, so the form, the API and the command refuse alike."""

from typing import Any

from django import forms

from planner.capacity.core.inputs import (
    DEFAULT_MAX_WAIT_HOURS,
    DEFAULT_TARGET_P95_WAIT_HOURS,
    OWNED_FIGURES,
    CapacityInputs,
    capacity_inputs,
)
from planner.capacity.core.jobs import DISCIPLINES, POLICIES
from planner.capacity.core.owned import LABELS as OWNED_WORDS
from planner.core.peaks import PEAK_CONCURRENT
from planner.core.purchase_options import PURCHASE_OPTION_WORDS, RESERVED_1Y, RESERVED_3Y

POLICY_WORDS = {"none": "No waiting (burst at once)", "constant": "Constant: wait up to T",
                "size_aware": "Size-aware: T × GPU-hours / mean (Starburst)"}
DISCIPLINE_WORDS = {"fifo": "FIFO: first come, first served",
                    "backfill": "Backfill (EASY): a later job starts early if it delays no "
                                "earlier one"}
POOL_PRICE_WORDS = (("cheapest", "Cheapest commitment sold"),
                    *((code, PURCHASE_OPTION_WORDS[code]) for code in (RESERVED_1Y, RESERVED_3Y)),
                    ("owned", "Owned hardware"))
# The core's messages name what was wrong in the singular where the form field is a list.
FIELD_OF_NAME = {"discipline": "disciplines", "policy": "policies"}
OWNED_LABELS = {key: f"{words} ({unit})" if unit else words
                for key, (words, unit) in OWNED_WORDS.items()}


class CapacityForm(forms.Form):
    gpu_type = forms.ChoiceField(label="GPU type")
    pool_gpus = forms.CharField(label="Pool sizes (GPUs)", required=False,
                                help_text=("N,N,...; blank: about 30 from 0 to the "
                                           f"{PEAK_CONCURRENT}"))
    disciplines = forms.MultipleChoiceField(
        label="Queue", choices=[(d, DISCIPLINE_WORDS[d]) for d in DISCIPLINES], initial=["fifo"],
        widget=forms.CheckboxSelectMultiple)
    policies = forms.MultipleChoiceField(
        label="Waiting policies", choices=[(p, POLICY_WORDS[p]) for p in POLICIES],
        initial=list(POLICIES), widget=forms.CheckboxSelectMultiple)
    max_wait_hours = forms.CharField(
        label="Wait limits T (h)", initial=",".join(f"{t:g}" for t in DEFAULT_MAX_WAIT_HOURS),
        help_text="T,T,...; inf allowed")
    target_p95_wait_hours = forms.FloatField(label="P95 wait target (h)", min_value=0,
                                             initial=DEFAULT_TARGET_P95_WAIT_HOURS)
    pool_price = forms.ChoiceField(label="Pool price", choices=POOL_PRICE_WORDS,
                                   initial="cheapest")
    is_spot_allowed = forms.BooleanField(label="Interruptible jobs burst to spot",
                                         required=False)

    def __init__(self, *args: Any, gpu_types: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["gpu_type"].choices = [(name, name) for name in gpu_types]
        for key in OWNED_FIGURES:  # blank: the GPU type's default, labelled with its source
            self.fields[f"owned_{key}"] = forms.FloatField(
                label=OWNED_LABELS[key], required=False,
                help_text="blank: the GPU type's default (its source is shown)")
        self.inputs: CapacityInputs | None = None

    def raw(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {**{key: data.get(key) for key in (
            "gpu_type", "pool_gpus", "disciplines", "policies", "max_wait_hours",
            "target_p95_wait_hours", "pool_price", "is_spot_allowed")},
            "owned": {key: data.get(f"owned_{key}") for key in OWNED_FIGURES
                      if data.get(f"owned_{key}") is not None}}

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.errors:
            try:
                self.inputs = capacity_inputs(self.raw())
            except ValueError as exc:
                self.add_field_error(str(exc))
        return data

    def add_field_error(self, message: str) -> None:
        """"pool_gpus: ..." goes beside pool_gpus, named by its label ("Pool sizes (GPUs):
        ..."); other messages on top."""
        name, _, rest = message.partition(":")
        field = FIELD_OF_NAME.get(name, name)
        if field not in self.fields and f"owned_{name}" in self.fields:
            field = f"owned_{name}"
        if field not in self.fields or not rest:
            self.add_error(None, message)
            return
        self.add_error(field, f"{self.fields[field].label}:{rest}")


def initial_from(inputs: dict[str, Any]) -> dict[str, Any]:
    """The form's initial values from a stored sweep's inputs."""
    owned = inputs.get("owned") or {}
    return {
        "gpu_type": inputs.get("gpu_type"),
        "pool_gpus": ",".join(str(n) for n in inputs.get("pool_gpus") or []),
        "disciplines": inputs.get("disciplines"), "policies": inputs.get("policies"),
        "max_wait_hours": ",".join(str(t) for t in inputs.get("max_wait_hours") or []),
        "target_p95_wait_hours": inputs.get("target_p95_wait_hours"),
        "pool_price": inputs.get("pool_price"), "is_spot_allowed": inputs.get("is_spot_allowed"),
        **{f"owned_{key}": value for key, value in owned.items()},
    }
