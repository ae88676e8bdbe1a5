"""Spot's effective rate for one GPU type's interruptible jobs (checkpoint and rework
overhead from planner.core.spot), per job size when the sizes are known. Rates in USD per
instance-hour."""

from __future__ import annotations

import math
from collections.abc import Mapping

from planner.core.spot import CheckpointPolicy, SpotPlan, plan_spot
from planner.purchase_mix.core.offers import GpuOffer


def spot_plan_for(
    offer: GpuOffer,
    job_gpus: float | None,
    policy: CheckpointPolicy,
    gpu_hours_by_job_gpus: Mapping[int, float] | None = None,
) -> SpotPlan | None:
    """Spot's effective rate for this type's interruptible jobs. With the GPU-hours per job
    size, the overhead is computed per size (instances per job from its GPUs) and averaged
    by GPU-hours; otherwise from the mean job size `job_gpus`."""
    if offer.spot_usd_per_hour is None:
        return None
    if gpu_hours_by_job_gpus:
        return _spot_by_size(offer, gpu_hours_by_job_gpus, policy)
    gpus = job_gpus if job_gpus else float(offer.gpus_per_instance)
    return _spot(offer, gpus, policy)


def _spot(offer: GpuOffer, gpus: float, policy: CheckpointPolicy) -> SpotPlan:
    assert offer.spot_usd_per_hour is not None
    return plan_spot(
        spot_usd_per_hour=offer.spot_usd_per_hour,
        interruptions_per_hour=offer.spot_interruptions_per_hour,
        on_demand_usd_per_hour=offer.on_demand_usd_per_hour,
        instances_per_job=float(max(1, math.ceil(gpus / offer.gpus_per_instance))),
        policy=policy,
    )


def _spot_by_size(
    offer: GpuOffer, gpu_hours: Mapping[int, float], policy: CheckpointPolicy
) -> SpotPlan:
    total = sum(gpu_hours.values())
    plans = {gpus: _spot(offer, float(gpus), policy) for gpus in gpu_hours}
    overhead = sum(plans[g].overhead_fraction * hours for g, hours in gpu_hours.items()) / total
    instances = sum(plans[g].instances_per_job * hours for g, hours in gpu_hours.items()) / total
    effective = (offer.spot_usd_per_hour or 0.0) * (1.0 + overhead)
    mtbf = [p.mean_hours_between_interruptions for p in plans.values()]
    return SpotPlan(
        spot_usd_per_hour=offer.spot_usd_per_hour or 0.0,
        instances_per_job=instances,
        mean_hours_between_interruptions=min((m for m in mtbf if m), default=None),
        checkpoint_interval_hours=None,
        overhead_fraction=overhead,
        effective_usd_per_hour=effective,
        is_chosen=effective < offer.on_demand_usd_per_hour,
    )


