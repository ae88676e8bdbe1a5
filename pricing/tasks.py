"""Pricing tasks: the daily price refresh (scheduled by Celery beat when turned on)."""

from celery import shared_task

from pricing.importers import PriceFileErrors
from pricing.refresh import PROVIDERS, RefreshError, prices_refresh


@shared_task(name="pricing.refresh_prices", autoretry_for=(RefreshError,), retry_backoff=60,
             max_retries=3)
def refresh_prices_task() -> dict[str, int]:
    """Refresh every provider it can; a provider without credentials (GCP) is skipped."""
    created: dict[str, int] = {}
    for provider in PROVIDERS:
        try:
            reports = prices_refresh(provider=provider)
        except PriceFileErrors:
            created[provider] = -1
            continue
        except RefreshError as exc:
            if "GCP_BILLING_API_KEY" in str(exc):
                continue
            raise
        created[provider] = sum(r.summary.created + r.summary.updated for r in reports)
    return created
