"""The page cache on Redis that keeps the site up without Redis.

`ResilientRedisCache` is Django's Redis cache, except that a connection error does not reach
the page: the call is answered from a per-process memory cache instead, a warning is logged
once, and Redis is tried again after RETRY_SECONDS (so a page does not wait for a refused
connection on every call). `/healthz` reports the state (`cache_state()`); the log says when
Redis is back. Nothing the site needs to keep lives only in this cache: sessions and sign-in
throttling counters are in the database.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache

logger = logging.getLogger(__name__)

RETRY_SECONDS = 5.0
# Short socket timeouts: a page never waits long for a Redis that is gone.
REDIS_OPTIONS = {"socket_connect_timeout": 0.5, "socket_timeout": 1.0}

_lock = threading.Lock()
_state: dict[str, Any] = {"down_since": None, "retry_at": 0.0, "error": ""}


def _unavailable_errors() -> tuple[type[BaseException], ...]:
    import redis.exceptions

    return (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)


def cache_state() -> str:
    """"ok", or "degraded: ..." while this process serves the cache from its own memory."""
    with _lock:
        if _state["down_since"] is None:
            return "ok"
        return (f"degraded: Redis unavailable ({_state['error']}); per-process memory cache in "
                "use")


def _mark_down(exc: BaseException) -> None:
    with _lock:
        if _state["down_since"] is None:
            _state["down_since"] = time.time()
            logger.warning("cache: Redis unavailable (%s: %s); serving the cache from "
                           "per-process memory, retrying every %.0f s",
                           exc.__class__.__name__, exc, RETRY_SECONDS)
        _state["error"] = exc.__class__.__name__
        _state["retry_at"] = time.monotonic() + RETRY_SECONDS


def _mark_up() -> None:
    with _lock:
        if _state["down_since"] is not None:
            logger.warning("cache: Redis is back after %.0f s",
                           time.time() - float(_state["down_since"]))
            _state.update(down_since=None, retry_at=0.0, error="")


def _is_resting() -> bool:
    with _lock:
        return _state["down_since"] is not None and time.monotonic() < _state["retry_at"]


class ResilientRedisCache(RedisCache):
    """RedisCache falling back to per-process memory while Redis cannot be reached."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        params = {**params, "OPTIONS": {**REDIS_OPTIONS, **params.get("OPTIONS", {})}}
        super().__init__(server, params)
        self._memory = LocMemCache(f"fallback-{id(self)}", {
            "TIMEOUT": params.get("TIMEOUT", 300), "OPTIONS": {"MAX_ENTRIES": 1000}})

    def _either(self, name: str, *args: Any, **kwargs: Any) -> Any:
        fallback: Callable[..., Any] = getattr(self._memory, name)
        if _is_resting():
            return fallback(*args, **kwargs)
        try:
            answer = getattr(super(), name)(*args, **kwargs)
        except _unavailable_errors() as exc:
            _mark_down(exc)
            return fallback(*args, **kwargs)
        _mark_up()
        return answer

    def add(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("add", *args, **kwargs)

    def get(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("get", *args, **kwargs)

    def set(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("set", *args, **kwargs)

    def touch(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("touch", *args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("delete", *args, **kwargs)

    def get_many(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("get_many", *args, **kwargs)

    def has_key(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("has_key", *args, **kwargs)

    def incr(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("incr", *args, **kwargs)

    def set_many(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("set_many", *args, **kwargs)

    def delete_many(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("delete_many", *args, **kwargs)

    def clear(self) -> Any:
        self._memory.clear()
        return self._either("clear")


def cache_check() -> str:
    """Touch the default cache once (for /healthz) and report its state."""
    from django.core.cache import cache

    try:
        cache.get("healthz-probe")
    except Exception as exc:  # noqa: BLE001 - a plain RedisCache raises; report it
        return f"error: {exc.__class__.__name__}"
    return cache_state()
