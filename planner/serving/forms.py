"""The serving plan form, derived from the field table (planner.serving.core.fields)."""

from typing import Any

from django import forms

from planner.core.purchase_options import OPTIONS_BY_CODE
from planner.serving.core.fields import (
    MODEL_CHOICES,
    PRECISION_CHOICES,
    SERVING_FIELDS,
    SERVING_PURCHASE_OPTIONS,
    FieldError,
)

_CHOICES = {"model": MODEL_CHOICES, "precision": PRECISION_CHOICES}


def _form_field(field: Any) -> forms.Field:
    common = {"label": field.label, "help_text": field.help, "required": field.is_required}
    if field.kind == "choice":
        return forms.ChoiceField(choices=_CHOICES[field.name], initial=field.example, **common)
    if field.kind == "choices":
        return forms.MultipleChoiceField(
            choices=[(c, OPTIONS_BY_CODE[c].label) for c in SERVING_PURCHASE_OPTIONS],
            initial=field.example, widget=forms.CheckboxSelectMultiple, **common)
    return forms.CharField(initial=field.example, **common)


class ServingForm(forms.Form):
    """Raw values only; parse_serving_input checks them (one rule for form, API and CLI)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in SERVING_FIELDS:
            self.fields[field.name] = _form_field(field)

    def to_raw(self) -> dict[str, Any]:
        return {k: v for k, v in self.cleaned_data.items() if v not in (None, "", [])}

    def add_field_error(self, error: FieldError) -> None:
        field = error.field if error.field in self.fields else None
        self.add_error(field, str(error).split(": ", 1)[-1])
