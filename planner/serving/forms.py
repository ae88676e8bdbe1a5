"""The serving plan form, derived from the field table (planner.serving.core.fields)."""

from typing import Any

from django import forms
from django.conf import settings

from planner.core.purchase_options import OPTIONS_BY_CODE
from planner.serving.core.fields import (
    FROM_LOG,
    MODEL_CHOICES,
    PRECISION_CHOICES,
    SERVING_FIELDS,
    SERVING_PURCHASE_OPTIONS,
    FieldError,
)

_CHOICES = {"model": MODEL_CHOICES, "precision": PRECISION_CHOICES}


def _form_field(field: Any) -> forms.Field:
    # A request log sets these: blank is allowed here and parse_serving_input says "required"
    # when there is no log.
    common = {"label": field.label, "help_text": field.help,
              "required": field.is_required and field.name not in FROM_LOG}
    if field.kind == "choice":
        return forms.ChoiceField(choices=_CHOICES[field.name], initial=field.example, **common)
    if field.kind == "choices":
        return forms.MultipleChoiceField(
            choices=[(c, OPTIONS_BY_CODE[c].label) for c in SERVING_PURCHASE_OPTIONS],
            initial=field.example, widget=forms.CheckboxSelectMultiple, **common)
    return forms.CharField(initial=field.example, **common)


LOG_HELP = ("CSV with columns timestamp (ISO 8601 or Unix seconds), input_tokens, "
            "output_tokens, one row per request, at least 24 hours: it sets the request rate "
            "(its busiest hour), the daily profile and the prompt and output lengths.")


class ServingForm(forms.Form):
    """Raw values only; parse_serving_input checks them (one rule for form, API and CLI).
    `request_log` (pages only; the API has POST /api/serving/log) is an optional upload."""

    def __init__(self, *args: Any, with_log: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in SERVING_FIELDS:
            self.fields[field.name] = _form_field(field)
        if with_log:
            self.fields["request_log"] = forms.FileField(
                label="Request log (optional)", help_text=LOG_HELP, required=False)

    def clean_request_log(self) -> Any:
        upload = self.cleaned_data.get("request_log")
        if upload is not None and upload.size > settings.UPLOAD_MAX_BYTES:
            raise forms.ValidationError(
                f"The file is {upload.size / 1024**2:,.1f} MB; the upload limit is "
                f"{settings.UPLOAD_MAX_BYTES / 1024**2:,.0f} MB.", code="too_large")
        return upload

    def to_raw(self) -> dict[str, Any]:
        return {k: v for k, v in self.cleaned_data.items()
                if v not in (None, "", []) and k != "request_log"}

    @property
    def request_log(self) -> Any:
        """The uploaded request log (an UploadedFile), or None."""
        return self.cleaned_data.get("request_log")

    def add_field_error(self, error: FieldError) -> None:
        field = error.field if error.field in self.fields else None
        self.add_error(field, str(error).split(": ", 1)[-1])
