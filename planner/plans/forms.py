"""The scenario form, built from the scenario field table (planner.plans.core.fields).

Its GET query is the shareable state of a scenario (what-if links).
"""

from typing import Any

from django import forms

from planner.plans.core.fields import (
    GROUPS,
    PAYMENT_CHOICES,
    PRECISION_CHOICES,
    RECOMPUTE_CHOICES,
    SCENARIO_FIELDS,
    ScenarioField,
)
from pricing.models import Accelerator, Provider, PurchaseOption
from simulator.core import PRESETS


def _choices(source: str) -> list[tuple[str, str]]:
    if source == "presets":
        return [("", "custom: give parameters below")] + [(k, w.name) for k, w in PRESETS.items()]
    if source == "providers":
        return list(Provider.objects.values_list("slug", "name"))
    if source == "gpus":
        return [(a.slug, a.name) for a in Accelerator.objects.all()]
    if source == "purchase_options":
        return list(PurchaseOption.choices)
    if source == "payment_options":
        return list(PAYMENT_CHOICES)
    blank = [("", "search")]
    return blank + list(RECOMPUTE_CHOICES if source == "recompute" else PRECISION_CHOICES)


def _bounds(field: ScenarioField) -> dict[str, Any]:
    bounds: dict[str, Any] = {}
    if field.minimum is not None and not field.is_min_exclusive:
        bounds["min_value"] = field.minimum
    if field.maximum is not None and field.kind != "bands":
        bounds["max_value"] = field.maximum
    return bounds


def form_field(field: ScenarioField) -> forms.Field:
    """The Django form field of one scenario field (range checks also run in the scenario)."""
    common: dict[str, Any] = {"required": False, "label": field.label, "help_text": field.help}
    if field.kind == "number":
        return forms.FloatField(**common, **_bounds(field))
    if field.kind == "integer":
        return forms.IntegerField(**common, **_bounds(field))
    if field.kind == "flag":
        return forms.BooleanField(**common)
    if field.kind == "date":
        return forms.DateField(**common, widget=forms.DateInput(attrs={"type": "date"}))
    if field.kind == "choice":
        return forms.ChoiceField(**common, choices=_choices(field.choices_from))
    if field.kind == "choices" and field.choices_from:
        widget = (forms.SelectMultiple if field.choices_from == "gpus"
                  else forms.CheckboxSelectMultiple)
        return forms.MultipleChoiceField(
            **common, choices=_choices(field.choices_from), widget=widget)
    return forms.CharField(**common, max_length=2000 if field.kind != "text" else 200)


class PlanForm(forms.Form):
    """One form field per entry of SCENARIO_FIELDS, in table order."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in SCENARIO_FIELDS:
            self.fields[field.name] = form_field(field)
        self.fields["purchase_options"].initial = ["on_demand", "spot"]

    @property
    def grouped_fields(self) -> list[tuple[str, list[forms.BoundField]]]:
        """(legend, bound fields) per group of the table, for the template."""
        groups: list[tuple[str, list[forms.BoundField]]] = []
        for key, legend in GROUPS:
            bound = [self[f.name] for f in SCENARIO_FIELDS if f.group == key]
            groups.append((legend, bound))
        return groups

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
