"""The plan's storage and power levers: build their core inputs from a scenario and apply them.

`plan_power_caps` caps the swept configurations before they are priced (the knob
`power_limit_pct`); `plan_levers_attach` puts a storage plan on every option of the plan
document (planner.plans.core.storage_plan) and each option's power cap and trade
(planner.plans.core.power). Tables: pricing.shipped_tables.
"""

from typing import Any

import pandas as pd

from planner.core.power_caps import PowerCap
from planner.plans.core.assumptions import PlanAssumptions
from planner.plans.core.power import attach_power_caps, capped_configs, power_caps
from planner.plans.core.storage import StorageInputs, parse_retention
from planner.plans.core.storage_plan import attach_storage_plans, tier_sources
from planner.plans.scenario import Scenario
from pricing.shipped_tables import power_curves, storage_tiers
from simulator.services import Simulator


def plan_power_caps(scenario: Scenario, simulator: Simulator, configs: pd.DataFrame
                    ) -> tuple[pd.DataFrame, dict[str, PowerCap]]:
    """The configurations under the scenario's power cap and the cap per GPU ({} uncapped)."""
    pct = scenario.data.get("power_limit_pct")
    if pct is None or float(pct) >= 100.0:
        return configs, {}
    caps = power_caps(list(configs["gpu"].astype(str)), float(pct),
                      simulator.inputs.workload.kind, power_curves())
    return capped_configs(configs, caps), caps


def storage_inputs(scenario: Scenario, simulator: Simulator,
                   assumptions: PlanAssumptions) -> StorageInputs:
    """What every option's storage plan shares, from the scenario and the goodput line."""
    data = scenario.data
    goodput = simulator.inputs.goodput_assumptions(
        simulator.calibration.production_overhead_fraction)
    return StorageInputs(
        params=float(simulator.inputs.workload.params),
        checkpoint_gb=data.get("checkpoint_gb"), dataset_gb=assumptions.dataset_gb,
        retention=parse_retention(data.get("retention")),
        storage_months=assumptions.storage_months,
        compression_ratio=float(data.get("checkpoint_compression_ratio", 1.0)),
        is_async=bool(data.get("checkpoint_async")),
        interval_hours=data.get("checkpoint_every_hours"),
        write_gbytes_per_s_per_node=assumptions.checkpoint_write_gbytes_per_s,
        max_aggregate_gbytes_per_s=assumptions.checkpoint_max_aggregate_gbytes_per_s,
        stall_seconds=goodput.checkpoint_write_seconds,
        failures_per_gpu_hour=goodput.failures_per_gpu_hour)


def plan_levers_attach(document: dict[str, Any], *, scenario: Scenario, simulator: Simulator,
                       assumptions: PlanAssumptions, caps: dict[str, PowerCap]) -> None:
    """Storage plans on every option, and the power caps when the plan has one (in place)."""
    inputs = storage_inputs(scenario, simulator, assumptions)
    attach_storage_plans(document.get("options", []), storage_tiers(), inputs)
    document["storage"] = {"retention": inputs.retention.text,
                           "compression_ratio": inputs.compression_ratio,
                           "is_async": inputs.is_async,
                           "interval_hours": inputs.interval_hours,
                           "sources": tier_sources(storage_tiers())}
    if caps:
        attach_power_caps(document, caps)
