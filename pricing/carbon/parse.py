"""Read region_carbon.csv (pricing/data/carbon, see its SOURCES.md) into grid-intensity and PUE
tables, and choose the intensity plans use per region. Pure: no Django; ValueError on bad input.

Choice per (provider, region, basis): the row with the latest stated data year, then the
source ranked first in SOURCE_RANK (Google's own region data over Cloud Carbon Footprint over
CodeCarbon's rounded copy). Fallback averages ("UNKNOWN" regions) are not a region's value and
are left out: a region without its own row has no carbon data.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pandas as pd

REQUIRED = ("provider", "region_code", "location", "metric", "value", "unit", "year",
            "cfe_fraction", "source", "source_url", "source_commit", "licence", "notes")
PROVIDER_SLUGS = {"aws": "aws", "azure": "azure", "gcp": "gcp"}
LOCATION_METRICS = ("grid_carbon_intensity", "lifecycle_grid_carbon_intensity",
                    "grid_emissions_factor")
MARKET_METRICS = ("cfe_adjusted_emissions_factor",)
PUE_METRIC = "pue"
FLEET = "(fleet average)"
FALLBACK_REGIONS = ("unknown",)
# The date of each pinned source commit (SOURCES.md): the as-of date of its values.
COMMIT_DATES = {
    "49f3f26bfd682305e8d9b572fea1f811900421a9": date(2025, 12, 3),
    "b7a049c7d25c0022919ab9010199dd9e77aa4577": date(2024, 3, 25),
    "b05965e43b690cdc53787c7577adbe6e2caf4ed9": date(2024, 7, 13),
}
# Higher wins between rows of the same data year (matched on the start of `source`).
SOURCE_RANK = (("Google Cloud region carbon data", 3), ("Cloud Carbon Footprint", 2),
               ("CCF", 2), ("CodeCarbon", 1))

INTENSITY_COLUMNS = ("provider", "region_code", "basis", "metric", "g_co2e_per_kwh", "year",
                     "data_year", "cfe_fraction", "location", "source", "source_url",
                     "source_commit", "as_of", "licence", "notes", "is_current")
PUE_COLUMNS = ("provider", "region_code", "pue", "year", "source", "source_url",
               "source_commit", "as_of", "licence", "notes")


@dataclass(frozen=True)
class CarbonTables:
    """`intensities` (INTENSITY_COLUMNS, gCO2e/kWh), `pues` (PUE_COLUMNS, region "" = fleet)
    and how many source rows were left out, by reason."""

    intensities: pd.DataFrame
    pues: pd.DataFrame
    skipped: dict[str, int]


def data_year(text: str) -> int | None:
    """2020 from "2020 (eGRID2020)"; None from "unstated ..." (a year only when it leads)."""
    found = re.match(r"\s*(\d{4})\b", text)
    return int(found.group(1)) if found else None


# Short names of the sources, for a basis line ("Google region-carbon-info 2024").
SOURCE_LABELS = (("Google Cloud region carbon data", "Google region-carbon-info"),
                 ("Cloud Carbon Footprint", "Cloud Carbon Footprint"),
                 ("CCF", "Cloud Carbon Footprint"), ("CodeCarbon", "CodeCarbon"))


def source_label(source: str) -> str:
    return next((name for prefix, name in SOURCE_LABELS if source.startswith(prefix)), source)


def source_rank(source: str) -> int:
    return next((rank for prefix, rank in SOURCE_RANK if source.startswith(prefix)), 0)


def _text(value: object) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _checked(frame: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise ValueError(f"region_carbon.csv: missing columns {missing}")
    values = pd.to_numeric(frame["value"], errors="coerce")
    for line, (value, provider, commit) in enumerate(
            zip(values, frame["provider"], frame["source_commit"], strict=True), start=2):
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"region_carbon.csv line {line}: value must be a number >= 0")
        if _text(provider).lower() not in PROVIDER_SLUGS:
            raise ValueError(f"region_carbon.csv line {line}: unknown provider {provider!r}")
        if _text(commit) not in COMMIT_DATES:
            raise ValueError(f"region_carbon.csv line {line}: unknown source_commit {commit!r}")
    return frame.assign(value=values)


def _common(frame: pd.DataFrame) -> pd.DataFrame:
    texts = {c: frame[c].map(_text) for c in ("location", "year", "source", "source_url",
                                               "source_commit", "licence", "notes")}
    return pd.DataFrame({
        "provider": frame["provider"].str.lower().map(PROVIDER_SLUGS),
        # Azure names are written "EastUS" by CCF and "eastus" by the price catalogs.
        "region_code": frame["region_code"].map(_text).str.strip().str.lower(),
        **texts,
        "as_of": texts["source_commit"].map(COMMIT_DATES),
    })


def _intensities(frame: pd.DataFrame) -> pd.DataFrame:
    common = _common(frame)
    table = common.assign(
        basis=frame["metric"].map(lambda m: "market" if m in MARKET_METRICS else "location"),
        metric=frame["metric"], g_co2e_per_kwh=frame["value"].astype(float),
        data_year=common["year"].map(data_year),
        cfe_fraction=pd.to_numeric(frame["cfe_fraction"], errors="coerce"),
    )
    return _mark_current(table.reset_index(drop=True))


def _mark_current(table: pd.DataFrame) -> pd.DataFrame:
    """is_current on the latest stated year, then the best-ranked source, per region and basis."""
    ranked = table.assign(
        _year=table["data_year"].fillna(-1), _rank=table["source"].map(source_rank))
    ranked = ranked.sort_values(["_year", "_rank", "g_co2e_per_kwh"], ascending=False,
                                kind="stable")
    best = ranked.drop_duplicates(["provider", "region_code", "basis"]).index
    current = table.index.isin(best)
    return table.assign(is_current=current)[list(INTENSITY_COLUMNS)]


def _pues(frame: pd.DataFrame) -> pd.DataFrame:
    common = _common(frame)
    region = common["region_code"].where(frame["region_code"] != FLEET, "")
    table = common.assign(region_code=region, pue=frame["value"].astype(float))
    if (table["pue"] < 1).any():
        raise ValueError("region_carbon.csv: a PUE below 1 (facility energy < IT energy)")
    return table[list(PUE_COLUMNS)].reset_index(drop=True)


def carbon_tables(frame: pd.DataFrame) -> CarbonTables:
    """Intensity and PUE tables from the rows of region_carbon.csv (columns REQUIRED)."""
    frame = _checked(frame)
    metric = frame["metric"].map(_text)
    known = metric.isin([*LOCATION_METRICS, *MARKET_METRICS, PUE_METRIC])
    fallback = frame["region_code"].map(_text).str.lower().isin(FALLBACK_REGIONS)
    skipped = {"provider-wide fallback average (not a region's value)": int(fallback.sum()),
               "unknown metric": int((~known).sum())}
    intensity = frame[known & ~fallback & (metric != PUE_METRIC)]
    keys = intensity.assign(r=intensity["region_code"].str.lower())
    duplicated = keys.duplicated(["provider", "r", "metric", "source", "year"])
    if duplicated.any():
        line = int(duplicated.to_numpy().nonzero()[0][0])
        raise ValueError(f"region_carbon.csv: repeated region, metric, source and year "
                         f"({intensity.iloc[line]['region_code']})")
    return CarbonTables(_intensities(intensity), _pues(frame[metric == PUE_METRIC]),
                        {k: v for k, v in skipped.items() if v})


def read_carbon(path: Path) -> CarbonTables:
    """carbon_tables of the CSV at `path` (every column read as text first)."""
    return carbon_tables(pd.read_csv(path, dtype=str, keep_default_na=False))
