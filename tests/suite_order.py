"""The order pytest-xdist hands the tests to its workers in (`--dist loadgroup`: groups first,
largest first, then one test at a time in collection order, each worker holding at most two).

pytest-django orders a run as Django does: tests inside a rolled-back transaction first, then
transactional ones (each empties every table when it ends, so they must come after the
others: the session's loaded catalog would be gone), then tests without a database. That put
the integration tests, which mostly wait on worker starts, leases and redeliveries, at the end
of every run, where a worker waiting on them had nothing to run beside it. `order_for_workers`
keeps the database order and hands the integration tests out among the tests without a
database (CPU work that can run beside a wait) before the browser tests. The browser tests stay
together (also those marked integration): a worker that leaves tests/browser stops the
package's Chromium, server and Celery worker, and starts them again when it comes back.
"""

from __future__ import annotations

import pytest

DATABASE, TRANSACTIONAL, NO_DATABASE = 0, 1, 2


def database_use(item: pytest.Item) -> int:
    """DATABASE, TRANSACTIONAL or NO_DATABASE, as pytest-django orders the test."""
    fixtures = set(getattr(item, "fixturenames", ()))
    marker = item.get_closest_marker("django_db")
    transactional = bool(marker and (marker.kwargs.get("transaction")
                                     or marker.kwargs.get("reset_sequences")))
    if transactional or fixtures & {"transactional_db", "live_server"}:
        return TRANSACTIONAL
    return DATABASE if marker or "db" in fixtures else NO_DATABASE


def _is_waiting(item: pytest.Item) -> bool:
    """An integration test outside the browser package (its fixtures are per test)."""
    return bool(item.get_closest_marker("integration") and not item.get_closest_marker("browser"))


def order_for_workers(items: list[pytest.Item]) -> None:
    """Reorder `items` in place: the database tests, then the integration tests with the tests
    without a database spread evenly between them, then the other transactional tests."""
    kinds = [database_use(item) for item in items]
    database = [item for item, kind in zip(items, kinds, strict=True) if kind == DATABASE]
    waiting = [item for item, kind in zip(items, kinds, strict=True)
               if kind == TRANSACTIONAL and _is_waiting(item)]
    others = [item for item, kind in zip(items, kinds, strict=True)
              if kind == TRANSACTIONAL and not _is_waiting(item)]
    free = [item for item, kind in zip(items, kinds, strict=True) if kind == NO_DATABASE]
    mixed: list[pytest.Item] = []
    for i, item in enumerate(waiting):  # each wait, then its share of the free tests
        mixed.append(item)
        mixed.extend(free[i * len(free) // len(waiting):(i + 1) * len(free) // len(waiting)])
    items[:] = database + (mixed if waiting else free) + others
