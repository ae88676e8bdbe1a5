"""The carbon factors a plan uses (from the catalog) and what its document says about them."""

from typing import Any

from planner.plans.core.carbon import ENERGY_COUNTS, CarbonFactors
from planner.plans.scenario import Scenario
from pricing.carbon.selectors import carbon_factors, providers_with_carbon_data


def plan_carbon_factors(scenario: Scenario) -> CarbonFactors:
    """Grid intensity and PUE per region on the scenario's accounting basis (blank: location)."""
    accounting = scenario.data.get("carbon_accounting") or "location"
    return CarbonFactors(carbon_factors(accounting=accounting), accounting,
                         providers_with_carbon_data())


def carbon_summary(factors: CarbonFactors) -> dict[str, Any]:
    """The plan document's "carbon" part: the accounting basis, what energy counts and the
    sources of the factors it used."""
    table = factors.table
    sources = sorted({(str(s), str(d)) for s, d in zip(table["source"], table["as_of"],
                                                       strict=True)})
    return {"accounting": factors.accounting, "energy_counts": ENERGY_COUNTS,
            "n_regions": len(table),
            "sources": [{"source": s, "as_of": d} for s, d in sources],
            "pue_sources": sorted(set(map(str, table["pue_source"])))}
