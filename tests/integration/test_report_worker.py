"""A PDF report renders on a real worker over Redis and stays downloadable."""

import time

import pytest
from django.contrib.auth.models import User

from planner.reports.core.model import Column, Figure, Finding, Report, Table
from planner.reports.models import Report as ReportRun
from planner.reports.services import report_create
from tests.clients import signed_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def _document() -> Report:
    table = Table("options", "Options", "Options",
                  (Column("name", "Option"), Column("total_usd", "Total", "USD")),
                  (("p5.48xlarge × 8", 185_292.0),))
    return Report(kind="plan", subject_id=1, title="Worker report",
                  generated_at="2026-12-01T00:00:00", summary=(Figure("Total", 185_292.0, "USD"),),
                  findings=(Finding("Cheapest", "p5.48xlarge × 8", "lowest total"),),
                  tables=(table,))


def test_pdf_report_renders_on_the_worker(celery_worker_process: object) -> None:
    owner = User.objects.create_user("ana", password="pw-ana-123")
    stored = report_create(owner_id=owner.id, document=_document(), fmt="pdf")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        stored.refresh_from_db()
        if stored.is_finished:
            break
        time.sleep(0.1)
    assert stored.status == ReportRun.Status.DONE, stored.error
    client = signed_in(owner)
    response = client.get(f"/reports/{stored.id}/file")
    try:
        content = b"".join(response.streaming_content)
        assert content.startswith(b"%PDF") and len(content) == stored.size_bytes
    finally:
        stored.file.delete(save=False)
