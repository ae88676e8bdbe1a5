"""Catalog reads kept in the process while the catalog is unchanged.

A plan reads every current price, every instance type and every GPU spec of the catalog; they
change only when an importer, `refresh_prices` or the admin writes, and every such write bumps
the catalog stamp (database triggers, migration 0005). So each process keeps the last value of
each read beside the stamp it was read under and reads again when the stamp moves: one
primary-key read per plan instead of the tables. Without a stamp (a flushed test database, a
database without the triggers) nothing is kept. Values are shared: callers must not change
them (pandas copies on write, so filtering or assigning to a derived frame is safe).
"""

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import pandas as pd

from pricing.models import Price
from pricing.selectors import STALE_BEFORE_KEPT, catalog_stamp, current_prices

T = TypeVar("T")

_KEPT: dict[str, tuple[str, Any]] = {}
_LOCK = threading.Lock()


def catalog_cached(name: str, build: Callable[[], T]) -> T:
    """`build()`, read again only when the catalog stamp has changed since it was kept."""
    stamp = catalog_stamp()
    if stamp is None:
        return build()
    with _LOCK:
        kept = _KEPT.get(name)
    if kept is not None and kept[0] == stamp:
        value: T = kept[1]
        return value
    value = build()
    with _LOCK:
        _KEPT[name] = (stamp, value)
    return value


# Results computed from the catalog and other inputs (sweeps), most recent last.
MEMO_SIZE = 32
_MEMO: OrderedDict[tuple[str, str, str], Any] = OrderedDict()


def catalog_memo(name: str, key: str, build: Callable[[], T]) -> T:
    """`build()` of a computation that reads the catalog and whose other inputs are all in
    `key`: the last MEMO_SIZE results are kept per process under the catalog stamp, so the
    same inputs at the same catalog compute once (a what-if that changes a deadline, a budget
    or purchase options sweeps the same configurations again). Nothing is kept without a
    stamp."""
    stamp = catalog_stamp()
    if stamp is None:
        return build()
    full = (name, stamp, key)
    with _LOCK:
        if full in _MEMO:
            _MEMO.move_to_end(full)
            kept: T = _MEMO[full]
            return kept
    value = build()
    with _LOCK:
        _MEMO[full] = value
        while len(_MEMO) > MEMO_SIZE:
            _MEMO.popitem(last=False)
    return value


def catalog_cache_clear() -> None:
    """Forget every kept read and result, pricing.selectors.stale_before's included (tests: a
    rolled-back transaction moves the stamp back)."""
    with _LOCK:
        _KEPT.clear()
        _MEMO.clear()
        STALE_BEFORE_KEPT.clear()


# Current price columns (ORM path: frame column), as plans read them.
CURRENT_PRICE_FIELDS = {
    "instance_type_id": "instance_key", "instance_type__provider__slug": "provider",
    "region__code": "region", "instance_type__name": "instance_type",
    "purchase_option": "purchase_option", "payment_option": "payment_option",
    "offering_class": "offering_class",
    "usd_per_hour": "usd_per_hour", "upfront_usd": "upfront_usd", "as_of": "as_of",
    "source__name": "source", "is_derived": "is_derived", "is_estimated": "is_estimated",
    "instance_type__gpu_count": "gpus_per_node",
}


def current_price_frame() -> pd.DataFrame:
    """Every current price (pricing.selectors.current_prices, in its order; ties broken by
    payment option, offering class and id), CURRENT_PRICE_FIELDS columns; kept per catalog
    version."""
    def read() -> pd.DataFrame:
        order = [*Price._meta.ordering, "payment_option", "offering_class", "id"]
        rows = current_prices().order_by(*order).values_list(*CURRENT_PRICE_FIELDS)
        return pd.DataFrame(list(rows), columns=list(CURRENT_PRICE_FIELDS.values()))
    return catalog_cached("current_price_frame", read)
