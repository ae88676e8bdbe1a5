"""A plain table of listed prices, one row per instance type, region, purchase option and
payment option: the format of the AWS reserved-instance and Azure savings-plan and spot
extracts in pricing/data/prices (SOURCES.md §6), and a simple way to bring negotiated prices.

Columns (USD; prices per instance-hour):
  provider, region, instance_type, purchase_option, as_of (YYYY-MM-DD)   required
  usd_per_hour              the hourly fee (for all-upfront commitments 0; blank if unknown)
  effective_usd_per_hour    hourly fee + upfront / (8,760 h x years); defaults to usd_per_hour
  payment_option            no_upfront | partial_upfront | all_upfront | blank
  offering_class            standard | convertible | blank
  upfront_usd               paid at purchase per instance for the whole term (blank: unknown)
  on_demand_usd_per_hour, source_url, source_note   kept for reference, not imported
  is_estimated              yes/no: not a provider's list price
Instance types must already be in the catalog (their GPUs come from there); rows of other
types, and Azure low-priority rows (an Azure Batch / ML compute rate, not a VM option), are
skipped and counted.
"""

import math
from datetime import date
from pathlib import Path
from typing import Any, cast

from planner.core.purchase_options import NO_UPFRONT, PAY_AS_YOU_GO
from pricing.importers.common import (
    MAX_UPFRONT_USD,
    OFFERING_CLASSES,
    PAYMENT_OPTIONS,
    PURCHASE_OPTIONS,
    ParsedPrices,
    RowChecker,
    base_row,
    check_columns,
    check_text,
    read_csv_text,
    to_frame,
)

REQUIRED = {"provider", "region", "instance_type", "purchase_option", "as_of", "usd_per_hour"}
OPTIONAL = {"effective_usd_per_hour", "payment_option", "offering_class", "upfront_usd",
            "on_demand_usd_per_hour", "source_url", "source_note", "is_estimated"}
SKIPPED_OPTIONS = {"low_priority": "low priority (an Azure Batch / ML rate, not a VM option)"}


def _day(checker: RowChecker, text: str, line: int) -> date | None:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        checker.error(line, "as_of", f"{text!r} is not a date (YYYY-MM-DD)")
        return None


TRUE_WORDS = ("yes", "true", "1", "y")
FALSE_WORDS = ("no", "false", "0", "n", "")


def _flag(checker: RowChecker, value: Any, line: int) -> bool:
    text = str(value if value is not None else "").strip().lower()
    if text not in TRUE_WORDS + FALSE_WORDS:
        checker.error(line, "is_estimated", f"{str(value)[:40]!r} is not yes or no")
    return text in TRUE_WORDS


def _choice(checker: RowChecker, row: dict[str, Any], name: str, allowed: tuple[str, ...],
            line: int) -> str:
    value = str(row.get(name, "")).strip()
    if value not in allowed:
        checker.error(line, name, f"{value!r} is not one of {', '.join(a for a in allowed if a)}")
    return value


def _prices(checker: RowChecker, row: dict[str, Any], line: int) -> dict[str, Any] | None:
    """Effective rate, hourly fee and upfront of one row; None when it carries no price."""
    fee = checker.price(row["usd_per_hour"], line, "usd_per_hour")
    effective = checker.price(row.get("effective_usd_per_hour", ""), line,
                              "effective_usd_per_hour")
    upfront = checker.price(row.get("upfront_usd", ""), line, "upfront_usd",
                            maximum=MAX_UPFRONT_USD)
    rate = effective if effective is not None else fee
    if rate is None:
        checker.error(line, "usd_per_hour", "no price (give usd_per_hour or the effective rate)")
        return None
    if rate == 0 and str(row.get("purchase_option", "")).strip() in PAY_AS_YOU_GO:
        checker.error(line, "usd_per_hour", "an on-demand or spot price must be more than 0")
        return None
    payment = str(row.get("payment_option", "")).strip()
    return {
        "usd_per_hour": rate,
        "recurring_usd_per_hour": math.nan if fee is None else fee,
        "upfront_usd": 0.0 if payment == NO_UPFRONT else math.nan if upfront is None else upfront,
    }


def _row(checker: RowChecker, row: dict[str, Any], line: int,
         skipped: dict[str, int]) -> dict[str, Any] | None:
    option = str(row["purchase_option"]).strip()
    if option in SKIPPED_OPTIONS:
        skipped[SKIPPED_OPTIONS[option]] = skipped.get(SKIPPED_OPTIONS[option], 0) + 1
        return None
    if option not in PURCHASE_OPTIONS:
        checker.error(line, "purchase_option", f"{option!r} is not one of "
                      f"{', '.join(PURCHASE_OPTIONS)}")
        return None
    payment = _choice(checker, row, "payment_option", PAYMENT_OPTIONS, line)
    offering = _choice(checker, row, "offering_class", OFFERING_CLASSES, line)
    day = _day(checker, str(row["as_of"]), line)
    prices = _prices(checker, row, line)
    estimated = _flag(checker, row.get("is_estimated", ""), line)
    for name in ("provider", "region", "instance_type"):
        if not str(row[name]).strip():
            checker.error(line, name, "is required")
            return None
    if day is None or prices is None:
        return None
    return base_row(
        provider=str(row["provider"]).strip(), instance_type=str(row["instance_type"]).strip(),
        region=str(row["region"]).strip(), purchase_option=option, payment_option=payment,
        offering_class=offering, as_of=day, is_estimated=estimated, line=line, **prices,
    )


def parse(
    path: Path | str, *, as_of: date | None = None, provider: str | None = None
) -> ParsedPrices:
    """Parse a price table into canonical rows; `as_of` and `provider` are in every row."""
    checker = RowChecker(path)
    frame = read_csv_text(checker, path)
    check_columns(checker, frame.columns, REQUIRED, OPTIONAL)
    rows: list[dict[str, Any]] = []
    skipped: dict[str, int] = {}
    for index, record in enumerate(cast(list[dict[str, Any]], frame.to_dict("records"))):
        row = _row(checker, record, index + 2, skipped)
        if row is not None and (provider is None or row["provider"] == provider):
            rows.append(row)
    checker.raise_if_any()
    check_text(checker, rows)
    return ParsedPrices(to_frame(rows), skipped)
