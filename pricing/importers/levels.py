"""Derive unlisted commitment prices from published discount levels.

`commitment_discount_levels.csv` gives, per instance type in one reference region, the discount
of a 1- or 3-year commitment against on-demand. Applying that discount to the on-demand price of
the same instance type in another region gives a derived price, marked with its basis.
"""

from pathlib import Path
from typing import Any

import pandas as pd

from planner.core.providers import AWS, GCP
from planner.core.purchase_options import COMMITTED_BY_YEARS, RESERVED_BY_YEARS
from pricing.importers.common import (
    ParsedPrices,
    RowChecker,
    base_row,
    check_columns,
    read_csv_text,
    to_frame,
)

REQUIRED = {"cloud", "instance_type", "region", "term", "commitment_type", "discount_pct"}
OPTIONAL = {"gpu", "gpu_count", "on_demand_usd_hr", "committed_usd_hr", "derived_from"}


def _option(cloud: str, term: str, kind: str) -> str | None:
    years = {"1yr": 1, "3yr": 3}.get(term)
    if years is None:
        return None
    if cloud == AWS and "RI" in kind:
        return RESERVED_BY_YEARS[years]
    if cloud == GCP and "CUD" in kind:
        return COMMITTED_BY_YEARS[years]
    return None


def read_levels(path: Path | str) -> pd.DataFrame:
    """Levels with a purchase option and a checked discount (0-100 %) per row."""
    checker = RowChecker(path)
    frame = read_csv_text(checker, path)
    check_columns(checker, frame.columns, REQUIRED, OPTIONAL)
    frame["line"] = range(2, len(frame) + 2)
    frame["discount"] = [
        checker.price(v, n, "discount_pct")
        for v, n in zip(frame["discount_pct"], frame["line"], strict=False)
    ]
    for value, line in zip(frame["discount"], frame["line"], strict=False):
        if value is not None and value >= 100:
            checker.error(line, "discount_pct", f"{value} is not below 100 %")
    checker.raise_if_any()
    frame["purchase_option"] = [
        _option(c, t, k)
        for c, t, k in zip(frame["cloud"], frame["term"], frame["commitment_type"], strict=False)
    ]
    return frame[frame["purchase_option"].notna() & frame["discount"].notna()]


def derive_prices(
    levels: pd.DataFrame, on_demand: pd.DataFrame, listed: set[tuple[Any, ...]]
) -> ParsedPrices:
    """Derived rows for every (instance, region) with an on-demand price but no listed option.

    `on_demand`: columns provider, instance_type, accelerator, gpu_count, region, usd_per_hour,
    as_of. `listed`: (provider, instance_type, region, purchase_option) that already have a
    listed price and so get no derived one.
    """
    merged = on_demand.merge(
        levels[
            [
                "cloud",
                "instance_type",
                "region",
                "term",
                "commitment_type",
                "discount",
                "purchase_option",
                "line",
            ]
        ].rename(columns={"cloud": "provider", "region": "level_region"}),
        on=["provider", "instance_type"],
    )
    rows: list[dict[str, Any]] = []
    for row in merged.to_dict("records"):
        if (row["provider"], row["instance_type"], row["region"], row["purchase_option"]) in listed:
            continue
        basis = (
            f"on-demand x (1 - {row['discount']:.1f}%): {row['term']} {row['commitment_type']} "
            f"discount of {row['instance_type']} in {row['level_region']} "
            "(commitment_discount_levels.csv)"
        )
        rows.append(
            base_row(
                provider=row["provider"],
                instance_type=row["instance_type"],
                accelerator=row["accelerator"],
                gpu_count=row["gpu_count"],
                region=row["region"],
                purchase_option=row["purchase_option"],
                usd_per_hour=round(row["usd_per_hour"] * (1 - row["discount"] / 100), 6),
                as_of=row["as_of"],
                is_derived=True,
                derivation_basis=basis,
                line=row["line"],
            )
        )
    return ParsedPrices(to_frame(rows))
