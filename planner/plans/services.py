"""Plan services: sweep the catalog for a scenario, price every option, rank and store it."""

import contextlib
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

import numpy as np
import pandas as pd
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from planner.core.cloud import (
    CHECKPOINT_BYTES_PER_PARAM,
    default_checkpoint_gb,
    default_dataset_gb,
    hazard_per_instance_hour,
)
from planner.core.formatting import large_count, number
from planner.core.providers import HOME_REGIONS, MAX_CLUSTER_NODES, offer_facts
from planner.core.purchase_options import NO_UPFRONT
from planner.core.serialize import frame_from_table, frame_to_table
from planner.fair_shares import creation_check
from planner.plans.carbon import carbon_summary, plan_carbon_factors
from planner.plans.core.assumptions import PlanAssumptions, PlanConstraints
from planner.plans.core.fields import ASSUMPTION_FIELDS
from planner.plans.core.plan import PlanResult, plan, price_dates
from planner.plans.core.ranking import top_card
from planner.plans.core.sweep_parts import sweep_parts
from planner.plans.levers import plan_levers_attach, plan_power_caps
from planner.plans.models import PlanScenario, PlanSweepChunk
from planner.plans.scenario import (
    Scenario,
    plan_name,
    scenario_from_input,
    simulation_request,
)
from planner.plans.selectors import check_catalog_names
from planner.runs import (
    RESOURCE_ERRORS,
    TRANSIENT_ERRORS,
    TRANSIENT_MESSAGE,
    Attempt,
    resource_message,
    run_claim,
    run_enqueue,
    run_execute,
    run_fail,
    run_lease,
    run_progress,
    run_store,
)
from pricing.catalog_cache import current_price_frame
from pricing.selectors import stale_before
from simulator.core import PRESETS
from simulator.core.goodput import goodput_profile_summary
from simulator.services import (
    Simulator,
    catalog_instances_frame,
    gpus_without_rate,
    simulator_for,
    simulator_goodput,
    simulator_grid_size,
    simulator_layout_memory,
    simulator_sweep,
)

# Options stored per plan: the cheapest ones plus every recommended and Pareto option.
OPTIONS_KEPT = 500
# Node counts swept: powers of two up to the largest cluster.
NODE_COUNTS = tuple(2**i for i in range(MAX_CLUSTER_NODES.bit_length()))


@dataclass(frozen=True)
class SweptConfigurations:
    """The sweep's configurations (in (instance, nodes) order) and how many instance types
    were swept."""

    configs: pd.DataFrame
    n_instance_types: int


def plan_simulator(*, scenario: Scenario, owner_id: int | None) -> Simulator:
    """The scenario's simulation inputs, built once per task, under the owner's calibration."""
    return simulator_for(request=simulation_request(scenario), owner_id=owner_id)


def _node_counts(scenario: Scenario) -> tuple[int, ...]:
    return tuple(n for n in NODE_COUNTS if n <= scenario.data.get("max_nodes", 128))


def plan_instances(scenario: Scenario) -> pd.DataFrame:
    """The simulatable instance types the scenario allows, grouped by GPUs per node."""
    instances = catalog_instances_frame(
        gpus=scenario.data.get("gpus"), providers=scenario.data.get("providers")
    )
    return instances.sort_values(["gpus_per_node", "instance_key"], ignore_index=True)


def plan_configurations(
    *, scenario: Scenario, simulator: Simulator, instance_keys: list[int] | None = None
) -> SweptConfigurations:
    """The simulator's fastest fitting layout per allowed instance type and node count (of
    `instance_keys` only, for one part of a split sweep), in (instance, nodes) order."""
    instances = plan_instances(scenario)
    if instance_keys is not None:
        instances = instances[instances["instance_key"].isin(instance_keys)]
    configs = simulator_sweep(simulator, node_counts=_node_counts(scenario),
                              instances=instances)
    if not configs.empty:
        capacity = instances.set_index("instance_key")["memory_capacity_gib"]
        configs = configs.assign(memory_capacity_gib=configs["instance_key"].map(capacity))
    return SweptConfigurations(_in_order(configs), len(instances))


def _in_order(configs: pd.DataFrame) -> pd.DataFrame:
    # One order whether the sweep ran whole or in parts, so both give the same plan.
    if configs.empty:
        return configs
    return configs.sort_values(["instance_key", "nodes"], kind="stable", ignore_index=True)


def usable_prices(prices: pd.DataFrame) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """The prices a plan can use, and the ones it skips: a price that is not above 0 USD/h
    (one the importer refuses, planted in the database some other way) would divide by zero
    or make an option free."""
    rate = pd.to_numeric(prices["usd_per_hour"], errors="coerce").astype(float)
    bad = ~np.isfinite(rate) | (rate <= 0)
    skipped = [
        {"provider": str(row["provider"]), "instance_type": str(row["instance_type"]),
         "region": str(row["region"]), "purchase_option": str(row["purchase_option"]),
         "usd_per_hour": float(row["usd_per_hour"]) if np.isfinite(row["usd_per_hour"]) else None,
         "reason": "not above 0 USD per hour"}
        for row in prices[bad].to_dict("records")
    ]
    return prices[~bad].reset_index(drop=True), skipped


def plan_prices(*, scenario: Scenario, instance_keys: list[int], today: date) -> pd.DataFrame:
    """Current prices of the allowed instance types, regions, purchase and payment options,
    with what each offer is (kind, node limits), its basis and its age in days."""
    data = scenario.data
    frame = current_price_frame()
    keep = (frame["instance_key"].isin(instance_keys)
            & frame["purchase_option"].isin(data["purchase_options"])
            & frame["payment_option"].isin(["", *data.get("payment_options", [NO_UPFRONT])])
            & frame["offering_class"].isin(["", "standard"]))
    if data.get("regions"):
        keep &= frame["region"].isin(data["regions"])
    frame = frame[keep.to_numpy()].drop(columns="offering_class").reset_index(drop=True)
    frame["usd_per_hour"] = frame["usd_per_hour"].astype(float)
    frame["upfront_usd"] = pd.to_numeric(frame["upfront_usd"], errors="coerce").astype(float)
    frame["basis"] = np.where(frame["is_estimated"], "estimated",
                              np.where(frame["is_derived"], "derived", "listed"))
    offers = list(zip(frame["provider"].tolist(), frame["gpus_per_node"].tolist(), strict=True))
    by_offer = {(p, g): offer_facts(p, int(g), data.get("spot_node_limit")) for p, g in set(offers)}
    facts = [by_offer[offer] for offer in offers]
    frame["offer_kind"] = [f[0] for f in facts]
    frame["max_nodes"] = np.array([f[1] for f in facts], dtype=np.float64)
    frame["spot_node_limit"] = np.array([f[2] for f in facts], dtype=np.float64)
    dates = frame["as_of"].tolist()
    ages = {d: (today - d).days for d in set(dates)}
    frame["age_days"] = [ages[d] for d in dates]
    return frame.drop(columns=["is_estimated", "gpus_per_node"])


def _workload_sizes(scenario: Scenario, simulator: Simulator) -> dict[str, Any]:
    """Data set and checkpoint sizes (GB) the user left blank, from the workload, and why."""
    data = scenario.data
    workload = simulator.inputs.workload
    sizes: dict[str, Any] = {}
    notes: dict[str, str] = {}
    if "checkpoint_gb" not in data:
        sizes["checkpoint_gb"] = round(default_checkpoint_gb(workload.params), 1)
        notes["checkpoint_gb"] = (f"{workload.params / 1e9:,.1f} B parameters × "
                                  f"{CHECKPOINT_BYTES_PER_PARAM:g} bytes (bf16 weights, fp32 "
                                  "master weights, Adam moments)")
    if "dataset_gb" not in data:
        is_image = workload.kind not in ("llm", "llm_moe", "llm_lora", "bert")
        samples = data.get("samples") or (data.get("epochs") or 0) * (data.get("dataset_samples")
                                                                       or 0) or None
        tokens = data.get("tokens")
        sizes["dataset_gb"] = round(default_dataset_gb(
            tokens=tokens, samples=samples, tokens_per_sample=workload.tokens_per_sample,
            is_image=is_image), 1)
        notes["dataset_gb"] = ("tokens × 2 bytes (uint16 token ids)" if tokens else
                               "samples × 110 kB per image" if is_image else
                               "samples × tokens per sample × 2 bytes")
    return {"sizes": sizes, "notes": notes}


def _assumptions(scenario: Scenario, sizes: dict[str, float]) -> PlanAssumptions:
    overrides: dict[str, Any] = {
        k: scenario.data[k] for k in ASSUMPTION_FIELDS if k in scenario.data} | sizes
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
        deadline_hours=scenario.deadline_hours, budget_usd=data.get("budget_usd"),
        horizon_hours=float(data.get("horizon_days", 365.0)) * 24.0,
        allow_estimated_prices=bool(data.get("allow_estimated_prices")),
        allow_unlikely_capacity=bool(data.get("allow_unlikely_capacity")),
        max_co2e_kg=data.get("max_co2e_kg"),
        miss_threshold=float(data.get("miss_threshold_pct", 10.0)) / 100.0,
        preferred_regions=tuple(settings.PLAN_PREFERRED_REGIONS or HOME_REGIONS),
    )


def scenario_delete(*, owner_id: int, scenario_id: int) -> PlanScenario | None:
    """Delete the owner's plan with its sweep parts (a worker still running it finds it gone
    and stores nothing); None when it is not theirs. Reports made from it stay: each is a
    dated document of its own."""
    scenario = PlanScenario.objects.filter(owner_id=owner_id, pk=scenario_id).first()
    if scenario is not None:
        scenario.delete()
    return scenario


class NoConfigurationFitsError(ValueError):
    """Nothing the scenario allows can train the model (or none of it has a current price):
    a plan's answer, stored as its result, not a failure."""


def plan_compute(*, scenario: Scenario, owner_id: int | None) -> dict[str, Any]:
    """Sweep, price and rank: the plan document. NoConfigurationFitsError when nothing fits."""
    check_catalog_names(scenario)
    simulator = plan_simulator(scenario=scenario, owner_id=owner_id)
    found = plan_configurations(scenario=scenario, simulator=simulator)
    return plan_from_configurations(scenario=scenario, simulator=simulator, found=found)


def plan_from_configurations(
    *, scenario: Scenario, simulator: Simulator, found: SweptConfigurations
) -> dict[str, Any]:
    """Price and rank swept configurations (whole or merged from parts): the plan document."""
    if found.configs.empty:
        _refuse_unpublished_precision(scenario)
        raise NoConfigurationFitsError(
            "gpus: no allowed GPU configuration fits the model in memory "
            f"(checked {found.n_instance_types} instance types up to "
            f"{scenario.data.get('max_nodes', 128):.0f} nodes)"
        )
    keys = sorted({int(k) for k in found.configs["instance_key"]})
    today = timezone.now().date()
    prices, skipped_prices = usable_prices(
        plan_prices(scenario=scenario, instance_keys=keys, today=today))
    if prices.empty:
        raise NoConfigurationFitsError(
            "providers: no current price for any configuration that fits "
            "(widen providers, regions or purchase options)"
        )
    defaults = _workload_sizes(scenario, simulator)
    factors = plan_carbon_factors(scenario)
    assumptions = _assumptions(scenario, defaults["sizes"])
    configs, caps = plan_power_caps(scenario, simulator, found.configs)
    result = plan(configs, prices, assumptions, _constraints(scenario), carbon=factors)
    document = result.to_dict(limit=OPTIONS_KEPT)
    plan_levers_attach(document, scenario=scenario, simulator=simulator,
                       assumptions=assumptions, caps=caps)
    document["carbon"] = carbon_summary(factors)
    document["size_defaults"] = defaults["notes"]
    document["skipped_prices"] = skipped_prices
    document["prices"] = price_dates(result.table, stale_days=settings.PRICE_STALE_DAYS,
                                     stale_before=stale_before())
    document["scaling"] = _scaling(result)
    document["chosen_memory"] = _chosen_memory(simulator, result)
    document.update(simulator_goodput(simulator, given=set(scenario.data)))
    document["goodput_profile"] = goodput_profile_summary(
        scenario.data.get("goodput_profile") or "typical")
    document["calibration_used"] = simulator.calibration_used
    return document


def _refuse_unpublished_precision(scenario: Scenario) -> None:
    """When a fixed precision has no published rate on any allowed GPU (bf16 on the A10G),
    that, not memory, is why nothing fits: say so on the precision field."""
    precision = (scenario.data.get("layout") or {}).get("precision")
    names = sorted(set(plan_instances(scenario)["gpu"])) if precision else []
    if names and gpus_without_rate(names, precision):
        raise NoConfigurationFitsError(
            f"precision: no allowed GPU has a published {precision} rate "
            f"({', '.join(names)}); leave precision blank to plan each GPU at its best "
            "published rate")


def plan_document(*, scenario: Scenario, simulator: Simulator, found: SweptConfigurations
                  ) -> dict[str, Any]:
    """The stored result: the plan, or {"no_fit": {"field", "message"}} when nothing fits."""
    try:
        return plan_from_configurations(scenario=scenario, simulator=simulator, found=found)
    except NoConfigurationFitsError as exc:
        field, _, message = str(exc).partition(": ")
        return {"no_fit": {"field": field, "message": message,
                           "n_instance_types": found.n_instance_types}}


def _scaling(result: PlanResult) -> list[dict[str, Any]]:
    """Best throughput per GPU model and GPU count, over every simulated configuration."""
    table = result.table
    best = table.groupby(["gpu", "gpus"], as_index=False)["tokens_per_second"].max()
    return [
        {"gpu": str(r.gpu), "gpus": float(r.gpus), "tokens_per_second": float(r.tokens_per_second)}
        for r in best.itertuples()
    ]


def _chosen_memory(simulator: Simulator, result: PlanResult) -> dict[str, Any] | None:
    """Memory breakdown (GiB per GPU) of the plan's pick (the cheapest acceptable option, else
    the lowest-risk one), for its chart; `row_index` says which option it is."""
    card = top_card(result.recommendations)
    if card is None:
        return None
    row = result.table.iloc[card.row_index]
    memory = simulator_layout_memory(simulator, instance_key=int(row["instance_key"]),
                                     nodes=int(row["nodes"]), layout=row.to_dict())
    return None if memory is None else {**memory, "row_index": card.row_index}


def scenario_create(*, owner_id: int, raw: dict[str, Any], is_saved: bool = False
                    ) -> PlanScenario:
    """Check the scenario's fields (cheap: no sweep), store it and enqueue its plan; whether
    any configuration fits is the task's answer (plan_document)."""
    scenario = scenario_from_input(raw, today=timezone.now().date())
    # What the worker will read, checked now (ValueError names the field): never accepted and
    # then failed in the worker.
    check_catalog_names(scenario)
    simulator_for(request=simulation_request(scenario), owner_id=owner_id)
    creation_check(owner_id=owner_id, kind="plan")
    with transaction.atomic():
        stored = PlanScenario.objects.create(
            owner_id=owner_id,
            name=scenario.data.get("name") or _default_name(scenario),
            inputs=scenario.data,
            is_saved=is_saved,
        )
        run_enqueue(stored)
    return stored


def _default_name(scenario: Scenario) -> str:
    data = scenario.data
    goal = (large_count(data["tokens"], "tokens") if data.get("tokens") else
            large_count(data["samples"], "samples") if data.get("samples") else
            f"{number(data.get('epochs'))} epochs")
    # the preset's name, as the plan list and the workload line say it ('Llama 2 7B')
    preset = PRESETS.get(data.get("workload") or "")
    model = preset.name if preset else data.get("workload") or (
        f"{data['params_billion']:g}B model" if data.get("params_billion")
        else f"{data.get('n_layers', 0):.0f}-layer model")
    return f"{model} on {goal}"


def _compute(stored: PlanScenario) -> dict[str, Any] | None:
    run_progress(PlanScenario, stored.id, 10, "simulating every configuration")
    scenario = Scenario(stored.inputs)
    simulator = plan_simulator(scenario=scenario, owner_id=stored.owner_id)
    parts = plan_sweep_parts(scenario, simulator)
    if len(parts) > 1:
        sweep_split(scenario_id=stored.id, parts=parts)
        return None  # the last part to finish stores the plan
    found = plan_configurations(scenario=scenario, simulator=simulator)
    return plan_document(scenario=scenario, simulator=simulator, found=found)


def scenario_execute(*, scenario_id: int, attempt: Attempt) -> None:
    """Claim a queued scenario, compute its plan (or split its sweep) and store it; a second
    call does nothing."""
    run_execute(
        PlanScenario, scenario_id, _compute, attempt=attempt,
        message="simulating every configuration",
    )


def scenario_save(*, scenario_id: int, owner_id: int, name: str) -> str:
    """Mark the plan kept under `name`; returns the name stored (ValueError naming the field
    when it cannot be)."""
    name = plan_name(name) or "Untitled scenario"
    PlanScenario.objects.filter(pk=scenario_id, owner_id=owner_id).update(
        is_saved=True, name=name
    )
    return name


# Large sweeps: split into parts that several workers sweep at once (PlanSweepChunk rows, one
# task each); the part that finishes last merges them under a lock on the plan and stores it.
# No result backend is needed, so it works on the embedded filesystem broker and on Redis.
MAX_SWEEP_PARTS = 16


def plan_sweep_parts(scenario: Scenario, simulator: Simulator) -> list[list[int]]:
    """The scenario's instance types in parts of about PLAN_SWEEP_PART_CELLS sweep cells."""
    instances = plan_instances(scenario)
    return sweep_parts(
        [int(k) for k in instances["instance_key"]],
        cells_per_instance=simulator_grid_size(simulator) * len(_node_counts(scenario)),
        cells_per_part=settings.PLAN_SWEEP_PART_CELLS, max_parts=MAX_SWEEP_PARTS,
    )


def sweep_split(*, scenario_id: int, parts: list[list[int]]) -> None:
    """One row and one task per part; a second call (a retried task) adds no row and sends
    only the parts not done yet (their claim makes a duplicate send harmless)."""
    with transaction.atomic():
        for index, keys in enumerate(parts):
            chunk, _ = PlanSweepChunk.objects.get_or_create(
                scenario_id=scenario_id, index=index,
                defaults={"n_chunks": len(parts), "instance_keys": keys},
            )
            if not chunk.is_finished:
                run_enqueue(chunk, on_unavailable="keep")
        run_progress(PlanScenario, scenario_id, 10, f"sweeping in {len(parts)} parts")


def sweep_chunk_execute(*, chunk_id: int, attempt: Attempt) -> None:
    """Sweep one part; the last part to finish merges every part and stores the plan. A failed
    part fails the plan with its message; a second delivery of a claimed part does nothing."""
    chunk = run_claim(PlanSweepChunk, chunk_id, attempt, "sweeping")
    if chunk is None:
        return
    owner_id, inputs = PlanScenario.objects.values_list("owner_id", "inputs").get(
        pk=chunk.scenario_id)
    label = f"sweep part {chunk.index + 1} of {chunk.n_chunks}"
    try:
        with run_lease(PlanSweepChunk, chunk.id, attempt.task_id):
            scenario = Scenario(inputs)
            found = plan_configurations(
                scenario=scenario, simulator=plan_simulator(scenario=scenario, owner_id=owner_id),
                instance_keys=[int(k) for k in chunk.instance_keys])
        _chunk_finish(chunk, frame_to_table(found.configs))
    except TRANSIENT_ERRORS:
        if attempt.is_last_try:
            _chunk_fail(chunk, TRANSIENT_MESSAGE)
        raise
    except ValueError as exc:
        _chunk_fail(chunk, f"{label}: {exc}")
    except RESOURCE_ERRORS as exc:  # the worker lives: see planner.runs
        _chunk_fail(chunk, f"{label}: {resource_message(exc)}")
    except Exception as exc:
        _chunk_fail(chunk, f"{label}: internal error: {exc.__class__.__name__}")
        raise


def _chunk_finish(chunk: PlanSweepChunk, table: dict[str, Any]) -> None:
    with transaction.atomic():
        # The lock serialises the parts' endings: exactly one sees every part done.
        stored = PlanScenario.objects.select_for_update().only(
            "status", "owner_id", "inputs").get(pk=chunk.scenario_id)
        if stored.status != PlanScenario.Status.RUNNING:
            PlanSweepChunk.objects.filter(pk=chunk.id).delete()  # the plan ended without it
            return
        run_store(PlanSweepChunk, chunk.id, table)
        parts = PlanSweepChunk.objects.filter(scenario_id=stored.id)
        done = parts.filter(status=PlanSweepChunk.Status.DONE).count()
        if done < chunk.n_chunks:
            run_progress(PlanScenario, stored.id, 10 + 80 * done / chunk.n_chunks,
                         f"swept {done} of {chunk.n_chunks} parts")
            return
        tables = list(parts.order_by("index").values_list("result", "instance_keys"))
        frames = [frame_from_table(t) for t, _ in tables if t["rows"]]
        configs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        found = SweptConfigurations(_in_order(configs), sum(len(keys) for _, keys in tables))
        scenario = Scenario(stored.inputs)
        simulator = plan_simulator(scenario=scenario, owner_id=stored.owner_id)
        run_store(PlanScenario, stored.id,
                  plan_document(scenario=scenario, simulator=simulator, found=found))
        parts.delete()


def _chunk_fail(chunk: PlanSweepChunk, message: str) -> None:
    # The database may be away (transient errors): then the part is reclaimed once stale.
    with contextlib.suppress(*TRANSIENT_ERRORS), transaction.atomic():
        if PlanScenario.objects.filter(pk=chunk.scenario_id,
                                       status=PlanScenario.Status.RUNNING).exists():
            run_fail(PlanScenario, chunk.scenario_id, message)
        PlanSweepChunk.objects.filter(scenario_id=chunk.scenario_id).delete()
