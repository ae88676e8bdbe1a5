"""Reads of the grid-carbon tables: the current factor of every region, for plans and mixes."""

import pandas as pd

from pricing.carbon.parse import source_label
from pricing.models import DatacenterPue, GridIntensity

FACTOR_COLUMNS = ("provider", "region", "g_co2e_per_kwh", "pue", "accounting", "year",
                  "source", "as_of", "pue_source", "pue_region")


def _pues() -> dict[tuple[str, str], tuple[float, str]]:
    rows = DatacenterPue.objects.values_list("provider__slug", "region_code", "pue", "source")
    return {(p, r): (pue, source_label(s)) for p, r, pue, s in rows}


def carbon_factors(*, accounting: str) -> pd.DataFrame:
    """One row per (provider, region) with a current grid intensity on `accounting`
    ("location" or "market"): gCO2e/kWh, the region's PUE (else the provider's fleet
    average; a provider without one gets no row), data year and sources. FACTOR_COLUMNS."""
    pues = _pues()
    rows = GridIntensity.objects.filter(is_current=True, basis=accounting).values_list(
        "provider__slug", "region_code", "g_co2e_per_kwh", "year", "source", "as_of")
    records = []
    for provider, region, grams, year, source, as_of in rows:
        pue_region = region if (provider, region) in pues else ""
        if (provider, pue_region) not in pues:
            continue
        pue, pue_source = pues[(provider, pue_region)]
        records.append((provider, region, grams, pue, accounting, year, source_label(source),
                        as_of.isoformat(), pue_source, pue_region))
    return pd.DataFrame(records, columns=list(FACTOR_COLUMNS))


def providers_with_carbon_data() -> frozenset[str]:
    """Providers that publish any region grid intensity (location-based)."""
    return frozenset(GridIntensity.objects.filter(basis="location").values_list(
        "provider__slug", flat=True).distinct())
