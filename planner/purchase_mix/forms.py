"""Forms for the job-history pages: upload, recommendation settings, trend growth."""

import csv
from typing import IO, Any

from django import forms
from django.conf import settings

from planner.core.cloud import SPOT_BAND_MONTHLY_FRACTION
from planner.core.formatting import label
from planner.purchase_mix import selectors
from planner.purchase_mix.core.upload.csv_stream import read_header
from planner.purchase_mix.core.upload.parsing import (
    EXTRA_JOB_FIELDS,
    JOB_FIELDS,
    parse_column_mapping,
)
from planner.purchase_mix.core.upload.settings import SETTINGS_BY_NAME
from planner.purchase_mix.documents import parse_growth
from planner.purchase_mix.services import ParseOptions, RunOptions, UploadOutcome
from planner.purchase_mix.staging import StagedUpload
from planner.widgets import LongSelect

LOOKBACK_CHOICES = [("", "whole history"), ("7", "7 days"), ("30", "30 days"), ("60", "60 days"),
                    ("90", "90 days")]


def _mapping(text: str, what: str) -> dict[str, str]:
    try:
        return parse_column_mapping(text)
    except ValueError as error:
        raise forms.ValidationError(f"{what}: {error}") from error


MAP_FIELDS: tuple[str, ...] = (*JOB_FIELDS, *EXTRA_JOB_FIELDS, "timestamp", "gpus_in_use")
NOT_IN_FILE = ("", "(not in the file / its usual name)")


def setting_field(name: str) -> forms.Field:
    """The form field of an upload setting (core.upload.settings): its label, help, choices
    and default; any setting may be left blank, and a blank choice means its default."""
    setting = SETTINGS_BY_NAME[name]
    common: dict[str, Any] = {"label": setting.label, "help_text": setting.help,
                              "initial": setting.default}
    if setting.kind == "flag":
        return forms.BooleanField(required=False, **common)
    if setting.kind == "choice":
        return forms.TypedChoiceField(choices=setting.choices, required=False,
                                      empty_value=setting.default, **common)
    return forms.CharField(required=False, **common)


def _header_of(upload: Any) -> tuple[str, ...]:
    """The uploaded file's own column names (read from its first 64 KB), or ()."""
    if upload is None:
        return ()
    try:
        layout = read_header(upload)
    except (ValueError, UnicodeDecodeError, csv.Error):
        return ()
    finally:
        upload.seek(0)
    return layout.header


def _place_choices(provider: str = "") -> tuple[list[Any], list[Any]]:
    """Provider choices, and region choices scoped to the chosen provider (its regions only;
    grouped by provider when none is chosen, so no list mixes every provider's regions)."""
    regions = selectors.region_choices()
    slugs = sorted({slug for slug, _ in regions})
    providers: list[Any] = [("", "cheapest that sells commitments")] + [
        (s, label(s)) for s in slugs]
    if provider in slugs:
        return providers, [("", "any region")] + [(c, c) for s, c in regions if s == provider]
    groups = [(label(slug), [(c, c) for s, c in regions if s == slug]) for slug in slugs]
    return providers, [("", "any region"), *groups]


def _chosen_provider(form: forms.Form) -> str:
    """The provider of a submitted form, else of its initial values ("" for none)."""
    if form.is_bound:
        return str(form.data.get(form.add_prefix("provider")) or "")
    return str(form.initial.get("provider") or "")


class UploadForm(forms.Form):
    """The upload form. `staged` is the file kept from a refused submit (used when no new
    file is chosen) and `staged_file` its open handle."""

    file = forms.FileField(
        label="Job history file", required=False,
        help_text="CSV, TSV or pipe-separated; UTF-8, UTF-16 or Windows-1252.")
    fmt = setting_field("format")
    time_unit = setting_field("time_unit")
    origin = setting_field("origin")
    default_gpu_type = setting_field("gpu_type")
    duplicate_ids = setting_field("duplicate_ids")
    skip_bad_rows = setting_field("skip_bad_rows")
    # Provider and region choices come from the catalog (set in __init__).
    provider = forms.ChoiceField(label=SETTINGS_BY_NAME["provider"].label, required=False)
    region = forms.ChoiceField(label=SETTINGS_BY_NAME["region"].label, required=False,
                               widget=LongSelect)

    def __init__(self, *args: Any, staged: StagedUpload | None = None,
                 staged_file: IO[bytes] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.staged, self.staged_file = staged, staged_file
        self.header = _header_of(self.files.get("file") or staged_file)
        columns = [NOT_IN_FILE] + [(name, name) for name in self.header]
        for name in MAP_FIELDS:
            self.fields[f"map_{name}"] = forms.ChoiceField(
                label=name, choices=columns, required=False, error_messages={
                    "invalid_choice": "The file has no column %(value)s; pick one of its "
                    "columns (or leave it blank when the column has the usual name)."},
            )
        providers, regions = _place_choices(_chosen_provider(self))
        self.fields["provider"].choices = providers
        self.fields["region"].choices = regions
        self.fields["region"].widget.attrs["data-follows"] = self["provider"].auto_id
        self.fields["region"].error_messages["invalid_choice"] = (
            "%(value)s is not a region of the chosen provider with prices.")

    @property
    def map_fields(self) -> list[forms.BoundField]:
        return [self[f"map_{name}"] for name in MAP_FIELDS]

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        if upload is None:
            if self.staged_file is None:
                raise forms.ValidationError("Choose a job history file to upload (CSV, TSV or "
                                            "pipe-separated).", code="required")
            return None
        if upload.size > settings.UPLOAD_MAX_BYTES:
            limit_mb = settings.UPLOAD_MAX_BYTES / 1024**2
            raise forms.ValidationError(
                f"The file is {upload.size / 1024**2:,.1f} MB; the limit is {limit_mb:,.0f} MB.",
                code="too_large",
            )
        return upload

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        mapping = {name: data[f"map_{name}"] for name in MAP_FIELDS if data.get(f"map_{name}")}
        data["column_map"] = mapping
        if mapping and data.get("fmt") == "generic":
            data["fmt"] = "mapped"
        if data.get("fmt") == "mapped" and not mapping:
            self.add_error(None, "The mapped format needs at least one column picked.")
        return data

    @property
    def is_too_large(self) -> bool:
        return self.has_error("file", "too_large")

    def chosen_file(self) -> tuple[Any, str, int]:
        """(file, name, size in bytes): the newly chosen file, else the staged one."""
        upload = self.cleaned_data.get("file")
        if upload is not None:
            return upload, upload.name, upload.size
        assert self.staged is not None and self.staged_file is not None
        return self.staged_file, self.staged.name, self.staged.size_bytes

    def show_outcome(self, outcome: UploadOutcome) -> None:
        """Put a refused upload's problem beside the field that fixes it (else at the top)."""
        shown = False
        for name in outcome.missing:
            field = "default_gpu_type" if name == "gpu_type" else f"map_{name}"
            if field in self.fields:
                self.add_error(field, _missing_fix(name))
                shown = True
        setting = outcome.setting.replace("column:", "map_")
        if not outcome.missing and setting in self.fields:
            self.add_error(setting, outcome.error)
            shown = True
        if not shown:
            self.add_error(None, outcome.error)

    def parse_options(self) -> ParseOptions:
        data = self.cleaned_data
        return ParseOptions(
            fmt=data["fmt"],
            column_map=data["column_map"],
            time_unit=data["time_unit"],
            origin=data["origin"].strip(),
            default_gpu_type=data["default_gpu_type"].strip(),
            is_skipping_bad_rows=data["skip_bad_rows"],
            duplicate_ids=data["duplicate_ids"],
        )

    def run_options(self) -> RunOptions:
        return RunOptions(provider=self.cleaned_data["provider"],
                          region=self.cleaned_data["region"])


def _missing_fix(name: str) -> str:
    if name == "gpu_type":
        return ("The file has no gpu_type column. Choose a Default GPU type, or add a gpu_type "
                "column to the file.")
    also = " (or duration)" if name == "end" else ""
    return (f"The file has no {name}{also} column. Pick the column that holds it here, or "
            f"rename a column of the file to {name}.")


class RunForm(forms.Form):
    provider = forms.ChoiceField(label=SETTINGS_BY_NAME["provider"].label, required=False)
    region = forms.ChoiceField(label=SETTINGS_BY_NAME["region"].label, required=False,
                               widget=LongSelect)
    lookback_days = forms.TypedChoiceField(
        label="Size on", choices=LOOKBACK_CHOICES, required=False, coerce=int, empty_value=None
    )
    growth = setting_field("growth")
    is_spot_alternative = setting_field("spot_alternative")
    is_elsewhere_alternative = setting_field("elsewhere_alternative")
    accelerator_map = forms.CharField(
        label="GPU names", required=False,
        help_text="NAME=catalog slug pairs to override the automatic match, "
        "e.g. P100=v100-sxm2-16gb",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        providers, regions = _place_choices(_chosen_provider(self))
        self.fields["provider"].choices = providers
        self.fields["region"].choices = regions
        self.fields["region"].widget.attrs["data-follows"] = self["provider"].auto_id
        self.fields["region"].error_messages["invalid_choice"] = (
            "%(value)s is not a region of the chosen provider with prices.")
        bands = [(band, f"{band} per month") for band in SPOT_BAND_MONTHLY_FRACTION]
        for provider in selectors.spot_providers():
            self.fields[f"spot_{provider}"] = forms.ChoiceField(
                label=f"{label(provider)} spot interruptions", choices=bands, required=False,
                initial=selectors.spot_band_for(provider, {}),
            )

    def clean_growth(self) -> tuple[float, ...]:
        text = self.cleaned_data.get("growth") or "-50,-25,0,25"
        try:
            return parse_growth(text)
        except ValueError as error:
            raise forms.ValidationError(str(error)) from error

    def clean_accelerator_map(self) -> dict[str, str]:
        mapping = _mapping(self.cleaned_data.get("accelerator_map", ""), "GPU names")
        # An unknown slug was accepted and analysed as "no catalog GPU matches this name".
        slugs = {gpu.slug for gpu in selectors.catalog_gpus()}
        unknown = [slug for slug in mapping.values() if slug not in slugs]
        if unknown:
            raise forms.ValidationError(f"GPU names: {', '.join(unknown)} is not a catalog GPU "
                                        f"({', '.join(sorted(slugs))})")
        return mapping

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
            growth_scenarios=data["growth"],
            is_spot_alternative=data["is_spot_alternative"],
            is_elsewhere_alternative=data["is_elsewhere_alternative"],
        )


def run_initial(options: RunOptions) -> dict[str, Any]:
    initial: dict[str, Any] = {
        "provider": options.provider,
        "region": options.region,
        "lookback_days": options.lookback_days or "",
        "accelerator_map": ",".join(f"{k}={v}" for k, v in options.accelerator_map.items()),
        "growth": ", ".join(
            f"{100 * g:g}" for g in options.risk_settings.growth_scenarios_per_year
        ),
        "is_spot_alternative": options.is_spot_alternative,
        "is_elsewhere_alternative": options.is_elsewhere_alternative,
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
