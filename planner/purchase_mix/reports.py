"""The report of a job history's latest finished analysis (planner.reports renders it)."""

from django.conf import settings
from django.utils import timezone

from planner.purchase_mix import selectors, services
from planner.purchase_mix.models import History
from planner.reports.core.model import Report as ReportDocument
from planner.reports.core.purchase_mix import report_from_history
from pricing.selectors import stale_before


def history_report(*, history_id: int, owner_id: int | None) -> ReportDocument:
    """ValueError when the history does not exist (for this owner) or has no finished run."""
    histories = History.objects.all() if owner_id is None else selectors.owned_histories(owner_id)
    history = histories.filter(pk=history_id).first()
    if history is None:
        raise ValueError(f"id: no history {history_id}")
    run = selectors.latest_run(history.pk)
    if run is None or run.status != run.Status.DONE:
        raise ValueError(f"result: history {history_id} has no finished analysis yet")
    return report_from_history(services.history_payload(history, run), subject_id=history.pk,
                               generated_at=timezone.now().isoformat(timespec="seconds"),
                               stale_days=settings.PRICE_STALE_DAYS,
                               stale_before=stale_before())
