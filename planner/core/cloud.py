"""Cloud facts both planning features use: hours, spot interruption bands, default sizes.
Django-free; one place for each fact (STYLE.md §1.7). Per-provider facts are in
planner.core.providers, purchase options in planner.core.purchase_options.

Units are in the names: hours, bytes, hazard per instance-hour.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date
from typing import Any

HOURS_PER_DAY = 24.0
HOURS_PER_MONTH = 730.0
HOURS_PER_YEAR = 8760.0
# A spot band nobody has published for a provider reads as the top one.
DEFAULT_SPOT_BAND = ">20%"


# Monthly reclaim fraction per AWS Spot Advisor "frequency of interruption" band (Azure shows
# the same bands as eviction rates); each band read at its midpoint, the open ">20%" at 25%.
SPOT_BAND_MONTHLY_FRACTION: dict[str, float] = {
    "<5%": 0.025, "5-10%": 0.075, "10-15%": 0.125, "15-20%": 0.175, ">20%": 0.25,
}


def hazard_per_instance_hour(monthly_fraction: float) -> float:
    """Poisson hazard per instance-hour for a monthly reclaim fraction p: -ln(1 - p) / 730."""
    if not 0.0 <= monthly_fraction < 1.0:
        raise ValueError("monthly interruption fraction must be in [0, 1)")
    return -math.log(1.0 - monthly_fraction) / HOURS_PER_MONTH


def band_hazard(band: str) -> float:
    """Hazard per instance-hour of a Spot Advisor band (e.g. "15-20%")."""
    return hazard_per_instance_hour(SPOT_BAND_MONTHLY_FRACTION[band])


# Default sizes a plan assumes when the user gives none (shown and editable):
# a checkpoint keeps bf16 weights (2 B), fp32 master weights (4 B) and Adam's two fp32
# moments (8 B) per parameter; a tokenized text corpus stores 2 B per token (uint16 ids);
# an image dataset about 110 kB per sample (ImageNet-1k JPEGs: ~140 GB / 1.28 M images).
CHECKPOINT_BYTES_PER_PARAM = 14.0
DATASET_BYTES_PER_TOKEN = 2.0
DATASET_BYTES_PER_IMAGE = 110e3


def default_checkpoint_gb(params: float) -> float:
    """Checkpoint size (GB) of a model with `params` parameters trained with Adam."""
    return params * CHECKPOINT_BYTES_PER_PARAM / 1e9


def default_dataset_gb(*, tokens: float | None, samples: float | None,
                       tokens_per_sample: int, is_image: bool) -> float:
    """Dataset size (GB): tokens x 2 B, or samples x (110 kB per image | tokens x 2 B)."""
    if tokens:
        return tokens * DATASET_BYTES_PER_TOKEN / 1e9
    per_sample = (DATASET_BYTES_PER_IMAGE if is_image
                  else tokens_per_sample * DATASET_BYTES_PER_TOKEN)
    return (samples or 0.0) * per_sample / 1e9


# Years of cloud service left for older GPU generations, as of 2026 (a planning assumption:
# providers retire instance families about 7-9 years after launch; K80 (p2) and P100 are
# being withdrawn, V100 (p3) is the oldest family still sold). Demand for a type is taken to
# end this many years from the end of the history; newer GPUs are not retired within 3 years.
GPU_SERVICE_YEARS_LEFT: dict[str, float] = {
    "K80": 0.25,
    "M60": 0.5,
    "P4": 0.5,
    "P40": 0.75,
    "P100": 1.0,
    "V100": 2.0,
    "T4": 3.0,
}


# Which interruptible jobs may run on spot. Spot capacity for many nodes at once is rarely
# granted together, and a job reclaimed every few hours for days mostly reruns: a job over
# SPOT_MAX_JOB_GPUS GPUs (four 8-GPU nodes) or SPOT_MAX_JOB_HOURS hours stays off spot.
SPOT_MAX_JOB_GPUS = 32
SPOT_MAX_JOB_HOURS = 168.0

# What an energy figure counts, in plans and purchase mixes alike (GPU-side: the host is left out).
ENERGY_COUNTS = ("GPU board power (TDP) × GPU-hours; host CPUs, memory and network are not "
                 "counted. CO2e = energy × data-centre PUE × the region's grid intensity.")


def price_age_days(as_of: Any, today: date | None) -> int | None:
    """Days from a price's as-of date (a date or ISO text) to `today`; None when either is
    unknown. With is_stale_age, the one rule behind every "stale" flag of a page or report."""
    if today is None or not as_of:
        return None
    try:
        return (today - date.fromisoformat(str(as_of)[:10])).days
    except ValueError:
        return None


def is_stale_age(age_days: float | None, stale_days: int | None) -> bool:
    """The old rule, for documents stored before stale_before existed: older than
    `stale_days` on the day it is read."""
    return age_days is not None and stale_days is not None and age_days > stale_days


def is_stale_price(as_of: Any, provider: Any, stale_before: Mapping[str, str] | None) -> bool:
    """THE stale flag of one price: its as-of date (a date or ISO text) is before its
    provider's day in `stale_before` (pricing.selectors.stale_before: PRICE_STALE_DAYS before
    the newest price of that provider in the catalog). Unknown date or provider: not stale."""
    cutoff = (stale_before or {}).get(str(provider or ""))
    return bool(cutoff and as_of and str(as_of)[:10] < cutoff)


def is_stale_row(row: Mapping[str, Any], stale_before: Mapping[str, str] | None,
                 *, age_days: float | None = None, stale_days: int | None = None) -> bool:
    """A stored price row's stale flag: by its provider (is_stale_price); a row stored
    without its provider falls back to its age (is_stale_age)."""
    if row.get("provider") and stale_before is not None:
        return is_stale_price(row.get("as_of"), row.get("provider"), stale_before)
    return is_stale_age(age_days, stale_days)


def stale_rule_text(stale_days: int) -> str:
    """The rule in words, as pages, reports and the manual state it."""
    return (f"stale when it is more than {stale_days} days older than the newest price of the "
            f"same provider in the catalog (a newer snapshot did not confirm it)")
