"""A history's energy and CO2e per GPU type and region, and what moving its burst share to the
lowest-carbon priced region would save: the inputs from the history, the offers and the
catalog, and the document part (planner.purchase_mix.core.carbon does the sums)."""

from collections.abc import Mapping
from typing import Any

import pandas as pd

from planner.core.cloud import ENERGY_COUNTS
from planner.core.serialize import json_safe
from planner.purchase_mix import selectors
from planner.purchase_mix.core.analysis import DemandAnalysis
from planner.purchase_mix.core.buy import WhatToBuy
from planner.purchase_mix.core.carbon import BurstInput, burst_moves, history_carbon
from planner.purchase_mix.core.replay import MixReplay
from planner.purchase_mix.core.upload.jobs import JobHistory, UsageHistory
from pricing.carbon.selectors import carbon_factors
from pricing.models import Accelerator

UNBOUGHT = ("", "(not priced)")


def _job_usage(jobs: pd.DataFrame, places: Mapping[str, tuple[str, str]]) -> pd.DataFrame:
    """GPU-hours per job, in the job's own provider and region where the file gives them, else
    where the recommendation buys its GPU type."""
    hours = (jobs["end_epoch_s"] - jobs["start_epoch_s"]) / 3600.0 * jobs["gpu_count"]
    types = jobs["gpu_type"].astype(str)
    default = types.map(lambda t: places.get(t, UNBOUGHT))
    provider = default.map(lambda p: p[0])
    region = default.map(lambda p: p[1])
    if "provider" in jobs.columns and "region" in jobs.columns:
        given = jobs["provider"].notna() & jobs["region"].notna()
        provider = provider.where(~given, jobs["provider"].astype(str).str.lower())
        region = region.where(~given, jobs["region"].astype(str))
    return pd.DataFrame({"gpu_type": types, "provider": provider, "region": region,
                         "gpu_hours": hours.astype(float)})


def _usage(history: JobHistory | UsageHistory, analysis: DemandAnalysis,
           places: Mapping[str, tuple[str, str]]) -> pd.DataFrame:
    if isinstance(history, JobHistory):
        return _job_usage(history.jobs, places)
    rows = [(t, *places.get(t, UNBOUGHT), analysis.stats[t].gpu_hours)
            for t in analysis.demand.gpu_types]
    return pd.DataFrame(rows, columns=["gpu_type", "provider", "region", "gpu_hours"])


def _tdp_watts(accelerators: Mapping[str, str]) -> dict[str, float]:
    watts = dict(Accelerator.objects.filter(slug__in=list(accelerators.values()))
                 .exclude(tdp_watts=None).values_list("slug", "tdp_watts"))
    return {t: float(watts[s]) for t, s in accelerators.items() if s in watts}


def _on_demand_per_gpu(accelerators: Mapping[str, str]) -> pd.DataFrame:
    by_slug: dict[str, list[str]] = {}
    for gpu_type, slug in accelerators.items():
        by_slug.setdefault(slug, []).append(gpu_type)
    rows = [(t, p.instance_type.provider.slug, p.region.code, p.usd_per_gpu_hour)
            for p in selectors.cloud_on_demand(by_slug)
            for t in by_slug[p.instance_type.accelerator.slug]]
    return pd.DataFrame(rows, columns=["gpu_type", "provider", "region", "usd_per_gpu_hour"])


def history_carbon_document(history: JobHistory | UsageHistory, analysis: DemandAnalysis,
                            buy: WhatToBuy, accelerators: Mapping[str, str],
                            replay: MixReplay) -> dict[str, Any]:
    """{"by_place": energy and CO2e per GPU type and region, "burst": the move per type,
    "totals", "energy_counts"} (location-based grid intensity). `replay` is `buy`'s purchase
    replayed on the whole history: each type's burst is its on-demand GPU-hours there."""
    places = {t.gpu_type: (t.offer.provider, t.offer.region) for t in buy.types}
    factors = carbon_factors(accounting="location")
    tdp = _tdp_watts(accelerators)
    by_place = history_carbon(_usage(history, analysis, places), tdp, factors)
    bursts = [BurstInput(plan.offer.gpu_type, plan.offer.provider, plan.offer.region,
                         plan.expected.on_demand_gpu_hours,
                         plan.offer.on_demand_usd_per_hour / plan.offer.gpus_per_instance)
              for plan in replay.plans]
    moves = burst_moves(bursts, _on_demand_per_gpu(accelerators), tdp, factors)
    known = [p.co2e_kg for p in by_place if p.co2e_kg is not None]
    return {
        "by_place": [json_safe(p) for p in by_place],
        "burst": [json_safe(m) for m in moves],
        "totals": {"energy_kwh": sum(p.energy_kwh or 0.0 for p in by_place),
                   "co2e_kg": sum(known) if known else None,
                   "co2e_saved_kg": sum(m.co2e_saved_kg or 0.0 for m in moves),
                   "cost_change_usd": sum(m.cost_change_usd or 0.0 for m in moves)},
        "accounting": "location",
        "energy_counts": ENERGY_COUNTS,
    }
