"""Energy and carbon of plan options (vectorized over rows).

    energy_kwh = GPUs × GPU board power (TDP) × whole-run hours / 1000
    co2e_kg    = energy_kwh × PUE × grid intensity (gCO2e/kWh) / 1000

What the energy counts: the GPUs' board power at TDP for every hour the run holds them (the
simulator's whole-run time, with goodput, and for spot the expected rework and restarts). It
leaves out the host (CPUs, memory, NICs, switches): PUE adds the facility's cooling and power
losses on top of the GPUs only, so the figure is a GPU-side estimate, near the metered "power
from GPUs" that model builders publish. The P10/P90 band scales with the time band (energy is
power × time at a fixed power). A region without a published intensity, or a provider without
a PUE, gets no CO2e (NaN) and a note saying why, never a guess.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from planner.core import formatting as fmt
from planner.core.cloud import ENERGY_COUNTS as CLOUD_ENERGY_COUNTS

ACCOUNTING_CHOICES: tuple[tuple[str, str], ...] = (
    ("location", "Location-based (the region's grid average)"),
    ("market", "Market-based (net of the provider's clean-energy purchases, GCP only)"))
ACCOUNTINGS = tuple(value for value, _ in ACCOUNTING_CHOICES)
FACTOR_COLUMNS = ("provider", "region", "g_co2e_per_kwh", "pue", "accounting", "year",
                  "source", "as_of", "pue_source", "pue_region")
# What an option's energy counts: whole-run GPU-hours (goodput, spot rework) at TDP.
ENERGY_COUNTS = ("Whole-run GPU-hours (with goodput and, on spot, expected rework): "
                 + CLOUD_ENERGY_COUNTS)


@dataclass(frozen=True)
class CarbonFactors:
    """Grid intensity and PUE per (provider, region) on one accounting basis.

    `table` has FACTOR_COLUMNS (g_co2e_per_kwh >= 0, pue >= 1); `providers_with_data` are the
    providers publishing any location-based intensity (to word a missing market factor)."""

    table: pd.DataFrame
    accounting: str = "location"
    providers_with_data: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if self.accounting not in ACCOUNTINGS:
            raise ValueError(f"carbon accounting must be one of {ACCOUNTINGS}")
        missing = [c for c in FACTOR_COLUMNS if c not in self.table.columns]
        if missing:
            raise ValueError(f"carbon factors: missing columns {missing}")
        grams = self.table["g_co2e_per_kwh"].to_numpy(dtype=np.float64)
        pue = self.table["pue"].to_numpy(dtype=np.float64)
        if not (np.isfinite(grams).all() and (grams >= 0).all() and (pue >= 1).all()):
            raise ValueError("carbon factors: intensity must be >= 0 and PUE >= 1")
        if self.table.duplicated(["provider", "region"]).any():
            raise ValueError("carbon factors: one row per provider and region")


NO_FACTORS = CarbonFactors(pd.DataFrame(columns=list(FACTOR_COLUMNS)))


def _basis(row: dict[str, Any]) -> dict[str, Any]:
    return {"accounting": row["accounting"], "g_co2e_per_kwh": float(row["g_co2e_per_kwh"]),
            "year": fmt.data_year(row["year"]), "source": row["source"], "as_of": row["as_of"],
            "pue": float(row["pue"]), "pue_source": row["pue_source"],
            "pue_scope": f"region {row['region']}" if row["pue_region"] else "fleet average"}


def _missing_note(provider: str, region: str, factors: CarbonFactors) -> str:
    name = fmt.label(provider)
    if provider not in factors.providers_with_data:
        return f"no carbon data: {name} publishes no grid intensity or PUE for its regions"
    if factors.accounting == "market":
        return (f"no carbon data: no market-based factor for {name} {region} (only GCP's "
                "carbon-free-energy-adjusted factors are published); location-based covers it")
    return f"no carbon data for {name} {region}"


def _objects(values: list[Any]) -> np.ndarray:
    """A 1-D object array of `values` (dicts and strings kept whole)."""
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def option_carbon(providers: pd.Series, regions: pd.Series, energy_kwh: np.ndarray,
                  factors: CarbonFactors) -> dict[str, np.ndarray]:
    """co2e_kg per row (NaN without data), its per-row factors: g_co2e_per_kwh, pue,
    carbon_basis (dict: accounting, intensity, year, source, PUE and its scope; None without
    data) and carbon_note ("" or why there is no CO2e)."""
    # Factorized per (provider, region) pair: one lookup per distinct place, not per row.
    provider_codes, provider_names = pd.factorize(providers)
    region_codes, region_names = pd.factorize(regions)
    pair = provider_codes.astype(np.int64) * (len(region_names) + 1) + region_codes
    distinct, codes = np.unique(pair, return_inverse=True)
    uniques = [(str(provider_names[p // (len(region_names) + 1)]),
                str(region_names[p % (len(region_names) + 1)])) for p in distinct]
    records = cast(list[dict[str, Any]], factors.table.to_dict("records"))
    found = {(r["provider"], r["region"]): r for r in records}
    rows = [found.get(key) for key in uniques]
    grams = np.array([np.nan if r is None else r["g_co2e_per_kwh"] for r in rows],
                     dtype=np.float64)[codes]
    pue = np.array([np.nan if r is None else r["pue"] for r in rows], dtype=np.float64)[codes]
    basis = _objects([None if r is None else _basis(r) for r in rows])[codes]
    notes = _objects(["" if r is not None else _missing_note(p, g, factors)
                      for r, (p, g) in zip(rows, uniques, strict=True)])[codes]
    return {"g_co2e_per_kwh": grams, "pue": pue,
            "co2e_kg": np.asarray(energy_kwh, dtype=np.float64) * pue * grams / 1000.0,
            "carbon_basis": basis, "carbon_note": notes}


def energy_band(energy_kwh: np.ndarray, hours: np.ndarray,
                band_hours: Collection[np.ndarray]) -> list[np.ndarray]:
    """Energy at each of `band_hours` (e.g. P10 and P90 time) for runs that use `energy_kwh`
    in `hours`: power is fixed, so energy scales with time."""
    with np.errstate(divide="ignore", invalid="ignore"):
        per_hour = np.where(hours > 0, energy_kwh / hours, np.nan)
    return [np.asarray(per_hour * h, dtype=np.float64) for h in band_hours]
