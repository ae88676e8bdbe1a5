"""The report of a history's latest finished capacity sweep (planner.reports renders it)."""

from django.conf import settings
from django.utils import timezone

from planner.capacity import services
from planner.purchase_mix import selectors
from planner.purchase_mix.models import History
from planner.reports.core.capacity import report_from_capacity
from planner.reports.core.model import Report as ReportDocument
from pricing.selectors import stale_before


def capacity_report(*, history_id: int, owner_id: int | None) -> ReportDocument:
    """ValueError when the history does not exist (for this owner) or has no finished sweep."""
    histories = History.objects.all() if owner_id is None else selectors.owned_histories(owner_id)
    history = histories.filter(pk=history_id).first()
    if history is None:
        raise ValueError(f"id: no history {history_id}")
    payload = services.capacity_payload(history, services.latest_capacity(history.pk))
    payload["name"] = history.name
    return report_from_capacity(payload, subject_id=history.pk,
                                generated_at=timezone.now().isoformat(timespec="seconds"),
                                stale_days=settings.PRICE_STALE_DAYS,
                                stale_before=stale_before())
