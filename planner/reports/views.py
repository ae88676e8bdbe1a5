"""Report pages: the user's reports, one report's progress, its status JSON and its file;
and the download response every export view returns."""

from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from planner.reports import services as report_services
from planner.reports.core.model import Report as ReportDocument
from planner.reports.models import Report
from planner.reports.services import CONTENT_TYPES, Rendered
from planner.runs import run_status


def download(rendered: Rendered) -> HttpResponse:
    response = HttpResponse(rendered.content, content_type=rendered.content_type)
    response["Content-Disposition"] = f'attachment; filename="{rendered.filename}"'
    return response


def render_report(build: Callable[[], ReportDocument], fmt: str) -> Rendered:
    """`build()`'s report rendered as `fmt` (the format is checked before anything is built).
    ValueError names a bad format or document; PdfUnavailableError says what the PDF needs."""
    fmt = report_services.report_format(fmt)
    return report_services.report_render(build(), fmt)


def download_error_status(exc: Exception) -> int:
    """503 when the PDF libraries cannot load (the server's fault), else 400 (the request's)."""
    return 503 if isinstance(exc, report_services.PdfUnavailableError) else 400


def report_download(build: Callable[[], ReportDocument], fmt: str) -> HttpResponse:
    """The export every page offers: the file, or the reason in plain text (400 / 503)."""
    try:
        rendered = render_report(build, fmt)
    except (ValueError, report_services.PdfUnavailableError) as exc:
        return HttpResponse(str(exc), status=download_error_status(exc),
                            content_type="text/plain; charset=utf-8")
    return download(rendered)


def _owned(request: HttpRequest, report_id: int) -> Report:
    return get_object_or_404(Report.objects.defer("document"), pk=report_id,
                             owner_id=request.user.pk)


@login_required
def report_list(request: HttpRequest) -> HttpResponse:
    return render(request, "planner/reports/list.html",
                  {"reports": report_services.reports_of(request.user.pk)})


@login_required
def report_detail(request: HttpRequest, report_id: int) -> HttpResponse:
    return render(request, "planner/reports/detail.html",
                  {"report": _owned(request, report_id)})


@login_required
def report_status(request: HttpRequest, report_id: int) -> JsonResponse:
    return JsonResponse(run_status(_owned(request, report_id)))


@login_required
def report_file(request: HttpRequest, report_id: int) -> FileResponse:
    report = _owned(request, report_id)
    if report.status != Report.Status.DONE or not report.file:
        raise Http404("The report is not rendered yet.")
    return FileResponse(report.file.open("rb"), as_attachment=True, filename=report.filename,
                        content_type=CONTENT_TYPES[report.fmt])


@login_required
def report_delete(request: HttpRequest, report_id: int) -> HttpResponse:
    """GET: what deleting the report removes; POST: delete it with its file."""
    report = _owned(request, report_id)
    if request.method == "POST":
        report_services.report_delete(owner_id=request.user.pk, report_id=report.id)
        messages.success(request, f"Deleted the report “{report.title}”.")
        return redirect("planner:report_list")
    return render(request, "forms/confirm_delete.html", {
        "name": report.title, "back_url": reverse("planner:report_detail", args=[report.id]),
        "what": f"A {report.fmt.upper()} report asked for {report.created_at:%Y-%m-%d %H:%M} "
                "UTC.",
        "consequences": ["Its file, and its place in your storage quota.",
                         f"The {report.get_kind_display().lower()} it was made from stays."]})
