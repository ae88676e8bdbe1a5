"""Pricing page and API fixtures: the shipped catalog, read on a fixed date."""

from datetime import UTC, date, datetime

import pytest
from django.utils import timezone

# The staleness examples in the brief are worked on this date (180-day threshold).
TODAY = date(2026, 11, 30)


@pytest.fixture
def today(monkeypatch: pytest.MonkeyPatch) -> date:
    """Pin timezone.now() so stale / fresh does not drift with the calendar."""
    fixed = datetime(TODAY.year, TODAY.month, TODAY.day, 12, tzinfo=UTC)
    monkeypatch.setattr(timezone, "now", lambda: fixed)
    return TODAY


@pytest.fixture
def catalog(loaded_catalog: None, db: None, today: date) -> date:
    """The loaded catalog on TODAY; returns TODAY."""
    return today
