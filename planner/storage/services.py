"""The storage what-if service: checked inputs -> the fleet priced per provider and policy."""

from typing import Any

from planner.storage.core.fleet import price_fleet
from planner.storage.core.inputs import (
    FIELD_REPORT_EXAMPLE,
    FIELD_REPORT_USD_PER_YEAR,
    fleet_inputs,
)
from pricing.shipped_tables import storage_tiers


def storage_whatif(*, raw: dict[str, Any]) -> dict[str, Any]:
    """The what-if document (JSON-safe); ValueError "field: message" on bad input."""
    inputs, providers = fleet_inputs(raw)
    result = price_fleet(storage_tiers(), inputs, providers)
    before, after = FIELD_REPORT_USD_PER_YEAR
    result["field_report"] = {
        "before_usd_per_year": before, "after_usd_per_year": after,
        "saving_pct": 100.0 * (1.0 - after / before),
        "words": ("A computer-vision team moved intermediate checkpoints from block volumes "
                  "to S3 Intelligent-Tiering: checkpoints compressed 65 % smaller, a "
                  "lifecycle rule deleting versions older than 30 days, gp3 volumes only for "
                  "hot data; yearly storage bill $120k -> $38k."),
        "example_inputs": FIELD_REPORT_EXAMPLE}
    return result
