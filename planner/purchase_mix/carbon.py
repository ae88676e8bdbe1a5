"""A history's energy and CO2e per GPU type and region, and what moving its burst share to the
lowest-carbon priced region would save: the inputs from the history, the offers and the
catalog, and the document part (planner.purchase_mix.core.carbon does the sums)."""

from collections.abc import Mapping
from typing import Any, cast

import numpy as np
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


def _places(jobs: pd.DataFrame, places: Mapping[str, tuple[str, str]]) -> pd.DataFrame:
    """Each row's GPU type, provider and region: the job's own provider and region where the
    file gives them, else where the recommendation buys its GPU type."""
    types = jobs["gpu_type"].astype(str)
    default = types.map(lambda t: places.get(t, UNBOUGHT))
    provider = default.map(lambda p: p[0])
    region = default.map(lambda p: p[1])
    if "provider" in jobs.columns and "region" in jobs.columns:
        given = jobs["provider"].notna() & jobs["region"].notna()
        provider = provider.where(~given, jobs["provider"].astype(str).str.lower())
        region = region.where(~given, jobs["region"].astype(str))
    return pd.DataFrame({"gpu_type": types, "provider": provider, "region": region})


def _key_combinations(jobs: pd.DataFrame, names: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """(each job's combination number, one row per combination of the `names` columns' values
    in the columns' own dtypes): category codes, never a string per job."""
    combo = np.zeros(len(jobs), dtype=np.int64)
    table: dict[str, np.ndarray] = {}
    dtypes: dict[str, pd.CategoricalDtype] = {}
    for name in names:
        column = jobs[name].astype("category")  # no copy when it is one already
        dtypes[name] = cast(pd.CategoricalDtype, column.dtype)
        width = len(column.cat.categories) + 1  # code -1 (missing) becomes 0
        combo *= width
        combo += column.cat.codes.to_numpy() + 1
        combo, found = pd.factorize(combo)  # keeps the numbers below the number of jobs
        table = {key: codes[found // width] for key, codes in table.items()}
        table[name] = found % width - 1
    frame = pd.DataFrame({name: pd.Categorical.from_codes(codes, dtype=dtypes[name])
                          for name, codes in table.items()})
    return combo, frame


def _job_usage(jobs: pd.DataFrame, places: Mapping[str, tuple[str, str]]) -> pd.DataFrame:
    """GPU-hours per (GPU type, provider, region) of the jobs (see _places), summed job by job
    in file order as history_carbon would sum one row per job: the same floats, without a
    string per job (10M jobs took 800 MB of strings)."""
    names = ["gpu_type"] + (["provider", "region"] if {"provider", "region"} <= set(jobs.columns)
                            else [])
    combo, combos = _key_combinations(jobs, names)
    keys = _places(combos, places)
    # history_carbon's grouping of the keys: combinations that land on one place are one group
    group = keys.astype(str).groupby(list(keys.columns), sort=True).ngroup()
    group_of_job = group.to_numpy(dtype=np.float64, na_value=-1).astype(np.int64)[combo]
    del combo
    hours = (jobs["end_epoch_s"].to_numpy() - jobs["start_epoch_s"].to_numpy()) / 3600.0
    hours *= jobs["gpu_count"].to_numpy()
    totals = pd.Series(hours).groupby(group_of_job, sort=True).sum()
    first = keys.assign(group=group.to_numpy()).drop_duplicates("group").set_index("group")
    totals = totals[totals.index >= 0]
    return first.loc[totals.index].reset_index(drop=True).assign(
        gpu_hours=totals.to_numpy(dtype=float))


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
