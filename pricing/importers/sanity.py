"""Checks every parsed price file passes before anything is written (pricing.services
prices_import): prices that would poison every plan and page are refused with the file, line
and field. Pure: the caller passes today's date.

- a price per GPU-hour below PRICE_FLOOR_USD_PER_GPU_HOUR (1e-300 passes "> 0" and is stored
  as $0.000000) or above PRICE_CEILING_USD_PER_GPU_HOUR; 0 stays allowed where it means
  something (a commitment paid all upfront; a 0 on-demand or spot price is skipped later);
- an as-of date before EARLIEST_AS_OF or after today + 1 day (a 9999 price is current forever);
- two rows for the same price key (instance, region, option, payment, offering, date) with
  different prices: which one is right cannot be told (identical repeats are dropped, counted);
- a spot price above the on-demand price of the same instance, region and date;
- a commitment's effective rate below its own hourly fee (the upfront cannot be negative).
"""

from __future__ import annotations

import math
from datetime import date, timedelta
from typing import Any

import pandas as pd

from planner.core.purchase_options import ON_DEMAND, SPOT
from pricing.importers.common import ParsedPrices, PriceFileError, PriceFileErrors

PRICE_FLOOR_USD_PER_GPU_HOUR = 0.0001
PRICE_CEILING_USD_PER_GPU_HOUR = 1000.0
EARLIEST_AS_OF = date(2015, 1, 1)
# Spot above on-demand by more than rounding is refused (here and in catalog_check.py).
SPOT_TOLERANCE = 1.0001
KEY = ["provider", "instance_type", "region", "purchase_option", "payment_option",
       "offering_class", "as_of"]


def row_line(row: dict[Any, Any]) -> int | None:
    """The file line a parsed row came from (its `line` column), None when unknown."""
    line = row.get("line")
    try:
        return int(line) if line is not None and not pd.isna(line) else None
    except (TypeError, ValueError):
        return None


def _money(value: float) -> str:
    return f"{value:.10g}"


def _row_errors(row: dict[Any, Any], file: str, today: date) -> list[PriceFileError]:
    errors: list[PriceFileError] = []
    line = row_line(row)
    price = float(row["usd_per_hour"])
    gpus = int(row.get("gpu_count") or 0) or 1
    per_gpu = price / gpus
    if not math.isfinite(price):
        errors.append(PriceFileError(file, line, "usd_per_hour", "not a finite number"))
    elif 0 < per_gpu < PRICE_FLOOR_USD_PER_GPU_HOUR:
        errors.append(PriceFileError(
            file, line, "usd_per_hour",
            f"{_money(price)} USD per instance-hour is {_money(per_gpu)} USD per GPU-hour, "
            f"below the floor of {PRICE_FLOOR_USD_PER_GPU_HOUR} USD per GPU-hour"))
    elif per_gpu > PRICE_CEILING_USD_PER_GPU_HOUR:
        errors.append(PriceFileError(
            file, line, "usd_per_hour",
            f"{_money(per_gpu)} USD per GPU-hour is above the ceiling of "
            f"{PRICE_CEILING_USD_PER_GPU_HOUR:,.0f} USD per GPU-hour"))
    day = row.get("as_of")
    if not isinstance(day, date) or day < EARLIEST_AS_OF or day > today + timedelta(days=1):
        errors.append(PriceFileError(
            file, line, "as_of", f"{day} is outside {EARLIEST_AS_OF} to {today + timedelta(1)} "
            "(today + 1 day)"))
    fee = row.get("recurring_usd_per_hour")
    if (fee is not None and not pd.isna(fee) and math.isfinite(price)
            and price < float(fee) - 1e-9):
        errors.append(PriceFileError(
            file, line, "usd_per_hour",
            f"effective rate {_money(price)} USD/h is below its hourly fee {_money(float(fee))} "
            "USD/h (an upfront cannot be negative)"))
    return errors


def _duplicates(frame: pd.DataFrame, file: str) -> tuple[pd.DataFrame, list[PriceFileError], int]:
    """Conflicting repeats of a price key are errors; identical ones are dropped (counted)."""
    keyed = frame.assign(_price=frame["usd_per_hour"].astype(float).round(9))
    repeated = keyed[keyed.duplicated(KEY, keep=False)]
    errors: list[PriceFileError] = []
    for _, group in repeated.groupby(KEY, sort=False, dropna=False):
        if group["_price"].nunique() > 1:
            rows = group.to_dict("records")
            lines = ", ".join(str(row_line(r)) for r in rows)
            prices = ", ".join(_money(float(r["usd_per_hour"])) for r in rows)
            first = rows[0]
            errors.append(PriceFileError(
                file, row_line(rows[-1]), "usd_per_hour",
                f"conflicting duplicate: lines {lines} price {first['instance_type']} "
                f"{first['region']} {first['purchase_option']} on {first['as_of']} at "
                f"{prices} USD/h; keep one"))
    exact = keyed.duplicated(KEY + ["_price"], keep="first")
    return frame[~exact.to_numpy()].reset_index(drop=True), errors, int(exact.sum())


def _spot_above_on_demand(frame: pd.DataFrame, file: str) -> list[PriceFileError]:
    where = ["provider", "instance_type", "region", "as_of"]
    on_demand = frame[frame["purchase_option"] == ON_DEMAND].drop_duplicates(where)
    spot = frame[frame["purchase_option"] == SPOT]
    if on_demand.empty or spot.empty:
        return []
    both = spot.merge(on_demand[[*where, "usd_per_hour"]], on=where, suffixes=("", "_od"))
    above = both[both["usd_per_hour"] > both["usd_per_hour_od"] * SPOT_TOLERANCE]
    return [PriceFileError(
        file, row_line(row), "usd_per_hour",
        f"spot price {_money(row['usd_per_hour'])} USD/h is above the on-demand price "
        f"{_money(row['usd_per_hour_od'])} USD/h of {row['instance_type']} in {row['region']}")
        for row in above.to_dict("records")]


def check_prices(parsed: ParsedPrices, *, file: str, today: date) -> ParsedPrices:
    """The parsed prices with identical repeats dropped; PriceFileErrors naming file, line and
    field for anything above."""
    frame = parsed.frame
    if frame.empty:
        return parsed
    errors = [error for row in frame.to_dict("records")
              for error in _row_errors(row, file, today)]
    frame, conflicts, repeats = _duplicates(frame, file)
    errors += conflicts + _spot_above_on_demand(frame, file)
    if errors:
        raise PriceFileErrors(sorted(errors, key=lambda e: (e.line or 0, e.field)))
    skipped = dict(parsed.skipped)
    if repeats:
        skipped["repeated row (same price twice)"] = repeats
    return ParsedPrices(frame, skipped)
