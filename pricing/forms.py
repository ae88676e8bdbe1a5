"""GET filter forms for the catalog, compare and price pages."""

from typing import Any

from django import forms

from pricing import explorer, selectors
from pricing.models import PurchaseOption

PRECISION_CHOICES = [("", "BF16, else FP16")] + [
    (key, f"{key.upper()} ({selectors.precision_unit(key)})") for key in selectors.PRECISION_FIELDS
]
DEFAULT_SORT = "vendor"
SORT_CHOICES = [(key, key) for key in selectors.SORT_KEYS] + [
    (f"-{key}", f"-{key}") for key in selectors.SORT_KEYS
]
MIN_COMPARE, MAX_COMPARE = 2, 4


class CatalogFilterForm(forms.Form):
    vendor = forms.ChoiceField(required=False)
    min_memory_gb = forms.FloatField(
        required=False, min_value=0, label="Min memory (GB)",
        widget=forms.NumberInput(attrs={"step": "any", "placeholder": "e.g. 40"}),
    )
    precision = forms.ChoiceField(required=False, choices=PRECISION_CHOICES)
    sort = forms.ChoiceField(required=False, choices=SORT_CHOICES, widget=forms.HiddenInput)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        vendor_field = self.fields["vendor"]
        assert isinstance(vendor_field, forms.ChoiceField)
        vendor_field.choices = [("", "Any")] + [(v, v) for v in selectors.vendor_choices()]

    def filters(self) -> dict[str, Any]:
        """The valid filters with defaults; an invalid field is ignored (its error is shown)."""
        self.is_valid()
        data = self.cleaned_data
        return {
            "vendor": data.get("vendor") or "",
            "min_memory_gb": data.get("min_memory_gb"),
            "precision": data.get("precision") or "",
            "sort": data.get("sort") or DEFAULT_SORT,
        }


class CompareForm(forms.Form):
    gpu = forms.MultipleChoiceField(label="GPUs")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        gpu_field = self.fields["gpu"]
        assert isinstance(gpu_field, forms.MultipleChoiceField)
        gpu_field.choices = [(g.slug, g.name) for g in selectors.accelerator_list()]

    def clean_gpu(self) -> list[str]:
        slugs = list(dict.fromkeys(self.cleaned_data["gpu"]))
        if not MIN_COMPARE <= len(slugs) <= MAX_COMPARE:
            raise forms.ValidationError(
                f"Pick {MIN_COMPARE} to {MAX_COMPARE} different GPUs to compare "
                f"(got {len(slugs)})."
            )
        return slugs


class PriceFilterForm(forms.Form):
    gpu = forms.ChoiceField(required=False, label="GPU")
    provider = forms.ChoiceField(required=False)
    region = forms.ChoiceField(required=False)
    purchase_option = forms.ChoiceField(
        required=False, choices=[("", "Any")] + list(PurchaseOption.choices)
    )
    include_history = forms.BooleanField(required=False, label="Show history")
    per_page = forms.TypedChoiceField(
        required=False, label="Rows per page", coerce=int, empty_value=explorer.DEFAULT_PAGE_SIZE,
        choices=[(n, str(n)) for n in explorer.PAGE_SIZES])
    sort = forms.ChoiceField(required=False, choices=[(k, k) for k in sorted(explorer.SORTS)],
                             widget=forms.HiddenInput)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The region list holds the chosen provider's regions only (grouped by provider else).
        provider = str((self.data or {}).get("provider") or "")
        self.regions_by_provider = selectors.regions_by_provider()
        choices_by_field = selectors.filter_choices(
            provider=provider, regions=self.regions_by_provider)
        for name, choices in choices_by_field.items():
            field = self.fields[name]
            assert isinstance(field, forms.ChoiceField)
            field.choices = [("", "Any")] + choices
        region = self.fields["region"]
        region.error_messages["invalid_choice"] = (
            "%(value)s is not a region of the chosen provider with prices.")

    def filters(self) -> dict[str, Any]:
        """The valid filters; an invalid field is ignored (its error is shown)."""
        self.is_valid()
        data = self.cleaned_data
        keys = ["gpu", "provider", "region", "purchase_option"]
        return {key: data.get(key) or "" for key in keys} | {
            "include_history": bool(data.get("include_history")),
        }

    def sort_key(self) -> str:
        """The valid sort key (`explorer.SORTS`), $/GPU-hour ascending by default."""
        self.is_valid()
        return str(self.cleaned_data.get("sort") or explorer.DEFAULT_SORT)

    def page_size(self) -> int:
        self.is_valid()
        return int(self.cleaned_data.get("per_page") or explorer.DEFAULT_PAGE_SIZE)
