"""The storage what-if form: the fleet as text lines and the policies' settings."""

from typing import Any

from django import forms

from planner.core.formatting import label
from planner.storage.core.inputs import NUMBER_FIELDS, PROVIDERS


class StorageWhatIfForm(forms.Form):
    models = forms.CharField(
        label="Models (name, checkpoint GB, checkpoints per day; one a line)",
        widget=forms.Textarea(attrs={"rows": 5, "cols": 50}), max_length=20_000)
    providers = forms.MultipleChoiceField(
        label="Providers", required=False, widget=forms.CheckboxSelectMultiple,
        choices=[(p, label(p)) for p in PROVIDERS])

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, (text, unit, default, is_whole) in NUMBER_FIELDS.items():
            field_class = forms.IntegerField if is_whole else forms.FloatField
            self.fields[name] = field_class(
                label=f"{text} ({unit})" if unit else text, required=False,
                help_text=f"Blank: {default:g}.")
