"""The prices explorer's view of prices: its columns (one table for the page, the column picker
and the CSV/XLSX), server-side sort on every column, page sizes, and each user's columns."""

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.db.models import (
    Case,
    ExpressionWrapper,
    F,
    FloatField,
    OrderBy,
    OuterRef,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Cast

from pricing import selectors
from pricing.models import ExplorerColumns, Price, PurchaseOption


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    order_by: tuple[str, ...]  # fields (or annotations) sorted on, the first one decides
    is_numeric: bool = False
    is_default: bool = True


# Every column of the explorer, in page order. Sorting by a column sorts by its fields, then by
# $/GPU-hour and id, so a page never reshuffles between requests.
COLUMNS = (
    Column("provider", "Provider", ("instance_type__provider__name",)),
    Column("region", "Region", ("region__code", "zone")),
    Column("instance_type", "Instance type", ("instance_type__name",)),
    Column("gpu", "GPU × count", ("instance_type__accelerator__model",
                                  "instance_type__accelerator__variant",
                                  "instance_type__gpu_count")),
    Column("purchase_option", "Purchase option", ("purchase_option", "payment_option")),
    Column("usd_per_hour", "$/instance-hour", ("usd_per_hour",), is_numeric=True),
    Column("usd_per_gpu_hour", "$/GPU-hour", ("usd_per_gpu_hour_value",), is_numeric=True),
    Column("discount_pct", "Discount vs on-demand", ("discount_value",), is_numeric=True),
    Column("upfront_usd", "Upfront per instance", ("upfront_usd",), is_numeric=True,
           is_default=False),
    Column("as_of", "As of", ("as_of",)),
    Column("source", "Source", ("source__name",)),
    Column("notes", "Notes (basis, stale, history)", ("basis_rank",)),
)
COLUMN_KEYS = tuple(c.key for c in COLUMNS)
DEFAULT_COLUMNS = tuple(c.key for c in COLUMNS if c.is_default)
DEFAULT_SORT = "usd_per_gpu_hour"
SORTS = frozenset(COLUMN_KEYS) | {f"-{k}" for k in COLUMN_KEYS}
PAGE_SIZES = (25, 50, 100, 250, 500)
DEFAULT_PAGE_SIZE = 100
SESSION_KEY = "price_explorer_columns"


def sorted_prices(prices: QuerySet[Price], sort: str) -> QuerySet[Price]:
    """`prices` (from selectors.price_list) ordered by a SORTS key ('-' for descending);
    blanks (no discount, no upfront) always last."""
    if sort not in SORTS:
        raise ValueError(f"sort: unknown column {sort!r}")
    column = next(c for c in COLUMNS if c.key == sort.lstrip("-"))
    is_descending = sort.startswith("-")
    if column.key == "discount_pct":
        prices = _with_discount(prices)
    if column.key == "notes":
        prices = prices.annotate(basis_rank=Case(
            When(is_estimated=True, then=Value(2)), When(is_derived=True, then=Value(1)),
            default=Value(0)))
    order: list[OrderBy] = [
        F(name).desc(nulls_last=True) if is_descending else F(name).asc(nulls_last=True)
        for name in column.order_by]
    return prices.order_by(*order, F("usd_per_gpu_hour_value").asc(), F("id").asc())


def sort_label(sort: str) -> str:
    """'$/GPU-hour, lowest first' for a SORTS key."""
    column = next(c for c in COLUMNS if c.key == sort.lstrip("-"))
    if column.is_numeric:
        order = "highest first" if sort.startswith("-") else "lowest first"
    else:
        order = "Z to A" if sort.startswith("-") else "A to Z"
    if column.key == "as_of":
        order = "newest first" if sort.startswith("-") else "oldest first"
    return f"{column.header}, {order}"


def _with_discount(prices: QuerySet[Price]) -> QuerySet[Price]:
    """Annotate `discount_value` (%, vs the newest on-demand price of the same instance type
    and region within selectors.NEARBY_DAYS of the price's date; blank for on-demand prices,
    where there is none, and for a price above on-demand), as the page shows."""
    window = timedelta(days=selectors.NEARBY_DAYS)
    on_demand = Price.objects.filter(
        purchase_option=PurchaseOption.ON_DEMAND,
        instance_type=OuterRef("instance_type"), region=OuterRef("region"),
        as_of__gte=OuterRef("as_of") - window, as_of__lte=OuterRef("as_of") + window,
    ).order_by("-as_of").values("usd_per_hour")[:1]
    ratio = Cast("usd_per_hour", FloatField()) / Cast(Subquery(on_demand), FloatField())
    return prices.annotate(discount_ratio=ratio).annotate(discount_value=Case(
        When(purchase_option=PurchaseOption.ON_DEMAND, then=Value(None)),
        When(discount_ratio__gt=1.0, then=Value(None)),
        default=ExpressionWrapper(100.0 * (1.0 - F("discount_ratio")),
                                  output_field=FloatField()),
        output_field=FloatField()))


def explorer_prices(*, today: date, filters: dict[str, Any], sort: str) -> QuerySet[Price]:
    """The explorer's prices: the filters, sorted."""
    return sorted_prices(selectors.price_list(today=today, **filters), sort)


def column_choice(*, owner_id: int | None, session: Any) -> tuple[str, ...]:
    """The columns a user (or, signed out, a browser session) last chose; the defaults else."""
    stored: list[str] | None = None
    if owner_id is not None:
        stored = ExplorerColumns.objects.filter(owner_id=owner_id).values_list(
            "columns", flat=True).first()
    else:
        stored = session.get(SESSION_KEY)
    if not stored:
        return DEFAULT_COLUMNS
    return tuple(k for k in COLUMN_KEYS if k in stored) or DEFAULT_COLUMNS


def column_choice_save(*, owner_id: int | None, session: Any, columns: list[str]) -> None:
    """Remember the chosen columns (unknown keys refused; none chosen means the defaults)."""
    unknown = sorted(set(columns) - set(COLUMN_KEYS))
    if unknown:
        raise ValueError(f"columns: unknown column {unknown[0]!r}")
    chosen = [k for k in COLUMN_KEYS if k in columns] or list(DEFAULT_COLUMNS)
    if owner_id is None:
        session[SESSION_KEY] = chosen
        return
    ExplorerColumns.objects.update_or_create(owner_id=owner_id, defaults={"columns": chosen})
