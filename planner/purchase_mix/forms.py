"""Forms for the job-history pages: upload, recommendation settings, trend growth."""

from typing import Any

from django import forms
from django.conf import settings

from planner.purchase_mix import selectors
from planner.purchase_mix.core.upload.parsing import parse_column_mapping
from planner.purchase_mix.models import History
from planner.purchase_mix.services import ParseOptions, RunOptions

TIME_UNITS = [("", "seconds (default)"), ("s", "seconds"), ("min", "minutes"), ("h", "hours")]
LOOKBACK_CHOICES = [("", "whole history"), ("7", "7 days"), ("30", "30 days"), ("60", "60 days"),
                    ("90", "90 days")]


def _mapping(text: str, what: str) -> dict[str, str]:
    try:
        return parse_column_mapping(text)
    except ValueError as error:
        raise forms.ValidationError(f"{what}: {error}") from error


class UploadForm(forms.Form):
    file = forms.FileField(help_text="CSV, TSV or pipe-separated; UTF-8, UTF-16 or Windows-1252.")
    fmt = forms.ChoiceField(label="Format", choices=History.Format.choices, initial="generic")
    column_map = forms.CharField(
        label="Column mapping",
        required=False,
        help_text="FIELD=COLUMN pairs, e.g. start=submit_time,duration=duration,gpu_count=num_gpu",
    )
    time_unit = forms.ChoiceField(choices=TIME_UNITS, required=False,
                                  help_text="Unit of numeric offsets and durations.")
    origin = forms.CharField(
        required=False, help_text="Set when start/end are numbers: the timestamp they count from."
    )
    default_gpu_type = forms.CharField(
        label="Default GPU type", required=False,
        help_text="For rows (or whole traces) that name no GPU type, e.g. V100 or a100-80gb.",
    )
    skip_bad_rows = forms.BooleanField(
        required=False, help_text="Store the good rows and drop the bad ones (they are counted)."
    )

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        if upload.size > settings.UPLOAD_MAX_BYTES:
            limit_mb = settings.UPLOAD_MAX_BYTES / 1024**2
            raise forms.ValidationError(
                f"The file is {upload.size / 1024**2:,.1f} MB; the limit is {limit_mb:,.0f} MB.",
                code="too_large",
            )
        return upload

    def clean_column_map(self) -> dict[str, str]:
        return _mapping(self.cleaned_data.get("column_map", ""), "column mapping")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("column_map") and data.get("fmt") == "generic":
            data["fmt"] = "mapped"
        if data.get("fmt") == "mapped" and not data.get("column_map"):
            self.add_error("column_map", "The mapped format needs a column mapping.")
        return data

    @property
    def is_too_large(self) -> bool:
        return self.has_error("file", "too_large")

    def parse_options(self) -> ParseOptions:
        data = self.cleaned_data
        return ParseOptions(
            fmt=data["fmt"],
            column_map=data["column_map"],
            time_unit=data["time_unit"],
            origin=data["origin"].strip(),
            default_gpu_type=data["default_gpu_type"].strip(),
            is_skipping_bad_rows=data["skip_bad_rows"],
        )


class RunForm(forms.Form):
    provider = forms.ChoiceField(required=False)
    region = forms.ChoiceField(required=False)
    lookback_days = forms.TypedChoiceField(
        label="Size on", choices=LOOKBACK_CHOICES, required=False, coerce=int, empty_value=None
    )
    accelerator_map = forms.CharField(
        label="GPU names", required=False,
        help_text="NAME=catalog slug pairs to override the automatic match, "
        "e.g. P100=v100-sxm2-16gb",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        regions = selectors.region_choices()
        providers = sorted({provider for provider, _ in regions})
        self.fields["provider"].choices = [("", "cheapest where offered")] + [
            (slug, slug) for slug in providers
        ]
        self.fields["region"].choices = [("", "any region")] + sorted(
            {(code, code) for _, code in regions}
        )
        bands = [(band, f"{band} per month") for band in selectors.SPOT_BANDS]
        for provider in selectors.spot_providers():
            self.fields[f"spot_{provider}"] = forms.ChoiceField(
                label=f"{provider} spot interruptions", choices=bands, required=False,
                initial=selectors.spot_band_for(provider, {}),
            )

    def clean_accelerator_map(self) -> dict[str, str]:
        return _mapping(self.cleaned_data.get("accelerator_map", ""), "GPU names")

    @property
    def spot_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in self.fields if name.startswith("spot_")]

    def run_options(self) -> RunOptions:
        data = self.cleaned_data
        bands = {
            name[5:]: value for name, value in data.items() if name.startswith("spot_") and value
        }
        return RunOptions(
            provider=data["provider"],
            region=data["region"],
            lookback_days=data["lookback_days"],
            spot_bands=bands,
            accelerator_map=data["accelerator_map"],
        )


def run_initial(options: RunOptions) -> dict[str, Any]:
    initial: dict[str, Any] = {
        "provider": options.provider,
        "region": options.region,
        "lookback_days": options.lookback_days or "",
        "accelerator_map": ",".join(f"{k}={v}" for k, v in options.accelerator_map.items()),
    }
    initial.update({f"spot_{k}": v for k, v in options.spot_bands.items()})
    return initial


class GrowthForm(forms.Form):
    growth = forms.FloatField(
        label="Growth", required=False, min_value=-99, max_value=1000,
        help_text="% per year; blank continues the fitted trend line.",
    )

    def growth_per_year(self) -> float | None:
        if not self.is_valid() or self.cleaned_data["growth"] is None:
            return None
        return float(self.cleaned_data["growth"]) / 100.0
