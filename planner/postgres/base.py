"""Django's PostgreSQL backend, waiting for the server while it restarts.

A new connection refused (the server is restarting: "the database system is shutting down",
"starting up", or nothing listening) is tried again every DB_CONNECT_RETRY_INTERVAL_SECONDS
for up to DB_CONNECT_WAIT_SECONDS before the error goes up, so a request that arrives during
a restart waits a second instead of failing. Stale connections (the server restarted since)
are caught by CONN_HEALTH_CHECKS before reuse; planner.dbretry runs a read again that lost its
connection mid-way.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.db.backends.postgresql import base
from django.db.utils import OperationalError

RETRY_INTERVAL_SECONDS = 0.2


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        deadline = time.monotonic() + float(getattr(settings, "DB_CONNECT_WAIT_SECONDS", 0))
        while True:
            try:
                return super().get_new_connection(conn_params)
            except Exception as exc:
                # psycopg's own OperationalError here: Django wraps it once it goes up.
                if not _is_connect_error(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(RETRY_INTERVAL_SECONDS)


def _is_connect_error(exc: Exception) -> bool:
    return isinstance(exc, (OperationalError, base.Database.OperationalError))
