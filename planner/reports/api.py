"""Reports API: the user's stored reports (rendered in the background from the pages) and
their deletion."""

from collections.abc import Callable
from datetime import datetime

from django.http import HttpRequest, HttpResponse
from ninja import Router, Schema, Status
from ninja.errors import HttpError

from planner.reports import services
from planner.reports.core.model import Report as ReportDocument
from planner.reports.models import Report
from planner.reports.views import download, download_error_status, render_report

router = Router(tags=["reports"])


class ReportOut(Schema):
    id: int
    title: str
    kind: str
    subject_id: int
    fmt: str
    status: str
    size_bytes: int | None
    created_at: datetime


@router.get("", response=list[ReportOut], summary="Your stored reports, newest first")
def list_reports(request: HttpRequest) -> list[Report]:
    return list(services.reports_of(request.user.pk))


@router.delete("/{report_id}", response={204: None}, summary="Delete a report with its file")
def delete_report(request: HttpRequest, report_id: int) -> Status[None]:
    """204; 404 for a report that is not yours."""
    if services.report_delete(owner_id=request.user.pk, report_id=report_id) is None:
        raise HttpError(404, "Not Found")
    return Status(204, None)


def api_report_download(build: Callable[[], ReportDocument], fmt: str) -> HttpResponse:
    """The export every API offers: the file, or an error naming the format or document (400)
    or saying what the PDF needs (503)."""
    try:
        rendered = render_report(build, fmt)
    except (ValueError, services.PdfUnavailableError) as exc:
        raise HttpError(download_error_status(exc), str(exc)) from None
    return download(rendered)
