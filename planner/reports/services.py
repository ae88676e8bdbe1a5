"""Report services: render a report model in a format, write it to a file, or render it in
the background as a tracked run (PDF takes seconds) that stays downloadable."""

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import QuerySet

from planner.disk import disk_room_check, is_disk_full
from planner.fair_shares import creation_check
from planner.reports.core.cells import table_csv
from planner.reports.core.model import Report as ReportDocument
from planner.reports.core.model import report_from_dict
from planner.reports.models import Report
from planner.reports.render.html import report_html
from planner.reports.render.pdf import PdfUnavailableError, pdf_missing, report_pdf
from planner.reports.render.xlsx import report_xlsx
from planner.runs import Attempt, run_enqueue, run_execute, run_progress

CONTENT_TYPES = {
    "pdf": "application/pdf",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "csv": "text/csv; charset=utf-8",
    "html": "text/html; charset=utf-8",
}
FORMATS = tuple(CONTENT_TYPES)

__all__ = ["FORMATS", "PdfUnavailableError", "Rendered", "pdf_missing", "report_create",
           "report_execute", "report_format", "report_render", "report_write", "reports_of"]


@dataclass(frozen=True)
class Rendered:
    content: bytes
    content_type: str
    filename: str


def report_format(name: str) -> str:
    """The format named (pdf, xlsx, csv, html); ValueError naming the field otherwise."""
    fmt = name.lower().lstrip(".")
    if fmt not in CONTENT_TYPES:
        raise ValueError(f"format: {name!r} is not one of {', '.join(FORMATS)}")
    return fmt


def report_render(document: ReportDocument, fmt: str) -> Rendered:
    """The report as one file. PdfUnavailableError when WeasyPrint cannot load."""
    fmt = report_format(fmt)
    if fmt == "pdf":
        content = report_pdf(document)
    elif fmt == "xlsx":
        content = report_xlsx(document)
    elif fmt == "csv":
        # The BOM lets spreadsheet programs read the UTF-8 (×, ·) correctly.
        content = ("\ufeff" + table_csv(document.main_table)).encode("utf-8")
    else:
        content = report_html(document, is_interactive=True).encode("utf-8")
    return Rendered(content, CONTENT_TYPES[fmt], f"{document.slug}.{fmt}")


def report_path_check(path: Path) -> str:
    """The format a report written to `path` would have; ValueError naming what is wrong
    (extension, PDF libraries, folder) so a command can refuse before its computation."""
    fmt = report_format(path.suffix or "(no extension)")
    if fmt == "pdf" and pdf_missing():
        raise ValueError(f"format: {pdf_missing()}")
    if path.is_dir():
        raise ValueError(f"cannot write {path}: it is a folder")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise ValueError(f"cannot write {path}: no folder {folder}")
    return fmt


def report_write(document: ReportDocument, path: Path) -> Rendered:
    """Write the report to `path` in the format its extension names."""
    rendered = report_render(document, report_format(path.suffix or "(no extension)"))
    report_save(rendered, path)
    return rendered


def report_save(rendered: Rendered, path: Path) -> None:
    """Write a rendered report to `path`; ValueError naming the file when it cannot be."""
    try:
        path.write_bytes(rendered.content)
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror or exc}") from None


def report_create(*, owner_id: int, document: ReportDocument, fmt: str) -> Report:
    """Store the report model and render it in the background (a tracked run)."""
    fmt = report_format(fmt)
    if fmt == "pdf" and pdf_missing():
        raise ValueError(f"format: {pdf_missing()}")
    creation_check(owner_id=owner_id, kind="report")
    disk_room_check(settings.MEDIA_ROOT)  # refused now (507), not accepted and then failed
    with transaction.atomic():
        stored = Report.objects.create(
            owner_id=owner_id, kind=document.kind, subject_id=document.subject_id, fmt=fmt,
            title=document.title[:255], document=document.to_dict(),
        )
        run_enqueue(stored)
    return stored


def _compute(stored: Report) -> dict[str, Any]:
    run_progress(Report, stored.id, 20, f"rendering the {stored.fmt.upper()}")
    started = time.perf_counter()
    try:
        rendered = report_render(report_from_dict(stored.document), stored.fmt)
    except PdfUnavailableError as exc:
        raise ValueError(str(exc)) from None
    run_progress(Report, stored.id, 90, "saving the file")
    old_name = stored.file.name
    try:  # written whole or not at all (planner.disk): never a 0-byte file
        stored.file.save(stored.filename, ContentFile(rendered.content), save=False)
    except OSError as exc:
        if not is_disk_full(exc):
            raise
        raise ValueError("The server's storage is full: the report could not be saved. Ask "
                         "for it again later.") from None
    if not Report.objects.filter(pk=stored.id).update(file=stored.file.name,
                                                      size_bytes=len(rendered.content)):
        # Deleted while it rendered: no row points to the new file, and no signal removes it.
        stored.file.storage.delete(stored.file.name)
    elif old_name and old_name != stored.file.name:
        stored.file.storage.delete(old_name)  # a redelivery replaces, never duplicates
    return {"size_bytes": len(rendered.content),
            "seconds": round(time.perf_counter() - started, 2)}


def report_execute(*, report_id: int, attempt: Attempt) -> None:
    """Claim a queued report, render and save its file; a second call does nothing."""
    run_execute(Report, report_id, _compute, attempt=attempt, message="rendering")


def reports_of(owner_id: int) -> QuerySet[Report]:
    """The owner's reports, newest first, without their documents: all USER_MAX_REPORTS one
    account may keep (the page and the API list the same)."""
    return Report.objects.defer("document").filter(owner_id=owner_id)[
        :settings.USER_MAX_REPORTS]


def report_delete(*, owner_id: int, report_id: int) -> Report | None:
    """Delete the owner's report (its file goes once the deletion commits:
    planner.reports.signals); None when it is not theirs."""
    report = Report.objects.defer("document").filter(owner_id=owner_id, pk=report_id).first()
    if report is not None:
        report.delete()
    return report
