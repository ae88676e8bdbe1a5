"""Plan reads for pages and the API: the owner's plans, a plan's stored result and the
version of what its page shows (the key of its cached fragments); a scenario's providers, GPUs
and regions checked against the catalog."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.core.cache import cache

from planner.plans.models import PlanScenario
from planner.plans.scenario import Scenario
from pricing.models import Accelerator, Provider, Region


def scenario_list(*, owner_id: int, limit: int = 100) -> list[PlanScenario]:
    """The owner's plans, newest first, each with `pick` (its first card's cost, time and miss
    chance) and `n_feasible` from its result. The result itself stays unloaded (it can be
    megabytes), and the two are read from it once per plan version (kept in the cache): the
    database parses the whole result to reach them."""
    plans = list(PlanScenario.objects.filter(owner_id=owner_id).defer("result")[:limit])
    keys = {plan.pk: f"plan-list-outcome:{scenario_page_version(plan)}" for plan in plans}
    found = cache.get_many(list(keys.values()))
    missing = [pk for pk, key in keys.items() if key not in found]
    if missing:
        read = {pk: (pick, n_feasible) for pk, pick, n_feasible in PlanScenario.objects.filter(
            pk__in=missing).values_list("pk", "result__pick", "result__n_feasible")}
        fresh = {keys[pk]: outcome for pk, outcome in read.items()}
        cache.set_many(fresh, 3600)
        found.update(fresh)
    for plan in plans:
        plan.pick, plan.n_feasible = found.get(keys[plan.pk], (None, None))
    return plans


def scenario_page_version(scenario: PlanScenario) -> str:
    """A token that changes whenever what a plan's page shows of it changes: its status and
    result (every stored result sets finished_at; a re-run also counts an attempt) and its
    inputs. The key of its cached page fragments, read without loading the result."""
    inputs = json.dumps(scenario.inputs, sort_keys=True, default=str)
    finished = scenario.finished_at.isoformat() if scenario.finished_at else ""
    state = f"{scenario.pk}:{scenario.status}:{finished}:{scenario.attempts}:{inputs}"
    return hashlib.sha256(state.encode()).hexdigest()


def scenario_result(scenario_id: int) -> dict[str, Any]:
    """A plan's stored result document (loaded on its own: ~1 MB of JSON)."""
    result: dict[str, Any] = PlanScenario.objects.values_list("result", flat=True).get(
        pk=scenario_id) or {}
    return result


def scenario_has_feasible(scenario_id: int, version: str) -> bool:
    """Whether any option of the plan meets its limits (then it has charts and exports),
    remembered under the page version so a cached page does not load the result for it."""
    key = f"plan-has-feasible:{version}"
    found = cache.get(key)
    if found is None:
        found = bool(scenario_result(scenario_id).get("n_feasible"))
        cache.set(key, found, 3600)
    return bool(found)


def check_catalog_names(scenario: Scenario) -> None:
    """ValueError naming the field when a provider or GPU is in no catalog (as the form's
    choices refuse it; else the plan would end "nothing fits" and blame the GPUs)."""
    for name, model in (("providers", Provider), ("gpus", Accelerator)):
        wanted = scenario.data.get(name) or []
        known = list(model.objects.order_by("slug").values_list("slug", flat=True))
        unknown = [slug for slug in wanted if slug not in known]
        if unknown:
            raise ValueError(f"{name}: unknown {', '.join(unknown)} (known: {', '.join(known)})")
    check_regions(scenario)


def check_regions(scenario: Scenario) -> None:
    """ValueError naming the regions field when a region code is in no catalog, or not a
    region of any allowed provider (else the plan would end "nothing fits" and blame the
    providers)."""
    wanted = scenario.data.get("regions") or []
    if not wanted:
        return
    providers = scenario.data.get("providers") or []
    known = Region.objects.filter(code__in=wanted)
    anywhere = set(known.values_list("code", flat=True))
    unknown = [code for code in wanted if code not in anywhere]
    if unknown:
        raise ValueError(f"regions: unknown region code{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(unknown)} (codes as providers write them, e.g. us-east-1, "
                         "europe-west4, eastus)")
    if providers:
        allowed = set(known.filter(provider__slug__in=providers)
                      .values_list("code", flat=True))
        elsewhere = [code for code in wanted if code not in allowed]
        if elsewhere:
            raise ValueError(f"regions: {', '.join(elsewhere)} "
                             f"{'is not a region' if len(elsewhere) == 1 else 'are not regions'}"
                             f" of {', '.join(providers)}")
