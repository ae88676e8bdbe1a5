"""The client's address, one rule for every reader: sign-in throttling, the anonymous preview
limit, sign-up throttling and the request log.

Behind TRUSTED_PROXY_COUNT reverse proxies (nginx, Caddy; each appends the address it saw to
X-Forwarded-For) the client is the entry that many places from the right: the entries left of
it were written by the client and prove nothing. planner.security.TrustedProxyMiddleware drops
the header when the request does not come from a TRUSTED_PROXIES address, so a client talking
to gunicorn directly is counted by REMOTE_ADDR whatever it sends.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core import checks

# Longer entries are not addresses (IPv6 with a zone is at most ~50 characters).
MAX_ADDRESS_CHARS = 64


def client_address(request: Any) -> str:
    """The client's address: REMOTE_ADDR, or behind TRUSTED_PROXY_COUNT proxies the address
    the outermost of them saw (that many entries from the right of X-Forwarded-For); "" for
    no request (a sign-in from a command)."""
    if request is None:
        return ""
    meta = getattr(request, "META", {})
    remote = str(meta.get("REMOTE_ADDR", ""))[:MAX_ADDRESS_CHARS]
    count = int(getattr(settings, "TRUSTED_PROXY_COUNT", 0))
    if count <= 0:
        return remote
    hops = [hop.strip() for hop in str(meta.get("HTTP_X_FORWARDED_FOR", "")).split(",")
            if hop.strip()]
    return hops[-count][:MAX_ADDRESS_CHARS] if len(hops) >= count else remote


class ClientAddressFilter(logging.Filter):
    """Adds `client` (the client's address by the rule above, "-" without a request) to every
    log record, so that a request's log lines name the client and not the proxy."""

    def filter(self, record: logging.LogRecord) -> bool:
        request = getattr(record, "request", None)
        if not hasattr(record, "client"):
            record.client = client_address(request) or "-"
        return True


@checks.register(checks.Tags.security, deploy=True)
def check_proxy_count(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """HTTPS=1 behind a proxy (BEHIND_PROXY, on by default with HTTPS) with no
    TRUSTED_PROXY_COUNT counts every client as the proxy: one client's failed sign-ins lock
    everyone out."""
    if not (settings.HTTPS and settings.BEHIND_PROXY) or settings.TRUSTED_PROXY_COUNT > 0:
        return []
    return [checks.Error(
        "HTTPS=1 behind a reverse proxy, but TRUSTED_PROXY_COUNT is 0: every client would "
        "have the proxy's address, so one client's failed sign-ins or previews would lock out "
        "everyone.",
        hint="Set TRUSTED_PROXY_COUNT to the number of proxies in front of gunicorn "
             "(TRUSTED_PROXY_COUNT=1 for one nginx or Caddy), and TRUSTED_PROXIES to their "
             "addresses if not 127.0.0.1; or BEHIND_PROXY=0 when clients reach gunicorn "
             "directly. See docs/operations.md, 'Behind a proxy'.",
        id="planner.E001")]
