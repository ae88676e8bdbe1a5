"""What to buy for a serving fleet, by the one buying rule
(planner/purchase_mix/core/buying_rule.py, as the purchase mix and capacity planning use it):

- the always-on base (the instances needed at every hour) is committed on the cheapest term
  the rule allows; the rule's history gate reads the *measured* hourly demand: an uploaded
  request log's hours. A constant rate or a stated daily profile is a forecast, not a history,
  so the gate sees zero days of it and commits nothing; its reasons are printed as the rule
  words them;
- the peaks above the base run on-demand, scaled hour by hour, each added instance billed for
  the scale-up delay before it serves;
- spot only for offline batch work (no latency target): then the peaks run on spot where the
  instance has a spot price, since a reclaim only delays work that has no deadline.

Money in USD; rates per instance-hour; months of 730 hours.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.core.cloud import HOURS_PER_MONTH
from planner.core.formatting import label
from planner.purchase_mix.core.buying_rule import PoolPurchase, price_pool
from planner.purchase_mix.core.forecast import MIN_DAYS_FOR_COMMITMENT
from planner.purchase_mix.core.offers import GpuOffer
from planner.purchase_mix.core.risk import RiskSettings
from planner.serving.core.plan import billed_instance_hours
from planner.serving.core.traffic import HOURS_PER_DAY

DAYS_PER_MONTH = HOURS_PER_MONTH / HOURS_PER_DAY
FORECAST_WORDS = (
    "A stated rate or daily profile is a forecast, not a measured history: the buying rule "
    f"commits only on at least {MIN_DAYS_FOR_COMMITMENT} days of measured demand, so the base "
    f"runs on-demand. Upload a request log of {MIN_DAYS_FOR_COMMITMENT} days or more to have "
    "its always-on base committed.")


@dataclass(frozen=True)
class ServingMix:
    """The fleet's purchase: the committed base (the buying rule's lines, or its reasons),
    on-demand (or, offline, spot) peaks, and the monthly cost against all on-demand."""

    base_instances: int  # needed at every hour (of the log, or of the stated day)
    peak_instances: int
    committed: PoolPurchase
    is_forecast: bool  # no measured history: the rule's gate sees 0 days
    committed_usd_per_month: float
    on_demand_usd_per_month: float
    spot_usd_per_month: float
    mix_usd_per_month: float
    all_on_demand_usd_per_month: float
    lines: tuple[str, ...]  # every line as printed: the rule's sentences, peaks, spot, reasons

    @property
    def committed_instances(self) -> int:
        return sum(line.count for line in self.committed.lines)

    @property
    def saving_usd_per_month(self) -> float:
        return self.all_on_demand_usd_per_month - self.mix_usd_per_month


def _peak_words(offer: GpuOffer, above: tuple[int, ...], scale_up_minutes: float,
                usd_per_month: float, option_words: str, is_all: bool) -> str:
    hours = sum(1 for n in above if n > 0)
    if not hours:
        return "No peaks above the committed base: nothing runs " + option_words + "."
    what = ("the whole fleet, scaled hour by hour" if is_all
            else "the peaks above the committed base")
    return (f"Up to {max(above)} x {offer.instance_type} {option_words} in "
            f"{label(offer.provider)} {offer.region} for {what} ({hours} of 24 hours a day, "
            f"{sum(above)} instance-hours a day, each added instance started "
            f"{scale_up_minutes:g} minutes before it serves): ${usd_per_month:,.0f}/month")


def serving_mix(offer: GpuOffer, instances_by_hour: tuple[int, ...],
                history_instances: np.ndarray, *, scale_up_minutes: float, is_offline: bool,
                settings: RiskSettings) -> ServingMix:
    """The purchase of a fleet scaled to `instances_by_hour` (24, hour 0 first) of `offer`'s
    instance type. `history_instances`: instances needed in every measured hour, oldest first
    (empty for a forecast). On-demand is the alternative the rule's savings are against."""
    is_forecast = len(history_instances) == 0
    needed = history_instances if not is_forecast else np.asarray(instances_by_hour)
    base = int(min(int(np.min(needed)), min(instances_by_hour)))
    od = offer.on_demand_usd_per_hour
    committed = price_pool(offer, "cheapest", base * offer.gpus_per_instance,
                           np.asarray(history_instances, dtype=np.float64),
                           alternative_usd_per_hour=od, settings=settings)
    kept = sum(line.count for line in committed.lines)
    above = tuple(n - kept for n in instances_by_hour)
    billed_above = sum(billed_instance_hours(above, scale_up_minutes))
    billed_all = sum(billed_instance_hours(instances_by_hour, scale_up_minutes))
    committed_usd = sum(line.usd_per_hour for line in committed.lines) * HOURS_PER_MONTH
    use_spot = is_offline and offer.spot_usd_per_hour is not None
    peak_rate = offer.spot_usd_per_hour if use_spot and offer.spot_usd_per_hour else od
    peak_usd = billed_above * peak_rate * DAYS_PER_MONTH
    lines = [line.sentence for line in committed.lines]
    lines.append(_peak_words(offer, above, scale_up_minutes, peak_usd,
                             "on spot (offline batch work: a reclaim delays work that has "
                             "no latency target)" if use_spot else "on-demand", kept == 0))
    if not is_offline:
        lines.append("No spot: latency targets are set, and a reclaimed instance drops the "
                     "requests in flight; spot is for offline batch work (no targets).")
    elif not use_spot:
        lines.append(f"No spot price for {offer.instance_type} in {offer.region}: the "
                     "offline peaks run on-demand.")
    if is_forecast:
        lines.append(FORECAST_WORDS)
    lines.extend(r for r in dict.fromkeys(committed.reasons))
    return ServingMix(base, max(instances_by_hour), committed, is_forecast, committed_usd,
                      0.0 if use_spot else peak_usd, peak_usd if use_spot else 0.0,
                      committed_usd + peak_usd, billed_all * od * DAYS_PER_MONTH, tuple(lines))
