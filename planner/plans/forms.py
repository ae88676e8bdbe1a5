"""The scenario form, built from the scenario field table (planner.plans.core.fields).

Its GET query is the shareable state of a scenario (what-if links). Every message comes from
the table's plain-words rule, so the form, the API and the command refuse the same values in
the same words.
"""

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

from django import forms

from planner.core.formatting import label, parse_amount
from planner.core.layout_knobs import KNOBS_BY_NAME
from planner.core.purchase_options import COMMITMENT_PAYMENTS, PURCHASE_OPTION_LABELS
from planner.plans.core.carbon import ACCOUNTING_CHOICES
from planner.plans.core.fields import (
    FOLDED_GROUPS,
    GROUPS,
    SCENARIO_FIELDS,
    ScenarioField,
    split_field_message,
)
from planner.plans.scenario import DEFAULT_PURCHASE, preset_architecture
from pricing.models import Accelerator, Provider
from pricing.selectors import catalog_version
from simulator.core import PRESETS
from simulator.core.goodput import GOODPUT_PROFILES


def _choices(source: str) -> list[tuple[str, str]]:
    if source == "presets":
        return [("", "custom: give parameters below")] + [(k, w.name) for k, w in PRESETS.items()]
    if source == "providers":
        return list(Provider.objects.values_list("slug", "name"))
    if source == "gpus":
        gpus = Accelerator.objects.values_list("slug", "model", "variant")
        return [(slug, f"{model} {variant}") for slug, model, variant in gpus]  # Accelerator.name
    if source == "purchase_options":
        return list(PURCHASE_OPTION_LABELS.items())
    if source == "payment_options":
        return list(COMMITMENT_PAYMENTS)
    if source == "carbon_accounting":
        return [("", "location-based")] + list(ACCOUNTING_CHOICES)
    if source == "goodput_profiles":
        return [("", "typical (fitted)")] + [(p.code, p.label) for p in GOODPUT_PROFILES.values()]
    return [("", "search")] + [(c, label(c)) for c in KNOBS_BY_NAME[source].choices]


def form_version(inputs: dict[str, Any]) -> str:
    """A token that changes with what a plan's form shows: its inputs and the catalog's
    choices (providers, GPUs, via the catalog version); the key of the cached form."""
    state = json.dumps([inputs, catalog_version()], sort_keys=True, default=str)
    return hashlib.sha256(state.encode()).hexdigest()


def number_value(value: Any) -> Any:
    """A stored number as a person types it: 2e+12 (not 2000000000000.0), 128 (not 128.0)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e6:
        return str(int(value))
    if isinstance(value, float):
        short = f"{value:g}"
        return short if float(short) == value else repr(value)
    return value


class NumberInput(forms.TextInput):
    """A text box for numbers: people can type 2e12 and see their own text in a message
    (a browser's number box silently drops text it cannot read)."""

    def format_value(self, value: Any) -> str | None:
        return super().format_value(number_value(value))


class ScenarioNumberField(forms.Field):
    """A number checked against its scenario field's range, with the table's message."""

    def __init__(self, scenario_field: ScenarioField, **kwargs: Any) -> None:
        self.scenario_field = scenario_field
        mode = "numeric" if scenario_field.kind == "integer" else "decimal"
        attrs = {"inputmode": mode, "autocomplete": "off"}
        if scenario_field.example:
            attrs["placeholder"] = f"e.g. {scenario_field.example}"
        super().__init__(widget=NumberInput(attrs=attrs), **kwargs)

    def to_python(self, value: Any) -> float | int | None:
        if value in self.empty_values:
            return None
        field = self.scenario_field
        text = str(value).strip().replace(",", "").replace("_", "").replace(" ", "")
        try:
            number = parse_amount(text)  # "2T", "500B" and "1.5e12" alike
        except ValueError:
            raise forms.ValidationError(
                f"{field.rule_text[:-1]} (you gave {text[:40]!r}).", code="invalid") from None
        if not math.isfinite(number):
            raise forms.ValidationError(f"{field.rule_text[:-1]} (you gave {text[:40]!r}).")
        try:
            field.check_number(number)
        except ValueError as exc:
            raise forms.ValidationError(split_field_message(str(exc))[1], code="range") from None
        if field.kind == "integer":
            if not number.is_integer():
                raise forms.ValidationError(f"{field.rule_text[:-1]}: a whole number.")
            return int(number)
        return number


def _help(field: ScenarioField) -> str:
    rule = field.range_text
    allowed = f"Allowed: {rule}." if rule and field.kind in ("number", "integer") else ""
    return " ".join(part for part in (field.help, allowed) if part)


def form_field(field: ScenarioField) -> forms.Field:
    """The Django form field of one scenario field (range checks also run in the scenario)."""
    common: dict[str, Any] = {
        "required": False, "label": field.label_with_unit, "help_text": _help(field)}
    if field.kind in ("number", "integer"):
        return ScenarioNumberField(field, **common)
    if field.kind == "flag":
        return forms.BooleanField(**common)
    invalid = {"invalid_choice": f"{field.label}: choose one of the listed options.",
               "invalid": f"{field.label} must be a date such as 2027-06-30."}
    if field.kind == "date":
        return forms.DateField(**common, error_messages=invalid,
                               widget=forms.DateInput(attrs={"type": "date"}))
    if field.kind == "choice":
        return forms.ChoiceField(**common, choices=_choices(field.choices_from),
                                 error_messages=invalid)
    if field.kind == "choices" and field.choices_from:
        widget = (forms.SelectMultiple if field.choices_from == "gpus"
                  else forms.CheckboxSelectMultiple)
        return forms.MultipleChoiceField(
            **common, choices=_choices(field.choices_from), widget=widget, error_messages=invalid)
    attrs = {"placeholder": f"e.g. {field.example}"} if field.example else {}
    return forms.CharField(**common, max_length=2000 if field.kind != "text" else 200,
                           widget=forms.TextInput(attrs=attrs))


PRESET_ORDER = ("n_layers", "hidden_size", "n_heads", "ffn_hidden_size", "vocab_size", "seq_len")


def preset_summary(key: str) -> str:
    """"Llama 2 7B: 6.74 billion parameters, 32 layers, ..." (the page script writes the same)."""
    shape = preset_architecture(key)
    words = {"n_layers": "layers", "hidden_size": "hidden size", "n_heads": "attention heads",
             "ffn_hidden_size": "FFN size", "vocab_size": "vocabulary tokens",
             "seq_len": "tokens per sequence"}
    parts = [f"{shape['params_billion']:g} billion parameters"] + [
        f"{shape[k]:,} {words[k]}" if k != "hidden_size" else f"hidden size {shape[k]:,}"
        for k in PRESET_ORDER if k in shape]
    return f"{PRESETS[key].name}: {', '.join(parts)}."


@dataclass(frozen=True)
class FieldGroup:
    key: str
    legend: str
    fields: list[forms.BoundField]
    is_folded: bool
    opens_fold: bool = False  # the first folded group starts the "Assumptions" disclosure
    closes_fold: bool = False


class PlanForm(forms.Form):
    """One form field per entry of SCENARIO_FIELDS, in table order."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        for field in SCENARIO_FIELDS:
            self.fields[field.name] = form_field(field)
        self.fields["purchase_options"].initial = list(DEFAULT_PURCHASE)
        preset = str(self.initial.get("workload") or "")
        if not self.is_bound and preset in PRESETS:
            # The preset's architecture is shown in its editable fields, also without JS.
            shape = preset_architecture(preset)
            self.initial = shape | {k: v for k, v in self.initial.items() if v not in ("", None)}

    @property
    def grouped_fields(self) -> list[FieldGroup]:
        """The groups of the table with their bound fields, for the template."""
        return [FieldGroup(key, legend, [self[f.name] for f in SCENARIO_FIELDS if f.group == key],
                           key in FOLDED_GROUPS, opens_fold=key == FOLDED_GROUPS[0],
                           closes_fold=key == FOLDED_GROUPS[-1]) for key, legend in GROUPS]

    @property
    def has_folded_errors(self) -> bool:
        names = {f.name for f in SCENARIO_FIELDS if f.group in FOLDED_GROUPS}
        return any(name in self.errors for name in names)

    @property
    def preset_architectures(self) -> dict[str, dict[str, Any]]:
        """Per preset, its name and the fields it fills (the page script reads this)."""
        return {key: {"name": w.name, "fields": preset_architecture(key)}
                for key, w in PRESETS.items()}

    @property
    def preset_summary(self) -> str:
        """The chosen preset's architecture in words ("" for a custom model)."""
        key = str(self["workload"].value() or "")
        return preset_summary(key) if key in PRESETS else ""

    def add_scenario_error(self, exc: ValueError) -> None:
        """Show a scenario's ValueError beside the field it names (at the top otherwise)."""
        name, message = split_field_message(str(exc))
        self.add_error(name if name in self.fields else None, message)

    def to_raw(self) -> dict[str, Any]:
        """The scenario input dict (planner.plans.scenario) from the cleaned form."""
        data = {k: v for k, v in self.cleaned_data.items() if v not in (None, "", [])}
        if "deadline" in data:
            data["deadline"] = data["deadline"].isoformat()
        return data


def initial_from_scenario(inputs: dict[str, Any]) -> dict[str, Any]:
    """Form initial values from a stored scenario (lists stay lists, regions joined)."""
    initial = {k: v for k, v in inputs.items() if k != "layout"}
    initial.update(inputs.get("layout", {}))
    if inputs.get("regions"):
        initial["regions"] = ",".join(inputs["regions"])
    bands = inputs.get("spot_interruptions_pct_per_month") or {}
    if bands:
        initial["spot_interruptions_pct_per_month"] = ",".join(
            f"{k}={v:g}" for k, v in bands.items()
        )
    return initial
