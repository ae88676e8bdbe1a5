"""The one buying rule: what any commitment the product recommends must satisfy, and the one
line format every page, report, API and command shows it in.

Used by the purchase mix (buy.py, risk-sized layers), its hindsight reference (hindsight.py)
and capacity planning (a committed pool of the size the frontier recommends).

- History gates (forecast.gate_history): under 30 days of history nothing is committed; a
  3-year term needs 90 days and no significant decline. The reasons are carried wherever
  nothing is bought.
- Whole instances: what is priced is what can be bought. A size that is not a whole number
  of instances is refused (never silently rounded).
- Full-term money: `full_term_cost_usd` = upfront + hourly fee x every hour of the term;
  savings over the term and over the first year (P10/P50/P90 over the demand scenarios'
  paths) against the alternative; break-even utilisation = effective rate / alternative rate.

Money in USD; rates per instance-hour unless named per GPU-hour.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from planner.core.cloud import HOURS_PER_YEAR
from planner.core.formatting import label
from planner.core.purchase_options import PURCHASE_OPTION_WORDS
from planner.purchase_mix.core import forecast
from planner.purchase_mix.core.forecast import HistoryGate, option_block
from planner.purchase_mix.core.offers import CommitmentOption, GpuOffer
from planner.purchase_mix.core.risk import RiskSettings, Spread, term_savings

# The fields every purchase line carries, in every document (the purchase mix's
# `what_to_buy.lines`, capacity's `purchase.lines`).
LINE_FIELDS: tuple[str, ...] = (
    "term", "payment_option", "count", "gpus", "upfront_usd", "usd_per_hour", "savings_usd",
    "break_even_utilization_pct", "words", "full_term_cost_usd", "first_year_savings_usd",
    "sentence",
)


@dataclass(frozen=True)
class BuyLine:
    """One purchase: `count` instances of `instance_type` in `region` for the term."""

    gpu_type: str
    provider: str
    region: str
    instance_type: str
    term: str
    term_words: str
    payment_option: str
    payment_words: str
    count: int
    gpus: int
    upfront_usd: float  # all instances, paid at purchase
    usd_per_hour: float  # all instances, effective (upfront amortised + fee)
    recurring_usd_per_hour: float  # all instances, billed hourly
    starting: str
    gpus_per_instance: int = 1
    offering_class: str = ""
    term_years: float = 1.0
    break_even_utilization_pct: float = 0.0  # effective rate / the baseline's rate
    savings_usd: Spread | None = None  # over the term, P10/P50/P90, against the baseline
    words: str = ""  # "3 x p4d.24xlarge (8 GPUs each, 24 GPUs)"
    full_term_cost_usd: float = 0.0  # upfront + hourly fee x every hour of the term
    first_year_savings_usd: Spread | None = None  # the first 12 months, P10/P50/P90
    sentence: str = ""  # the one line every page, report and command prints


def history_gate(demand_instances: np.ndarray) -> HistoryGate:
    """The history gate for hourly demand (oldest first): its length and its trend."""
    x = np.asarray(demand_instances, dtype=np.float64)
    return forecast.gate_history(len(x), forecast.fit_growth(x))


def allowed_options(options: Sequence[CommitmentOption], gate: HistoryGate
                    ) -> tuple[CommitmentOption, ...]:
    """The terms the history allows."""
    return tuple(option for option in options if not option_block(option, gate))


def whole_instances(gpus: int, gpus_per_instance: int, instance_type: str) -> int:
    """Instances for `gpus` GPUs; ValueError (naming pool_gpus) unless it is a whole number."""
    if gpus < 0 or gpus % gpus_per_instance:
        below = gpus // gpus_per_instance * gpus_per_instance
        raise ValueError(
            f"pool_gpus: {gpus} GPUs is not a whole number of {instance_type} "
            f"({gpus_per_instance} GPUs each): choose {below} or {below + gpus_per_instance}")
    return gpus // gpus_per_instance


def count_words(count: int, instance_type: str, gpus_per_instance: int) -> str:
    """"3 x p4d.24xlarge (8 GPUs each, 24 GPUs)": instances, GPUs per instance and in all."""
    each = "1 GPU each" if gpus_per_instance == 1 else f"{gpus_per_instance} GPUs each"
    total = count * gpus_per_instance
    return f"{count} x {instance_type} ({each}, {total} GPU{'' if total == 1 else 's'})"


def _usd(value: float) -> str:
    return f"-${-value:,.0f}" if value < 0 else f"${value:,.0f}"


def line_sentence(line: BuyLine) -> str:
    """The one line: what, where, term and payment, money over the whole term, savings
    P10/P50/P90 over the term and the first year, break-even utilisation."""
    where = ("your data centre" if line.provider == "owned"
             else f"{label(line.provider)} {line.region}")
    text = (f"{line.words} in {where}, {line.term_words}, "
            f"{line.payment_words}: {_usd(line.upfront_usd)} upfront + "
            f"${line.recurring_usd_per_hour:,.2f}/hour, {_usd(line.full_term_cost_usd)} over "
            f"the {line.term_years:g}-year term")
    if line.savings_usd is not None:
        s = line.savings_usd
        text += (f"; saves {_usd(s.p10)} / {_usd(s.p50)} / {_usd(s.p90)} over the term "
                 "(P10 / P50 / P90)")
    if line.first_year_savings_usd is not None:
        f = line.first_year_savings_usd
        text += f", {_usd(f.p10)} / {_usd(f.p50)} / {_usd(f.p90)} in the first year"
    return text + f"; break-even at {line.break_even_utilization_pct:.0f}% utilisation"


def buy_line(
    offer: GpuOffer, option: CommitmentOption, count: int, *, alternative_usd_per_hour: float,
    savings_usd: Spread | None, first_year_savings_usd: Spread | None,
) -> BuyLine:
    """`count` whole instances of the offer on `option`, with its full-term money."""
    if count < 0:
        raise ValueError("count: instances must be >= 0")
    recurring = option.fee_usd_per_hour
    term_hours = option.term_years * HOURS_PER_YEAR
    line = BuyLine(
        gpu_type=offer.gpu_type, provider=offer.provider, region=offer.region,
        instance_type=offer.instance_type, term=option.term,
        term_words=PURCHASE_OPTION_WORDS.get(option.term, option.term),
        payment_option=option.payment_option, payment_words=option.payment_words,
        count=count, gpus=count * offer.gpus_per_instance,
        upfront_usd=count * option.upfront_usd, usd_per_hour=count * option.usd_per_hour,
        recurring_usd_per_hour=count * recurring,
        starting="now" if option.term_years > 1 else "now; review at renewal in 12 months",
        gpus_per_instance=offer.gpus_per_instance, offering_class=option.offering_class,
        term_years=option.term_years,
        break_even_utilization_pct=100.0 * option.usd_per_hour / alternative_usd_per_hour,
        savings_usd=savings_usd,
        words=count_words(count, offer.instance_type, offer.gpus_per_instance),
        full_term_cost_usd=count * (option.upfront_usd + recurring * term_hours),
        first_year_savings_usd=first_year_savings_usd,
    )
    return replace(line, sentence=line_sentence(line))  # from the finished line, once


@dataclass(frozen=True)
class PoolPurchase:
    """What to buy for a committed pool: its lines (empty when nothing may be committed) and,
    then, why."""

    lines: tuple[BuyLine, ...]
    reasons: tuple[str, ...]
    gate: HistoryGate


NO_POOL = "The recommended pool has no GPUs: every job runs in the cloud."


def pool_option(offer: GpuOffer, gate: HistoryGate, term: str
                ) -> tuple[CommitmentOption | None, tuple[str, ...]]:
    """The commitment a pool is bought on: the cheapest per hour of `term` ("cheapest": of
    any term) that the history allows; None with the reasons when none is."""
    sold = [o for o in offer.commitments if term == "cheapest" or o.term == term]
    where = f"{label(offer.provider)} {offer.region} {offer.instance_type}"
    if not sold:
        what = "commitment" if term == "cheapest" else PURCHASE_OPTION_WORDS.get(term, term)
        return None, (f"{where} sells no {what} for {offer.gpu_type}.",)
    allowed = allowed_options(sold, gate)
    if not allowed:
        return None, tuple(dict.fromkeys(option_block(o, gate) for o in sold))
    return min(allowed, key=lambda o: o.usd_per_hour), ()


def ungated(gate: HistoryGate) -> HistoryGate:
    """The same history with every term allowed: to price what a pool would cost once the
    history is long enough (never a recommendation)."""
    return HistoryGate(gate.days, True, True, ())


def price_pool(
    offer: GpuOffer, term: str, pool_gpus: int, demand_instances: np.ndarray, *,
    alternative_usd_per_hour: float, settings: RiskSettings, is_gated: bool = True,
) -> PoolPurchase:
    """A pool of `pool_gpus` GPUs committed on the cheapest allowed option of `term`, as
    whole instances, with its savings against the alternative over the demand scenarios'
    paths of `demand_instances` (hourly, instances, oldest first). is_gated False: priced
    as if the history allowed every term (what it would cost; not a purchase)."""
    gate = history_gate(demand_instances)
    if not is_gated:
        gate = ungated(gate)
    count = whole_instances(pool_gpus, offer.gpus_per_instance, offer.instance_type)
    option, reasons = pool_option(offer, gate, term)
    if option is None:  # why nothing may be bought comes before the pool's size
        return PoolPurchase((), reasons, gate)
    if count == 0:
        return PoolPurchase((), (NO_POOL,), gate)
    term_spread, first_year = term_savings(
        demand_instances, option, count, alternative_usd_per_hour=alternative_usd_per_hour,
        settings=settings)
    line = buy_line(offer, option, count, alternative_usd_per_hour=alternative_usd_per_hour,
                    savings_usd=term_spread, first_year_savings_usd=first_year)
    return PoolPurchase((line,), (), gate)
