"""The capacity document: a history's jobs of one GPU type swept on the frontier, priced with
the offers of its purchase-mix analysis (what the page, the reports, the API and the command
line show). No ORM here: services pass the analysis document in."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date
from typing import Any

import pandas as pd

from planner.capacity.core.frontier import (
    CapacityPlan,
    check_points,
    plan_from_points,
    pool_sizes,
    sweep_grid,
)
from planner.capacity.core.inputs import CapacityInputs
from planner.capacity.core.jobs import PoolJobs, pool_jobs_from_frame
from planner.capacity.core.owned import owned_cost
from planner.capacity.core.points import GridPoint, PointFigures
from planner.capacity.core.pool import BACKFILL_DEPTH
from planner.capacity.core.prices import CapacityPrices
from planner.capacity.purchase import (
    analysis_offer,
    gpu_offer,
    is_buyable,
    pool_gate,
    pool_purchase,
    would_buy,
)
from planner.capacity.references import (
    WHAT_TO_BUY,
    no_wait_purchases,
    payment_words,
    reference_note,
    references,
)
from planner.core import formatting as fmt
from planner.core.cloud import is_stale_row, price_age_days
from planner.core.purchase_options import ON_DEMAND, SPOT
from planner.purchase_mix.core.buying_rule import (
    NO_POOL,
    pool_option,
    ungated,
    whole_instances,
)
from planner.purchase_mix.core.forecast import HistoryGate
from planner.purchase_mix.core.offers import CommitmentOption

POINT_KEYS = ("pool_gpus", "discipline", "policy", "max_wait_hours", "pool_gpu_hours",
              "burst_gpu_hours", "jobs_burst", "mean_wait_hours", "p95_wait_hours",
              "utilization", "total_usd", "waits_by_class")


def default_gpu_type(jobs: pd.DataFrame) -> str:
    """The GPU type with the most GPU-hours."""
    hours = (jobs["end_epoch_s"] - jobs["start_epoch_s"]) * jobs["gpu_count"]
    by_type = hours.groupby(jobs["gpu_type"].astype(str), observed=True).sum()
    if by_type.empty or float(by_type.max()) <= 0:
        raise ValueError("gpu_type: the history has no GPU job")
    return str(by_type.idxmax())


def capacity_jobs(jobs: pd.DataFrame, inputs: CapacityInputs) -> PoolJobs:
    """The jobs of the chosen (or the busiest) GPU type."""
    gpu_type = inputs.gpu_type or default_gpu_type(jobs)
    known = sorted({str(name) for name in jobs["gpu_type"].astype(str).unique()})
    if gpu_type not in known:
        raise ValueError(f"gpu_type: {gpu_type!r} is not in the history "
                         f"({', '.join(known[:12])})")
    return pool_jobs_from_frame(jobs, gpu_type)


_offer = analysis_offer


def _type_buy(document: Mapping[str, Any], gpu_type: str) -> dict[str, Any]:
    for item in (document.get("what_to_buy") or {}).get("types") or []:
        if item.get("gpu_type") == gpu_type:
            return dict(item)
    return {}


def _source(document: Mapping[str, Any], gpu_type: str, option: str, usd_per_hour: float
            ) -> dict[str, Any]:
    for row in document.get("prices") or []:
        if (row.get("gpu_type") == gpu_type and row.get("purchase_option") == option
                and abs(float(row.get("usd_per_hour") or 0) - usd_per_hour) < 1e-6):
            return {"purchase_option": option, "source": row.get("source"),
                    "provider": row.get("provider"),
                    "as_of": row.get("as_of"), "source_url": row.get("source_url"),
                    "basis": "derived" if row.get("is_derived") else "listed",
                    "instance_type": row.get("instance_type"),
                    "payment_words": "" if option in (ON_DEMAND, SPOT) else ", ".join(
                        filter(None, (row.get("payment_words"), row.get("offering_class")))),
                    "usd_per_gpu_hour": row.get("usd_per_gpu_hour")}
    # Not in the analysis's price list: say so rather than call it listed.
    return {"purchase_option": option, "source": "purchase-mix analysis", "as_of": None,
            "basis": None, "usd_per_gpu_hour": None}


def _commitment(offer: dict[str, Any], inputs: CapacityInputs, gate: HistoryGate
                ) -> CommitmentOption:
    """The commitment the pool is priced as: the buying rule's option for the chosen term
    (when the history allows none, the one it would buy once allowed: what a pool would
    cost)."""
    sold = gpu_offer(offer)
    option = (pool_option(sold, gate, inputs.pool_price)[0]
              or pool_option(sold, ungated(gate), inputs.pool_price)[0])
    if option is None:
        what = "commitment" if inputs.pool_price == "cheapest" else fmt.label(inputs.pool_price)
        raise ValueError(f"pool_price: {offer['provider']} {offer['region']} sells no "
                         f"{what} for {offer['gpu_type']} (choose owned hardware)")
    return option


def _pool_price(offer: dict[str, Any], inputs: CapacityInputs, document: Mapping[str, Any],
                gate: HistoryGate) -> tuple[float, str, dict[str, Any]]:
    per = float(offer["gpus_per_instance"])
    if inputs.pool_price == "owned":
        cost = owned_cost(offer["gpu_type"], inputs.owned or {})
        hw = cost.hardware
        given = [f["name"].lower() for f in cost.figures if f["basis"] == "your input"]
        words = (f"owned hardware: ${hw.purchase_usd_per_gpu:,.0f} per GPU over "
                 f"{hw.lifetime_years:g} years, {hw.power_kw_per_gpu:g} kW x PUE {hw.pue:g} at "
                 f"${hw.usd_per_kwh:g}/kWh, with network, storage, space, staff, cost of "
                 f"capital and resale (line by line below)")
        source = {"purchase_option": "owned",
                  "source": ("your inputs: " + ", ".join(given) + "; the rest defaults")
                  if given else "defaults for the GPU type (each with its source)",
                  "as_of": None, "basis": "estimated", "usd_per_gpu_hour": cost.usd_per_gpu_hour,
                  "figures": list(cost.figures), "lines": list(cost.lines)}
        return cost.usd_per_gpu_hour, words, source
    best = _commitment(offer, inputs, gate)
    words = (f"{fmt.label(best.term)}, {payment_words(best.payment_option, best.offering_class)}"
             f" ({offer['provider']} {offer['region']} {offer['instance_type']})")
    source = _source(document, offer["gpu_type"], best.term, best.usd_per_hour)
    return best.usd_per_hour / per, words, source


def capacity_prices(document: Mapping[str, Any], gpu_type: str, inputs: CapacityInputs,
                    gate: HistoryGate) -> tuple[CapacityPrices, list[dict[str, Any]]]:
    """$/GPU-hour of the pool and of bursting, from the analysis's offer for the type, and
    where each price comes from. Spot (with the analysis's interruption overhead) only for
    interruptible jobs and only if allowed."""
    offer = _offer(document, gpu_type)
    per = float(offer["gpus_per_instance"])
    pool_rate, words, pool_source = _pool_price(offer, inputs, document, gate)
    on_demand = float(offer["on_demand_usd_per_hour"])
    sources = [pool_source, _source(document, gpu_type, ON_DEMAND, on_demand)]
    on_demand_per_gpu = on_demand / per
    burst = offer.get("burst_usd_per_hour")
    burst_per = int(offer.get("burst_gpus_per_instance") or 0)
    if burst and burst_per and float(burst) / burst_per < on_demand_per_gpu:
        # Bursts buy the cheapest on-demand GPU-hour of the type in the same place.
        sources[1] = _source(document, gpu_type, ON_DEMAND, float(burst))
        on_demand_per_gpu = float(burst) / burst_per
    spot_rate = None
    spot = _type_buy(document, gpu_type).get(SPOT) or {}  # the type's SpotPlan
    if inputs.is_spot_allowed and offer.get("spot_usd_per_hour"):
        effective = float(spot.get("effective_usd_per_hour") or offer["spot_usd_per_hour"])
        spot_rate = effective / per
        sources.append(_source(document, gpu_type, SPOT, float(offer["spot_usd_per_hour"])))
    prices = CapacityPrices(pool_rate, on_demand_per_gpu, spot_rate, words)
    return prices, sources


BASIS_WORDS = {
    "listed": "the provider's listed price",
    "derived": "not listed: derived from a published discount level for the term",
    "estimated": "estimated from your owned-hardware inputs",
}


def dated_sources(sources: Sequence[Mapping[str, Any]], *, today: date, stale_days: int,
                  stale_before: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The prices used, each with `age_days` (None without an as-of date), `is_stale`
    (planner.core.cloud.is_stale_row with `stale_before`, pricing.selectors.stale_before) and
    `basis_words` (what listed, derived or estimated means)."""
    rows = []
    for source in sources:
        age = price_age_days(source.get("as_of"), today)
        rows.append({**source, "age_days": age, "is_stale": is_stale_row(
            source, stale_before, age_days=age, stale_days=stale_days),
                     "basis_words": BASIS_WORDS.get(str(source.get("basis")), "not known")})
    return rows


def no_wait_pool_gpus(document: Mapping[str, Any], gpu_type: str) -> dict[str, int]:
    """GPUs the purchase mix commits for the type without waiting: what it says to buy now
    (its one recommendation, risk-sized) and its hindsight optimum on this history."""
    _offer(document, gpu_type)
    return {p["name"]: int(p["gpus"]) for p in no_wait_purchases(document, gpu_type)}


def capacity_grid(jobs: PoolJobs, inputs: CapacityInputs, analysis: Mapping[str, Any]
                  ) -> tuple[GridPoint, ...]:
    """The sweep: the sizes asked for, or about 30 from 0 to the peak that include the
    no-wait commitments (so the recommendation is never dearer than one that meets the
    target)."""
    references = no_wait_pool_gpus(analysis, jobs.gpu_type).values()
    step = 1 if inputs.pool_price == "owned" else int(
        _offer(analysis, jobs.gpu_type)["gpus_per_instance"])
    if inputs.pool_gpus:
        offer = _offer(analysis, jobs.gpu_type)
        for size in inputs.pool_gpus:  # what is priced is what can be bought
            whole_instances(size, step, offer["instance_type"])
    sizes = inputs.pool_gpus or pool_sizes(jobs, include=tuple(references), step=step)
    if not is_buyable(analysis, jobs, inputs, pool_gate(jobs)):
        sizes = tuple(sorted({0, *sizes}))  # everything in the cloud: the one buyable pool
    grid = sweep_grid(sizes, inputs.disciplines, inputs.policies, inputs.max_wait_hours)
    check_points(len(grid), jobs.n_jobs)
    return grid


def _pool_source_words(source: Mapping[str, Any]) -> str:
    """"listed, ec2instances.info ..., as of 2025-11-30"."""
    return ", ".join(filter(None, (source.get("basis"), source.get("source"),
                                   f"as of {source['as_of']}" if source.get("as_of") else "")))


def pool_statement(inputs: CapacityInputs, prices: CapacityPrices, pool_source: Mapping[str, Any],
                   plan: CapacityPlan, purchases: Sequence[Mapping[str, Any]]) -> str:
    """What the swept pools' price assumes (term, payment, $/GPU-hour, source, as-of date)
    and why "what to buy now" is priced otherwise in the comparison."""
    rate = fmt.usd_per(prices.pool_usd_per_gpu_hour, "GPU-hour")
    if inputs.pool_price == "owned":
        text = (f"Every swept pool, the recommended one included, is owned hardware at {rate} "
                f"({prices.pool_words}; {pool_source.get('source')}, estimated).")
    else:
        which = ("the cheapest commitment sold" if inputs.pool_price == "cheapest"
                 else "the term chosen")
        text = (f"Every swept pool, the recommended one included, has all its GPUs on one "
                f"commitment, {which}: {prices.pool_words} at {rate} "
                f"({_pool_source_words(pool_source)}).")
    buy = next((p for p in purchases if p["name"] == WHAT_TO_BUY and p["gpus"]), None)
    if buy is None:
        return text
    buy_rate = float(buy["usd_per_hour"]) / int(buy["gpus"])
    if abs(buy_rate - prices.pool_usd_per_gpu_hour) <= 0.005 * prices.pool_usd_per_gpu_hour:
        return text
    text += (f" The purchase mix buys “{WHAT_TO_BUY}” on its own terms, "
             f"{fmt.usd_per(buy_rate, 'GPU-hour')} on average (risk-sized: each term only as "
             f"much as demand is likely to use over it), and the comparison prices it that way")
    ref = next((a for a in plan.against if a.name == WHAT_TO_BUY), None)
    same = next((p for p in plan.points if ref and p.pool_gpus == ref.reference.pool_gpus
                 and p.policy == "none" and p.discipline == ref.reference.discipline), None)
    if ref is None or same is None:
        return text + "."
    return text + (f": a swept pool of {same.pool_gpus:,} GPUs costs {fmt.usd(same.total_usd)} "
                   f"over the history, “{WHAT_TO_BUY}” with the same GPUs "
                   f"{fmt.usd(ref.reference.total_usd)}.")


def assumptions(inputs: CapacityInputs, prices: CapacityPrices) -> list[str]:
    return [
        "Each job's start in the history is its submit time and end - start its duration "
        "(the purchase mix's reading: every job started when asked for).",
        f"A swept pool costs {fmt.usd_per(prices.pool_usd_per_gpu_hour, 'GPU-hour')} "
        f"({prices.pool_words}) for every hour from the first submit to the last end, busy "
        "or idle; the no-wait commitments cost what the purchase mix pays for them.",
        f"A burst job runs in the cloud for its whole duration at "
        f"{fmt.usd_per(prices.on_demand_usd_per_gpu_hour, 'GPU-hour')} on demand"
        + (f", or {fmt.usd_per(prices.spot_usd_per_gpu_hour, 'GPU-hour')} on spot (with the "
           "interruption overhead) if interruptible" if prices.spot_usd_per_gpu_hour else "")
        + " (the cheapest on-demand GPU-hour of the type in the pool's provider and region; "
          "burst jobs are packed onto machines, so a job pays its own GPUs, not whole "
          "machines).",
        "Size-aware waiting: a job may wait T × its GPU-hours / the mean GPU-hours of the type's "
        "jobs (Starburst's waiting budget; the mean limit is T, as for constant waiting).",
        f"Backfill is EASY backfilling with exact durations, looking at most "
        f"{BACKFILL_DEPTH} queued jobs past the head.",
        f"Recommended: the cheapest point with P95 wait <= "
        f"{inputs.target_p95_wait_hours:g} h (nearest-rank, over every GPU job).",
    ]


def _against(plan: CapacityPlan, purchases: Sequence[Mapping[str, Any]],
             inputs: CapacityInputs, burst_words: str = "") -> list[dict[str, Any]]:
    """The comparisons, each no-wait commitment with how it is bought and its note."""
    by_name = {p["name"]: p for p in purchases}
    rows = []
    for item in plan.against:
        row = item.to_dict()
        bought = by_name.get(item.name)
        if bought is not None:
            row.update(bought_as=bought["bought_as"], pool_usd_per_hour=bought["usd_per_hour"],
                       purchase_mix_total_usd=bought["purchase_mix_total_usd"],
                       note=reference_note(bought, row["reference"],
                                           is_spot_allowed=inputs.is_spot_allowed,
                                           burst_words=burst_words))
        rows.append(row)
    return rows


def _policy_words(point: Mapping[str, Any]) -> str:
    if point["policy"] == "none":
        return "no waiting"
    limit = float(point["max_wait_hours"])
    return (f"{fmt.label(point['policy']).lower()} waiting with T = "
            f"{'no limit' if limit == float('inf') else f'{limit:g} h'}")


def headline(plan: CapacityPlan, purchase: Mapping[str, Any] | None, jobs: PoolJobs) -> str:
    """The recommendation in one sentence, the same on the page, the reports and the command
    line: the pool (or nothing committed, and why), its cost, waits and the job completion
    time increase."""
    best = plan.recommended.to_dict()
    n = int(best["pool_gpus"])
    reasons = list((purchase or {}).get("reasons") or [])
    if n == 0:
        why = f" {reasons[0]}" if reasons and reasons[0] != NO_POOL else ""
        return (f"Commit nothing: run every {plan.gpu_type} job in the cloud, "
                f"{fmt.usd(best['total_usd'])} over the history, no job waits.{why}")
    utilization = best.get("utilization")
    return (f"Commit {n:,} {plan.gpu_type} GPUs, queue {fmt.label(best['discipline'])}, "
            f"{_policy_words(best)}: {fmt.usd(best['total_usd'])} over the history, P95 wait "
            f"{best['p95_wait_hours']:.2f} h (mean {best['mean_wait_hours']:.2f} h), job "
            f"completion time +{best['mean_jct_increase_pct']:.1f}% on average, pool "
            f"utilisation {'—' if utilization is None else f'{100 * utilization:.0f}%'}, "
            f"{best['jobs_burst']:,} of {jobs.n_jobs:,} jobs burst.")


def _burst_words(sources: Sequence[Mapping[str, Any]], mix_instance_type: str) -> str:
    """Why bursts cost less here than in the purchase mix's replay, when they do."""
    burst = sources[1] if len(sources) > 1 else {}
    if not burst.get("instance_type") or not mix_instance_type or \
            burst.get("instance_type") == mix_instance_type:
        return ""
    return (f"this sweep bursts at the cheapest on-demand GPU-hour of the type in the same "
            f"place ({burst['instance_type']}, "
            f"{fmt.usd_per(float(burst.get('usd_per_gpu_hour') or 0), 'GPU-hour')}), the "
            f"purchase mix at the on-demand price of the instance type it commits "
            f"({mix_instance_type})")


def plan_document(
    plan: CapacityPlan, *, inputs: CapacityInputs, prices: CapacityPrices,
    sources: Sequence[dict[str, Any]], purchases: Sequence[Mapping[str, Any]], jobs: PoolJobs,
    purchase: dict[str, Any] | None = None, is_commitment_allowed: bool = True,
    mix_instance_type: str = "",
) -> dict[str, Any]:
    """The capacity document (JSON-safe); `points` and `recommended` carry POINT_KEYS."""
    no_wait_gpus = {p["name"]: int(p["gpus"]) for p in purchases}
    statement = pool_statement(inputs, prices, sources[0], plan, purchases)
    if purchase is not None and purchase.get("would_buy") is not None:
        statement += (" Nothing may be committed on this history yet, so the swept pools show "
                      "what a pool would cost, not a purchase.")
    return {
        **plan.to_dict(),
        "against": _against(plan, purchases, inputs, _burst_words(sources, mix_instance_type)),
        "inputs": inputs.to_dict(),
        "jobs": jobs.n_jobs,
        "gpu_hours": float(jobs.gpu_seconds.sum() / 3600.0),
        "no_wait_pool_gpus": no_wait_gpus.get(WHAT_TO_BUY),
        "no_wait_references": no_wait_gpus,
        "no_wait_purchases": [dict(p) for p in purchases],
        "purchase": purchase,
        "headline": headline(plan, purchase, jobs),
        "is_commitment_allowed": is_commitment_allowed,
        "prices": {
            "pool_usd_per_gpu_hour": prices.pool_usd_per_gpu_hour,
            "on_demand_usd_per_gpu_hour": prices.on_demand_usd_per_gpu_hour,
            "spot_usd_per_gpu_hour": prices.spot_usd_per_gpu_hour,
            "pool_words": prices.pool_words, "pool_statement": statement,
            "sources": list(sources),
        },
        "assumptions": assumptions(inputs, prices),
    }


def document_from_points(jobs: PoolJobs, inputs: CapacityInputs, analysis: Mapping[str, Any],
                         points: Sequence[PointFigures]) -> dict[str, Any]:
    """Recommend among the swept points, compare with the purchase mix's no-wait commitments
    (each priced as it buys them) and build the document."""
    gate = pool_gate(jobs)
    prices, sources = capacity_prices(analysis, jobs.gpu_type, inputs, gate)
    purchases = no_wait_purchases(analysis, jobs.gpu_type)
    buyable = is_buyable(analysis, jobs, inputs, gate)
    plan = plan_from_points(jobs, points, prices, target_p95_wait_hours=
                            inputs.target_p95_wait_hours, no_wait_references=references(purchases),
                            is_commitment_allowed=buyable)
    purchase = pool_purchase(analysis, jobs, inputs, plan.recommended.pool_gpus, prices)
    if not buyable:
        purchase["would_buy"] = would_buy(analysis, jobs, inputs, points,
                                          inputs.target_p95_wait_hours, prices)
    return plan_document(plan, inputs=inputs, prices=prices, sources=sources,
                         purchases=purchases, jobs=jobs, purchase=purchase,
                         is_commitment_allowed=buyable,
                         mix_instance_type=str(_offer(analysis, jobs.gpu_type)["instance_type"]))


def capacity_document(
    frame: pd.DataFrame, analysis: Mapping[str, Any], inputs: CapacityInputs, *,
    sweep: Callable[[PoolJobs, Sequence[GridPoint], CapacityPrices], list[PointFigures]],
) -> dict[str, Any]:
    """Sweep in one go (the command line and small histories) and build the document."""
    jobs = capacity_jobs(frame, inputs)
    prices, _ = capacity_prices(analysis, jobs.gpu_type, inputs, pool_gate(jobs))
    points = sweep(jobs, capacity_grid(jobs, inputs, analysis), prices)
    return document_from_points(jobs, inputs, analysis, points)
