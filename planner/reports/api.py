"""Reports API: the user's stored reports (rendered in the background from the pages) and
their deletion."""

from datetime import datetime

from django.http import HttpRequest
from ninja import Router, Schema, Status
from ninja.errors import HttpError

from planner.reports import services
from planner.reports.models import Report

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
