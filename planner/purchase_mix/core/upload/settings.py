"""THE upload-settings table of the purchase mix: how a job history is read and where its
commitments are bought, once.

Django-free. The API's form fields (planner.purchase_mix.api), the `recommend_mix` command's
options and the upload and run forms' choices, labels and help (planner.purchase_mix.forms)
derive from UPLOAD_SETTINGS, like the plan's scenario fields (plans.core.fields).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.purchase_mix.core.upload.parse_checks import DUPLICATE_POLICIES
from planner.purchase_mix.core.upload.parsing import FORMATS

SETTING_KINDS = ("choice", "text", "flag")


@dataclass(frozen=True)
class UploadSetting:
    """One upload setting: `name` is the API form field and, with dashes, the command's
    option; `form_name` the web form's field when it differs (`is_on_forms` False: the web
    form asks for it another way). A choice's `choices` are (value, words) pairs; `default`
    is what a blank means."""

    name: str
    kind: str
    label: str
    help: str = ""
    default: str | bool = ""
    choices: tuple[tuple[str, str], ...] = ()
    form_name: str = ""
    is_on_forms: bool = True

    def __post_init__(self) -> None:
        if self.kind not in SETTING_KINDS:
            raise ValueError(f"{self.name}: unknown kind {self.kind!r}")
        if self.choices and self.default not in self.values:
            raise ValueError(f"{self.name}: default {self.default!r} is not a choice")

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(value for value, _ in self.choices)

    @property
    def field_name(self) -> str:
        return self.form_name or self.name


FORMAT_WORDS: dict[str, str] = {
    "generic": "Generic CSV (job_id, start, end, gpu_type, gpu_count, …)",
    "slurm": "Slurm sacct --parsable2",
    "usage": "Usage series (timestamp, gpu_type, gpus_in_use)",
    "mapped": "Any CSV with a column mapping",
}
DUPLICATE_WORDS: dict[str, str] = {
    "refuse": "refuse the file (list the repeated lines)",
    "merge": "merge them into one job (earliest start, latest end, most GPUs)",
}
UPLOAD_SETTINGS: tuple[UploadSetting, ...] = (
    UploadSetting("format", "choice", "Format", default=FORMATS[0], form_name="fmt",
                  choices=tuple((f, FORMAT_WORDS[f]) for f in FORMATS)),
    # The web form maps each field with its own menu of the file's columns.
    UploadSetting("map", "text", "Column mapping", "FIELD=COLUMN,... (implies mapped)",
                  is_on_forms=False),
    UploadSetting("time_unit", "choice", "Time unit", "Unit of numeric offsets and durations.",
                  "s", (("s", "seconds"), ("min", "minutes"), ("h", "hours"))),
    UploadSetting("origin", "text", "Origin",
                  "Needed when start/end are numbers: the timestamp they count from (numbers "
                  "without an origin are refused)."),
    UploadSetting("gpu_type", "text", "Default GPU type",
                  "For rows (or whole traces) that name no GPU type, e.g. V100 or a100-80gb.",
                  form_name="default_gpu_type"),
    UploadSetting("skip_bad_rows", "flag", "Skip bad rows",
                  "Store the good rows and drop the bad ones (they are counted).", False),
    UploadSetting("duplicate_ids", "choice", "Repeated job ids",
                  "Repeated job ids: refuse the file, or merge them into one job.",
                  DUPLICATE_POLICIES[0],
                  tuple((p, DUPLICATE_WORDS[p]) for p in DUPLICATE_POLICIES)),
    UploadSetting("provider", "text", "You buy in (provider)",
                  "Blank: the cheapest place that sells commitments."),
    UploadSetting("region", "text", "Region", "Blank: any region."),
    UploadSetting("growth", "text", "Growth scenarios",
                  "Demand growth or decline, % per year, comma-separated; commitments are "
                  "sized so the worst 10% of outcomes stay positive in every scenario.",
                  "-50,-25,0,25"),
    UploadSetting("spot_alternative", "flag", "Spot counts as an alternative",
                  "Never commit above spot's rate with its interruption overhead.", False,
                  form_name="is_spot_alternative"),
    UploadSetting("elsewhere_alternative", "flag", "Compare with on-demand elsewhere",
                  "Off (the default): commitments are compared with on-demand of the same "
                  "provider, region and instance type; a cheaper equivalent elsewhere is shown "
                  "beside.", False, form_name="is_elsewhere_alternative"),
)
SETTINGS_BY_NAME: dict[str, UploadSetting] = {s.name: s for s in UPLOAD_SETTINGS}
