"""The simulation form: a workload, a goal, the hardware and optional layout choices."""

import hashlib
import json
from typing import Any, ClassVar

from django import forms
from django.utils import timezone

from planner.core.formatting import label, typed_number
from planner.core.layout_knobs import LAYOUT_KNOBS, LayoutKnob
from planner.core.providers import MAX_CLUSTER_NODES
from planner.widgets import LongSelect
from pricing.instance_choices import InstanceChoice, gpu_choices, instance_menu
from pricing.models import InstanceType
from simulator.core import PRESETS

# The layout knobs a form offers (planner.core.layout_knobs), in table order.
FORM_KNOBS: tuple[LayoutKnob, ...] = tuple(k for k in LAYOUT_KNOBS if k.is_on_forms)


def _bound(value: float) -> str:
    return typed_number(value)


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


def knob_field(knob: LayoutKnob) -> forms.Field:
    """The form field of a layout knob; blank lets the simulator search it."""
    if knob.kind == "flag":
        return forms.BooleanField(required=False, label=knob.label, help_text=knob.help)
    if knob.kind == "choice":
        return forms.ChoiceField(required=False, label=knob.label, help_text=knob.help,
                                 choices=[("", "search")] + [(c, label(c)) for c in knob.choices])
    return _number(knob.label, knob.unit, knob.minimum or 0, knob.maximum or 0, knob.example,
                   is_integer=True, help_text=knob.help)


class InstanceSelect(LongSelect):
    """A select whose options carry their GPU and a sentence on their price (data-gpu,
    data-note), for static/js/simulation-form.js."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.instance_choices: tuple[InstanceChoice, ...] = ()
        self._option_data: dict[str, dict[str, str]] | None = None

    def create_option(self, name: str, value: Any, label: Any, selected: Any, index: int,
                      subindex: int | None = None, attrs: dict[str, Any] | None = None
                      ) -> dict[str, Any]:
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        if self._option_data is None:  # built when first rendered (a cached page never is)
            self._option_data = {str(c.id): {"data-gpu": c.gpu, "data-note": c.note}
                                 for c in self.instance_choices}
        option["attrs"].update(self._option_data.get(str(value), {}))
        return option


def _scoped_instances(choices: list[InstanceChoice], gpu: str) -> list[Any]:
    """The instance select's choices: a chosen GPU's instance types grouped by provider
    (cheapest first in each), or only a prompt while no GPU is chosen."""
    mine = [c for c in choices if c.gpu == gpu]
    if not mine:
        return [("", "choose a GPU first")]
    groups: dict[str, list[tuple[int, str]]] = {}
    for choice in mine:
        groups.setdefault(choice.provider_label, []).append((choice.id, choice.label))
    return [("", "choose an instance type"), *groups.items()]


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
                     help_text="Leave both goals blank for throughput, memory and MFU (model FLOPs "
                     "utilisation) only.")
    samples = _number("Training samples", "samples", 1, 1e13, "5e8")
    global_batch_samples = _number("Global batch", "samples", 1, 1e7, "1024", is_integer=True)
    gpu = forms.ChoiceField(
        required=False, label="GPU", widget=LongSelect,
        help_text="Choose the GPU first: the instance types below are then only its own.",
        error_messages={"invalid_choice": "GPU: choose one from the list."},
    )
    instance_type = forms.ModelChoiceField(
        required=False,
        queryset=InstanceType.objects.select_related("provider", "accelerator"),
        label="Instance type (one configuration)",
        help_text="Grouped by provider, cheapest first; the price is the cheapest current "
                  "on-demand price in any region.",
        widget=InstanceSelect,
        error_messages={"invalid_choice": "Instance type: choose one from the list."},
    )
    nodes = _number("Nodes", "", 1, MAX_CLUSTER_NODES, "4", is_integer=True, initial=1,
                    required=True)

    GROUPS: ClassVar[tuple[tuple[str, tuple[str, ...]], ...]] = (
        ("Workload and goal", ("kind", "preset", "params_billion", "seq_len", "tokens",
                               "samples", "global_batch_samples")),
        ("Hardware", ("gpu", "instance_type", "nodes")),
        ("Parallel layout (blank: the simulator searches)", tuple(k.name for k in FORM_KNOBS)),
    )

    def __init__(self, *args: Any, choices: list[InstanceChoice] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for knob in FORM_KNOBS:
            self.fields[knob.name] = knob_field(knob)
        menu = instance_menu(today=timezone.localdate())
        self.menu_version = menu.version
        self.instance_choices = list(menu.choices) if choices is None else choices
        gpus = menu.gpus if choices is None else gpu_choices(choices)
        self.fields["gpu"].choices = [("", "choose a GPU")] + [(g.slug, g.label) for g in gpus]
        field = self.fields["instance_type"]
        field.choices = _scoped_instances(self.instance_choices, self.chosen_gpu)
        field.widget.instance_choices = tuple(self.instance_choices)

    @property
    def chosen_gpu(self) -> str:
        """The GPU the instance list is scoped to: the one submitted (or, for a form posted
        without one, its instance type's), else the initial one; "" for none."""
        if self.is_bound:
            gpu = str(self.data.get(self.add_prefix("gpu")) or "")
            if not gpu:
                instance = str(self.data.get(self.add_prefix("instance_type")) or "")
                gpu = next((c.gpu for c in self.instance_choices if str(c.id) == instance), "")
            return gpu
        return str(self.initial.get("gpu") or "")

    @property
    def instance_note(self) -> str:
        """The chosen instance type's sentence (its price's region, basis, source, date)."""
        value = (self.data.get(self.add_prefix("instance_type")) if self.is_bound
                 else self.initial.get("instance_type"))
        return next((c.note for c in self.instance_choices if str(c.id) == str(value or "")),
                    "")

    @property
    def cache_key(self) -> str:
        """What an unbound form's fields and the instance data show: its initial values, the
        day (prices turn stale) and the catalog's version (the key of their cached HTML)."""
        state = json.dumps([sorted(self.initial.items()), self.menu_version], default=str)
        return hashlib.sha256(state.encode()).hexdigest()

    def instance_data(self) -> list[dict[str, Any]]:
        """Every instance type for the script that scopes the list in the browser."""
        return [{"id": c.id, "gpu": c.gpu, "provider": c.provider_label, "label": c.label,
                 "note": c.note} for c in self.instance_choices]

    @property
    def grouped_fields(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [(legend, [self[name] for name in names]) for legend, names in self.GROUPS]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("preset") and not data.get("params_billion") and (
                "params_billion" not in self.errors):
            self.add_error("preset", "Choose a model preset, or give the custom model's "
                           "parameters (in billions, e.g. 7).")
        instance = data.get("instance_type")
        if data.get("kind") == "single" and not instance:
            self.add_error("instance_type", "Choose an instance type to simulate one "
                           "configuration (or simulate the whole catalog sweep).")
        elif instance and data.get("gpu") and instance.accelerator.slug != data["gpu"]:
            chosen = next((c.gpu_name for c in self.instance_choices if c.gpu == data["gpu"]),
                          data["gpu"])
            self.add_error("instance_type", f"Instance type: {instance.name} has "
                           f"{instance.accelerator.name} GPUs, not {chosen}; choose one of "
                           f"the {chosen} instance types (or change the GPU).")
        return data

    def to_request(self) -> dict[str, Any]:
        """The JSON request the service stores (see simulator.requests)."""
        d = self.cleaned_data
        workload = (
            {"preset": d["preset"]}
            if d["preset"]
            else {"params_billion": d["params_billion"], "seq_len": d.get("seq_len")}
        )
        # A blank knob is searched; an unticked flag is off (both left out).
        given = {k.name: d.get(k.name) for k in FORM_KNOBS}
        layout = {k: v for k, v in given.items() if v is not None and v != "" and v is not False}
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
