"""Plan services: sweep the catalog for a scenario, price every option, rank and store it."""

from dataclasses import dataclass, replace
from typing import Any

import pandas as pd
from django.db import transaction
from django.utils import timezone

from planner.plans.core.fields import ASSUMPTION_FIELDS
from planner.plans.core.plan import (
    PlanAssumptions,
    PlanConstraints,
    PlanResult,
    hazard_per_instance_hour,
    plan,
)
from planner.plans.models import PlanScenario
from planner.plans.scenario import Scenario, scenario_from_input, simulation_request
from planner.runs import Attempt, run_enqueue, run_execute, run_progress
from pricing.models import InstanceType
from pricing.selectors import current_prices
from simulator.core import LayoutConstraints, best_layout
from simulator.hardware_adapter import hardware
from simulator.requests import inputs_from_request
from simulator.services import calibration_for, catalog_instances_frame, catalog_sweep

# Options stored per plan: the cheapest ones plus every recommended and Pareto option.
OPTIONS_KEPT = 500
NODE_COUNTS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


@dataclass(frozen=True)
class PlanInputs:
    configs: pd.DataFrame
    prices: pd.DataFrame
    n_instance_types: int


def _node_counts(scenario: Scenario) -> tuple[int, ...]:
    return tuple(n for n in NODE_COUNTS if n <= scenario.data.get("max_nodes", 128))


def plan_configurations(*, scenario: Scenario, owner_id: int | None) -> PlanInputs:
    """The simulator's fastest fitting layout per allowed instance type and node count."""
    instances = catalog_instances_frame(
        gpus=scenario.data.get("gpus"), providers=scenario.data.get("providers")
    )
    inputs = inputs_from_request(simulation_request(scenario))
    configs = catalog_sweep(inputs, calibration_for(owner_id), _node_counts(scenario), instances)
    if not configs.empty:
        capacity = instances.set_index("instance_key")["memory_capacity_gib"]
        configs = configs.assign(memory_capacity_gib=configs["instance_key"].map(capacity))
    return PlanInputs(configs, pd.DataFrame(), len(instances))


def plan_prices(*, scenario: Scenario, instance_keys: list[int]) -> pd.DataFrame:
    """Current prices of the allowed instance types, regions and purchase options."""
    data = scenario.data
    prices = current_prices(
        instance_type_ids=instance_keys,
        purchase_options=data["purchase_options"],
        regions=data.get("regions") or None,
    )
    rows = prices.values_list(
        "instance_type_id",
        "instance_type__provider__slug",
        "region__code",
        "instance_type__name",
        "purchase_option",
        "usd_per_hour",
        "as_of",
        "source__name",
        "is_derived",
    )
    frame = pd.DataFrame(
        list(rows),
        columns=[
            "instance_key",
            "provider",
            "region",
            "instance_type",
            "purchase_option",
            "usd_per_hour",
            "as_of",
            "source",
            "is_derived",
        ],
    )
    frame["usd_per_hour"] = frame["usd_per_hour"].astype(float)
    return frame


def _assumptions(scenario: Scenario) -> PlanAssumptions:
    overrides: dict[str, Any] = {
        k: scenario.data[k] for k in ASSUMPTION_FIELDS if k in scenario.data}
    base = PlanAssumptions()
    bands = scenario.data.get("spot_interruptions_pct_per_month") or {}
    if bands:
        # A band the user gives replaces both the provider default and its per-GPU defaults.
        hazards = dict(base.spot_hazard_per_instance_hour)
        hazards.update({p: hazard_per_instance_hour(pct / 100) for p, pct in bands.items()})
        by_gpu = {p: v for p, v in base.spot_hazard_per_instance_hour_by_gpu.items()
                  if p not in bands}
        overrides.update(spot_hazard_per_instance_hour=hazards,
                         spot_hazard_per_instance_hour_by_gpu=by_gpu)
    return replace(base, **overrides)


def _constraints(scenario: Scenario) -> PlanConstraints:
    data = scenario.data
    return PlanConstraints(
        deadline_hours=scenario.deadline_hours, budget_usd=data.get("budget_usd")
    )


def plan_compute(*, scenario: Scenario, owner_id: int | None) -> dict[str, Any]:
    """Sweep, price and rank: the plan document. ValueError when nothing can train the model."""
    found = plan_configurations(scenario=scenario, owner_id=owner_id)
    if found.configs.empty:
        raise ValueError(
            "gpus: no allowed GPU configuration fits the model in memory "
            f"(checked {found.n_instance_types} instance types up to "
            f"{scenario.data.get('max_nodes', 128):.0f} nodes)"
        )
    keys = sorted({int(k) for k in found.configs["instance_key"]})
    prices = plan_prices(scenario=scenario, instance_keys=keys)
    if prices.empty:
        raise ValueError(
            "providers: no current price for any configuration that fits "
            "(widen providers, regions or purchase options)"
        )
    result = plan(found.configs, prices, _assumptions(scenario), _constraints(scenario))
    document = result.to_dict(limit=OPTIONS_KEPT)
    document["scaling"] = _scaling(result)
    document["chosen_memory"] = _chosen_memory(scenario, result, owner_id)
    return document


def _scaling(result: PlanResult) -> list[dict[str, Any]]:
    """Best throughput per GPU model and GPU count, over every simulated configuration."""
    table = result.table
    best = table.groupby(["gpu", "gpus"], as_index=False)["tokens_per_second"].max()
    return [
        {"gpu": str(r.gpu), "gpus": float(r.gpus), "tokens_per_second": float(r.tokens_per_second)}
        for r in best.itertuples()
    ]


def _chosen_memory(
    scenario: Scenario, result: PlanResult, owner_id: int | None
) -> dict[str, Any] | None:
    """Memory breakdown (GiB per GPU) of the top-ranked option, for its chart."""
    ranked = result.table[result.table["rank"].notna()].sort_values("rank")
    if ranked.empty:
        return None
    row = ranked.iloc[0]
    instance = InstanceType.objects.select_related("accelerator").get(pk=int(row["instance_key"]))
    inputs = inputs_from_request(simulation_request(scenario))
    fixed = LayoutConstraints(
        tp=int(row["tp"]),
        pp=int(row["pp"]),
        dp=int(row["dp"]),
        cp=int(row["cp"]),
        zero_stage=int(row["zero_stage"]),
        recompute=str(row["recompute"]),
        precision=str(row["precision"]),
        micro_batch=int(row["micro_batch"]),
    )
    choice = best_layout(
        inputs.workload,
        hardware(instance, int(row["nodes"])),
        inputs.goal,
        calibration_for(owner_id),
        fixed,
    )
    memory: dict[str, Any] = choice.result.to_dict()["memory"]
    return memory


def scenario_create(*, owner_id: int, raw: dict[str, Any]) -> PlanScenario:
    """Check the scenario (and that some GPU fits) before storing it, then enqueue the plan."""
    scenario = scenario_from_input(raw, today=timezone.now().date())
    if plan_configurations(scenario=scenario, owner_id=owner_id).configs.empty:
        raise ValueError("gpus: no allowed GPU configuration fits the model in memory")
    with transaction.atomic():
        stored = PlanScenario.objects.create(
            owner_id=owner_id,
            name=scenario.data.get("name") or _default_name(scenario),
            inputs=scenario.data,
        )
        run_enqueue(stored)
    return stored


def _default_name(scenario: Scenario) -> str:
    data = scenario.data
    goal = (
        f"{data['tokens']:.3g} tokens"
        if data.get("tokens")
        else f"{data.get('samples') or data.get('epochs')} samples/epochs"
    )
    model = data.get("workload") or (
        f"{data['params_billion']:g}B model" if data.get("params_billion")
        else f"{data.get('n_layers', 0):.0f}-layer model")
    return f"{model} on {goal}"


def _compute(stored: PlanScenario) -> dict[str, Any]:
    run_progress(PlanScenario, stored.id, 10, "simulating every configuration")
    return plan_compute(scenario=Scenario(stored.inputs), owner_id=stored.owner_id)


def scenario_execute(*, scenario_id: int, attempt: Attempt) -> None:
    """Claim a queued scenario, compute its plan and store it; a second call does nothing."""
    run_execute(
        PlanScenario, scenario_id, _compute, attempt=attempt,
        message="simulating every configuration",
    )


def scenario_duplicate(*, scenario_id: int, owner_id: int) -> PlanScenario:
    original = PlanScenario.objects.get(pk=scenario_id, owner_id=owner_id)
    return scenario_create(
        owner_id=owner_id, raw={**original.inputs, "name": f"{original.name} (copy)"}
    )


def scenario_save(*, scenario_id: int, owner_id: int, name: str) -> None:
    PlanScenario.objects.filter(pk=scenario_id, owner_id=owner_id).update(
        is_saved=True, name=name.strip()[:200] or "Untitled scenario"
    )
