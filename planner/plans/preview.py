"""Plans shown to visitors without an account: the worked example and shared what-if links,
read-only, computed with the shipped calibration, cached per query and rate-limited per address.
"""

import hashlib
import json
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.conf import settings
from django.core.cache import cache

from planner.plans.scenario import scenario_from_input
from planner.plans.services import plan_compute
from pricing.selectors import catalog_version

PREVIEW_CACHE_SECONDS = 3600
RATE_WINDOW_SECONDS = 600


class PreviewLimitError(Exception):
    """The address computed too many previews in the current window."""


@dataclass(frozen=True)
class Preview:
    document: dict[str, Any]
    version: str  # the key of the page's cached fragments (query, day and catalog)


def preview_version(raw: dict[str, Any], *, today: date) -> str:
    state = f"{today}:{catalog_version()}:{json.dumps(raw, sort_keys=True, default=str)}"
    return "preview-" + hashlib.sha256(state.encode()).hexdigest()


def preview_plan(*, raw: dict[str, Any], today: date, client: str) -> Preview:
    """The plan of `raw` for a visitor at address `client`: from the cache when any visitor
    asked for the same query today at the same catalog; else computed, which counts against
    the address's `ANONYMOUS_PREVIEWS_PER_10_MINUTES` (PreviewLimitError beyond it).
    ValueError when the input is bad or nothing fits (as for a signed-in what-if)."""
    version = preview_version(raw, today=today)
    document: dict[str, Any] | None = cache.get(version)
    if document is None:
        _count_computation(client)
        scenario = scenario_from_input(raw, today=today)
        document = plan_compute(scenario=scenario, owner_id=None)
        cache.set(version, document, PREVIEW_CACHE_SECONDS)
    return Preview(document=document, version=version)


def _count_computation(client: str) -> None:
    digest = hashlib.sha256(client.encode()).hexdigest()
    key = f"preview-count:{digest}"
    cache.add(key, 0, RATE_WINDOW_SECONDS)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, RATE_WINDOW_SECONDS)
        count = 1
    if count > settings.ANONYMOUS_PREVIEWS_PER_10_MINUTES:
        raise PreviewLimitError(
            "Too many plans previewed from your address in the last 10 minutes: sign up (free) "
            "to plan without this limit, or try again in a few minutes.")
