"""Counters for throttling, kept in the database: they hold across processes and servers and
keep working when Redis (the page cache) is down.

A counter has a key (a digest: no user name or address is stored in the clear) and a window:
`throttle_hit` adds one inside the window or starts a new window at one; `throttle_count`
reads it (0 once the window has passed); `throttle_clear` forgets it. Expired counters are
deleted as new ones are written.
"""

from __future__ import annotations

import hashlib
import math
from datetime import timedelta

from django.db import IntegrityError, models, transaction
from django.db.models import F
from django.utils import timezone


class ThrottleCounter(models.Model):
    key = models.CharField(max_length=64, unique=True)
    count = models.PositiveIntegerField(default=0)
    window_ends = models.DateTimeField(db_index=True)

    class Meta:
        app_label = "planner"

    def __str__(self) -> str:
        return f"{self.key[:12]}…: {self.count}"


def throttle_key(*parts: str) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def throttle_count(key: str) -> int:
    count = ThrottleCounter.objects.filter(key=key, window_ends__gt=timezone.now()).values_list(
        "count", flat=True).first()
    return int(count or 0)


def throttle_hit(key: str, window_seconds: int) -> int:
    """Count one more event for `key`; returns the count in the current window."""
    now = timezone.now()
    ends = now + timedelta(seconds=window_seconds)
    for _ in range(3):  # two first hits at once: one creates, the other counts on it
        with transaction.atomic():
            if ThrottleCounter.objects.filter(key=key, window_ends__gt=now).update(
                    count=F("count") + 1):
                return throttle_count(key)
            try:
                with transaction.atomic():
                    ThrottleCounter.objects.filter(window_ends__lte=now).delete()
                    ThrottleCounter.objects.create(key=key, count=1, window_ends=ends)
                return 1
            except IntegrityError:
                continue
    return throttle_count(key)


def throttle_clear(key: str) -> None:
    ThrottleCounter.objects.filter(key=key).delete()


def throttle_seconds_left(key: str) -> int:
    """Whole seconds until `key`'s current window ends (0 when none is open): what a 429's
    Retry-After says."""
    ends = ThrottleCounter.objects.filter(key=key, window_ends__gt=timezone.now()).values_list(
        "window_ends", flat=True).first()
    return max(1, math.ceil((ends - timezone.now()).total_seconds())) if ends else 0
