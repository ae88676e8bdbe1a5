"""Job-history API: upload a file (multipart), then poll its analysis and recommendation.

Auth: a logged-in session (with the CSRF token) or HTTP basic, so curl works:
    curl -u me:secret -F file=@jobs.csv -F format=generic http://host/api/histories
Histories are private: another user's id answers 404.
"""

from typing import Any, Literal

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from ninja import File, Form, Router, Schema
from ninja.errors import HttpError
from ninja.files import UploadedFile
from ninja.responses import Status

from planner.fair_shares import download_check
from planner.purchase_mix import reports as mix_reports
from planner.purchase_mix import selectors, services
from planner.purchase_mix.core.upload.parsing import parse_column_mapping
from planner.purchase_mix.core.upload.settings import SETTINGS_BY_NAME, UPLOAD_SETTINGS
from planner.purchase_mix.documents import parse_growth
from planner.reports.api import api_report_download

router = Router(tags=["purchase mix"])
# The upload's form fields: names, choices and defaults from the upload-settings table.
_D: dict[str, Any] = {s.name: s.default for s in UPLOAD_SETTINGS}
FormatName = Literal[SETTINGS_BY_NAME["format"].values]  # type: ignore[valid-type]
TimeUnit = Literal[SETTINGS_BY_NAME["time_unit"].values]  # type: ignore[valid-type]
DuplicatePolicy = Literal[SETTINGS_BY_NAME["duplicate_ids"].values]  # type: ignore[valid-type]


class RowErrorOut(Schema):
    line: int
    field: str
    message: str


class UploadErrorOut(Schema):
    detail: str
    errors: list[RowErrorOut] = []
    error_count: int = 0
    rows_read: int = 0


class CreatedOut(Schema):
    id: int
    run_id: int
    status: str
    status_url: str
    records: int
    rows_read: int
    rows_skipped: int


def _owner_id(request: HttpRequest) -> int:
    user = getattr(request, "auth", None) or request.user
    assert user.pk is not None
    return int(user.pk)


def _options(**fields: Any) -> services.ParseOptions:
    mapping = parse_column_mapping(fields["map"] or "")
    fmt = "mapped" if mapping and fields["format"] == "generic" else fields["format"]
    return services.ParseOptions(
        fmt=fmt,
        column_map=mapping,
        time_unit=fields["time_unit"] or "",
        origin=fields["origin"] or "",
        default_gpu_type=fields["gpu_type"] or "",
        is_skipping_bad_rows=fields["skip_bad_rows"],
        duplicate_ids=fields["duplicate_ids"],
    )


def _run_options(**fields: Any) -> services.RunOptions:
    return services.RunOptions(
        provider=fields["provider"], region=fields["region"],
        growth_scenarios=parse_growth(fields["growth"]),
        is_spot_alternative=fields["spot_alternative"],
        is_elsewhere_alternative=fields["elsewhere_alternative"],
    )


@router.post(
    "",
    response={201: CreatedOut, 400: UploadErrorOut, 413: UploadErrorOut},
    summary="Upload a job history",
)
def create_history(
    request: HttpRequest,
    file: File[UploadedFile],
    format: Form[FormatName] = _D["format"],
    map: Form[str] = _D["map"],
    time_unit: Form[TimeUnit] = _D["time_unit"],
    origin: Form[str] = _D["origin"],
    gpu_type: Form[str] = _D["gpu_type"],
    skip_bad_rows: Form[bool] = _D["skip_bad_rows"],
    duplicate_ids: Form[DuplicatePolicy] = _D["duplicate_ids"],
    provider: Form[str] = _D["provider"],
    region: Form[str] = _D["region"],
    growth: Form[str] = _D["growth"],
    spot_alternative: Form[bool] = _D["spot_alternative"],
    elsewhere_alternative: Form[bool] = _D["elsewhere_alternative"],
) -> Status[Any]:
    """Parse the file; 400 lists row errors by line (nothing stored), 201 queues the analysis.

    duplicate_ids: refuse repeated job ids, or merge them into one job. provider/region: where
    you buy (blank: the cheapest place that sells commitments). growth: demand scenarios in %
    per year. spot_alternative / elsewhere_alternative: whether spot (with its interruption
    overhead) and on-demand elsewhere cap the rate worth committing at (default: the baseline
    is on-demand of the same provider, region and instance type)."""
    try:
        options = _options(format=format, map=map, time_unit=time_unit, origin=origin,
                           gpu_type=gpu_type, skip_bad_rows=skip_bad_rows,
                           duplicate_ids=duplicate_ids)
        run_options = _run_options(provider=provider, region=region, growth=growth,
                                   spot_alternative=spot_alternative,
                                   elsewhere_alternative=elsewhere_alternative)
        outcome = services.history_create(
            owner_id=_owner_id(request), upload=file, name=file.name or "upload.csv",
            size_bytes=file.size or 0, options=options, run_options=run_options,
        )
    except services.UploadTooLargeError as error:
        return Status(413, {"detail": str(error)})
    except ValueError as error:
        return Status(400, {"detail": str(error)})
    if outcome.history is None or outcome.run is None:
        parse = outcome.parse
        return Status(400, {
            "detail": outcome.error, "errors": outcome.errors,
            "error_count": parse.error_count if parse else 0,
            "rows_read": parse.rows_read if parse else 0,
        })
    history = outcome.history
    return Status(201, {
        "id": history.pk, "run_id": outcome.run.pk, "status": outcome.run.status,
        "status_url": f"/api/histories/{history.pk}", "records": history.records,
        "rows_read": history.rows_read, "rows_skipped": history.rows_skipped,
    })


@router.get("/{history_id}", summary="Status, progress and (when done) the recommendation")
def get_history(request: HttpRequest, history_id: int) -> dict[str, Any]:
    """The document holds the hourly demand series, the prices and discounts used (with source
    and as-of date), the analysis, `what_to_buy` (the recommendation, with its replay on the
    history), `hindsight_reference` (what you would have bought knowing the future: a
    reference only), look-back sensitivity and backtest."""
    history = get_object_or_404(selectors.owned_histories(_owner_id(request)), pk=history_id)
    return services.history_payload(history, selectors.latest_run(history.pk))


@router.get("/{history_id}/report.{fmt}", response={200: None},
            summary="The latest analysis as a pdf, xlsx, csv or html report")
def get_history_report(request: HttpRequest, history_id: int, fmt: str) -> HttpResponse:
    get_object_or_404(selectors.owned_histories(_owner_id(request)), pk=history_id)
    download_check(owner_id=_owner_id(request))
    return api_report_download(
        lambda: mix_reports.history_report(history_id=history_id, owner_id=_owner_id(request)),
        fmt)


@router.delete("/{history_id}", response={204: None},
               summary="Delete a history with its analyses, capacity sweeps and files")
def delete_history(request: HttpRequest, history_id: int) -> Status[None]:
    """204 once deleted (its uploaded file, parsed jobs and demand go when the deletion
    commits); 404 for a history that is not yours. Reports made from it stay."""
    if services.history_delete(owner_id=_owner_id(request), history_id=history_id) is None:
        raise HttpError(404, "Not Found")
    return Status(204, None)
