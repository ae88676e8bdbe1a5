"""A price file checked against the catalog's current prices (pricing.services prices_import,
after importers/sanity.py checked the file alone). Pure: the caller passes the catalog's
current prices as a frame of CATALOG_COLUMNS.

- A price more than INSTANCE_RANGE_FACTOR times below the lowest, or above the highest,
  current price per GPU-hour of the same purchase option for the same instance type (any
  region), or, when the catalog has none, GPU_RANGE_FACTOR times for the same GPU (any
  provider), is refused: a p4d.24xlarge on-demand price of $0.0008/h (40,000x below list)
  would make every plan recommend it.
- A spot price above the catalog's current on-demand price of the same instance type and
  region is refused when the file itself holds no on-demand price for it (the file's own
  on-demand prices are checked in sanity.py): spot and on-demand often come from different
  files.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from planner.core.purchase_options import ON_DEMAND, PURCHASE_OPTION_WORDS, SPOT
from pricing.importers.common import PriceFileError
from pricing.importers.sanity import SPOT_TOLERANCE, row_line

CATALOG_COLUMNS: tuple[str, ...] = (
    "provider", "instance_type", "region", "purchase_option", "accelerator", "gpu_count",
    "usd_per_hour", "as_of", "source")
# How far (either way) an imported price may sit from the catalog's current range for the
# same instance type and option (regions of one cloud differ by less than 2x), and for the same
# GPU and option on any cloud (a marketplace V100 sells 17x below a hyperscaler's, shipped
# snapshots of 2026). A unit or typing error (per second, a lost digit or three) is 10x-3,600x.
INSTANCE_RANGE_FACTOR = 10.0
GPU_RANGE_FACTOR = 50.0


def _money(value: float) -> str:
    return f"{value:.6g}"


def _per_gpu(frame: pd.DataFrame) -> pd.Series:
    return frame["usd_per_hour"].astype(float) / frame["gpu_count"].clip(lower=1).astype(float)


def _with_accelerator(frame: pd.DataFrame, catalog: pd.DataFrame) -> pd.DataFrame:
    """The file's rows with the catalog's GPU for instance types that name none."""
    known = catalog.drop_duplicates(["provider", "instance_type"]).set_index(
        ["provider", "instance_type"])["accelerator"]
    keys = pd.MultiIndex.from_frame(frame[["provider", "instance_type"]])
    from_catalog = pd.Series(known.reindex(keys).to_numpy(), index=frame.index)
    given = frame["accelerator"].fillna("").astype(str)
    return frame.assign(accelerator=given.where(given != "", from_catalog.fillna("")))


def _extremes(catalog: pd.DataFrame, keys: list[str]) -> dict[Any, dict[str, Any]]:
    """Per `keys` (a tuple): the lowest and highest per-GPU price and the row of each, as
    `<column>_low` and `<column>_high`."""
    ranked = catalog.assign(per_gpu=_per_gpu(catalog)).sort_values("per_gpu", kind="stable")
    low = ranked.drop_duplicates(keys, keep="first").set_index(keys, drop=False)
    high = ranked.drop_duplicates(keys, keep="last").set_index(keys, drop=False)
    joined = low.add_suffix("_low").join(high.add_suffix("_high"))
    return {key: {str(name): value for name, value in values.items()}
            for key, values in joined.to_dict("index").items()}


def _where(row: dict[str, Any], side: str) -> str:
    return (f"{_money(row[f'per_gpu_{side}'])} USD per GPU-hour, {row[f'provider_{side}']} "
            f"{row[f'instance_type_{side}']} in {row[f'region_{side}']} from "
            f"{row[f'source_{side}']}, {row[f'as_of_{side}']}")


def _range_error(row: dict[Any, Any], reference: dict[str, Any], scope: str, factor: float,
                 file: str) -> PriceFileError | None:
    per_gpu = float(row["per_gpu"])
    option = PURCHASE_OPTION_WORDS.get(str(row["purchase_option"]), str(row["purchase_option"]))
    low, high = float(reference["per_gpu_low"]), float(reference["per_gpu_high"])
    if per_gpu * factor < low:
        words = f"{low / per_gpu:,.0f}x below the lowest"
        where = _where(reference, "low")
    elif per_gpu > high * factor:
        words = f"{per_gpu / high:,.0f}x above the highest"
        where = _where(reference, "high")
    else:
        return None
    return PriceFileError(
        file, row_line(row), "usd_per_hour",
        f"{_money(float(row['usd_per_hour']))} USD/h ({_money(per_gpu)} USD per GPU-hour) "
        f"for {row['instance_type']} in {row['region']} is {words} current {option} price of "
        f"{scope} ({where}); a price more than {factor:.0f}x outside the catalog's range is "
        "refused as a likely unit or typing error")


def range_errors(frame: pd.DataFrame, catalog: pd.DataFrame, *, file: str
                 ) -> list[PriceFileError]:
    """Prices far outside the catalog's current range for the same instance type (else GPU)
    and purchase option."""
    priced = catalog[catalog["usd_per_hour"].astype(float) > 0]
    rows = frame[frame["usd_per_hour"].astype(float) > 0]
    if priced.empty or rows.empty:
        return []
    rows = _with_accelerator(rows, priced)
    rows = rows.assign(per_gpu=_per_gpu(rows))
    by_instance = _extremes(priced, ["provider", "instance_type", "purchase_option"])
    by_gpu = _extremes(priced[priced["accelerator"] != ""], ["accelerator", "purchase_option"])
    errors = []
    for row in rows.to_dict("records"):
        key = (row["provider"], row["instance_type"], row["purchase_option"])
        gpu_key = (row["accelerator"], row["purchase_option"])
        if key in by_instance:
            reference, factor = by_instance[key], INSTANCE_RANGE_FACTOR
            scope = f"{row['provider']} {row['instance_type']}"
        elif gpu_key in by_gpu:
            reference, factor = by_gpu[gpu_key], GPU_RANGE_FACTOR
            scope = f"the {row['accelerator']} GPU on any cloud"
        else:
            continue
        error = _range_error(row, reference, scope, factor, file)
        if error is not None:
            errors.append(error)
    return errors


def spot_errors(frame: pd.DataFrame, catalog: pd.DataFrame, *, file: str
                ) -> list[PriceFileError]:
    """Spot prices above the catalog's current on-demand price of the same instance type and
    region, for spot rows whose on-demand price is not in the file."""
    where = ["provider", "instance_type", "region"]
    spot = frame[frame["purchase_option"] == SPOT]
    on_demand = catalog[(catalog["purchase_option"] == ON_DEMAND)
                        & (catalog["usd_per_hour"].astype(float) > 0)]
    if spot.empty or on_demand.empty:
        return []
    in_file = frame[frame["purchase_option"] == ON_DEMAND][where].drop_duplicates()
    spot = spot.merge(in_file, on=where, how="left", indicator=True)
    spot = spot[spot["_merge"] == "left_only"].drop(columns="_merge")
    reference = on_demand[[*where, "usd_per_hour", "as_of", "source"]].drop_duplicates(where)
    both = spot.merge(reference.rename(columns={"usd_per_hour": "usd_per_hour_od",
                                                "as_of": "as_of_od", "source": "source_od"}),
                      on=where)
    above = both[both["usd_per_hour"].astype(float)
                 > both["usd_per_hour_od"].astype(float) * SPOT_TOLERANCE]
    return [PriceFileError(
        file, row_line(row), "usd_per_hour",
        f"spot price {_money(float(row['usd_per_hour']))} USD/h is above the catalog's current "
        f"on-demand price {_money(float(row['usd_per_hour_od']))} USD/h of "
        f"{row['instance_type']} in {row['region']} (from {row['source_od']}, "
        f"{row['as_of_od']})") for row in above.to_dict("records")]


def catalog_errors(frame: pd.DataFrame, catalog: pd.DataFrame, *, file: str
                   ) -> list[PriceFileError]:
    """Every error above, for a checked price file and the catalog's current prices."""
    if frame.empty or catalog.empty:
        return []
    return range_errors(frame, catalog, file=file) + spot_errors(frame, catalog, file=file)
