"""Honest backtest: fit on the first part of the history, cost every strategy on the rest.

Strategies (per GPU type, levels in whole instances of the type's instance type):
  all on-demand; the recommendation (risk.py, fitted on the training part); commit at the
  last 30 training days' minimum, at the training P20 and at the P50 (each at the cheapest
  commitment rate offered); and two hindsight optima solved on the test part itself.
Every strategy is ONE purchase costed two ways, over two spans:
  test cost: the test hours only: commitments at their effective rate for every test hour,
    demand above them at the cheapest allowed alternative, interruptible jobs on spot as the
    mix decides ("all on-demand" runs everything on demand);
  whole-term cost: the test cost plus what each commitment still owes after the test part,
    as if demand stopped there (a 3-year term on a 51-day test part pays ~3 years).
The hindsight optimum differs by span, so it is two rows, each with its own purchase: the
lowest test cost ("hindsight", regret reference of the test cost) and the lowest whole-term
cost ("hindsight_whole_term", regret reference of the whole-term cost). Regret = cost minus
the column's hindsight optimum, so it is never negative.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from planner.core.purchase_options import PURCHASE_OPTION_WORDS
from planner.core.serialize import json_safe
from planner.purchase_mix.core.buy import type_inputs
from planner.purchase_mix.core.commitment import TermRate, solve_commitment
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.offers import CommitmentOption, GpuOffer
from planner.purchase_mix.core.risk import RiskSettings, size_type

HOURS_PER_YEAR = 8760.0
STRATEGIES: tuple[tuple[str, str], ...] = (
    ("all_on_demand", "all on-demand"),
    ("recommendation", "the recommendation (risk-sized on the training part)"),
    ("minimum_30d", "commit at the last 30 days' minimum"),
    ("p20", "commit at the P20 of hourly demand"),
    ("p50", "commit at the P50 of hourly demand"),
    ("hindsight", "hindsight optimum for the test hours"),
    ("hindsight_whole_term", "hindsight optimum, terms charged in full"),
)


@dataclass
class StrategyCost:
    name: str
    words: str
    # "p4de.24xlarge, 3-year reservation" -> instances, over the priced GPU types
    instances_by_term: dict[str, int] = field(default_factory=dict)
    spot_gpu_types: list[str] = field(default_factory=list)  # types whose interruptible
    # jobs this purchase runs on spot
    test_cost_usd: float = 0.0
    whole_term_cost_usd: float = 0.0
    savings_vs_on_demand_usd: float = 0.0
    regret_usd: float = 0.0
    whole_term_regret_usd: float = 0.0


@dataclass(frozen=True)
class TermBacktest:
    train_hours: int
    test_hours: int
    strategies: tuple[StrategyCost, ...]

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = json_safe(self)
        return result


@dataclass(frozen=True)
class _Levels:
    """Instances per commitment option (offer order)."""

    counts: tuple[int, ...]


def _cheapest_index(options: Sequence[CommitmentOption]) -> int:
    return int(np.argmin([option.usd_per_hour for option in options]))


def _at_level(options: Sequence[CommitmentOption], level: float) -> _Levels:
    counts = [0] * len(options)
    if options:
        counts[_cheapest_index(options)] = max(0, int(np.floor(level)))
    return _Levels(tuple(counts))


def _recommended(options: Sequence[CommitmentOption], base: np.ndarray, alt: float,
                 settings: RiskSettings) -> _Levels:
    sizing = size_type(base, options, alternative_usd_per_hour=alt, settings=settings)
    counts = [0] * len(options)
    for layer in sizing.layers:
        counts[list(options).index(layer.option)] += layer.count
    return _Levels(tuple(counts))


def _hindsight(options: Sequence[CommitmentOption], test: np.ndarray, alt: float,
               stretch: Sequence[float]) -> _Levels:
    if not options:
        return _Levels(())
    terms = [TermRate(o.usd_per_hour * k) for o, k in zip(options, stretch, strict=True)]
    return _Levels(solve_commitment(test, terms, alt).levels)


def _cost(options: Sequence[CommitmentOption], levels: _Levels, test: np.ndarray,
          alt: float) -> tuple[float, float]:
    """(test-part cost, whole-term cost) of the committable demand, USD."""
    level = float(sum(levels.counts))
    hourly = sum(c * o.usd_per_hour for c, o in zip(levels.counts, options, strict=True))
    above = float(np.maximum(test - level, 0.0).sum()) * alt
    test_cost = hourly * len(test) + above
    owed = sum(
        c * o.usd_per_hour * max(o.term_years * HOURS_PER_YEAR - len(test), 0.0)
        for c, o in zip(levels.counts, options, strict=True)
    )
    return test_cost, test_cost + owed


def _type_levels(offer: GpuOffer, train: np.ndarray, test: np.ndarray, alt: float,
                 settings: RiskSettings) -> dict[str, _Levels]:
    """One purchase per strategy (instances per commitment option, offer order)."""
    options = offer.commitments
    # A term longer than the test part is charged in full: its rate stretched to the term.
    stretch = [max(o.term_years * HOURS_PER_YEAR / len(test), 1.0) for o in options]
    return {
        "all_on_demand": _Levels(tuple(0 for _ in options)),
        "recommendation": _recommended(options, train, alt, settings),
        "minimum_30d": _at_level(options, float(train[-30 * 24:].min())),
        "p20": _at_level(options, float(np.percentile(train, 20))),
        "p50": _at_level(options, float(np.percentile(train, 50))),
        "hindsight": _hindsight(options, test, alt, [1.0] * len(options)),
        "hindsight_whole_term": _hindsight(options, test, alt, stretch),
    }


def backtest_terms(
    demand: HourlyDemand,
    offers: Sequence[GpuOffer],
    *,
    settings: RiskSettings,
    train_fraction: float = 2 / 3,
    is_spot_allowed: bool = False,
    is_elsewhere_allowed: bool = False,
) -> TermBacktest:
    """Fit on the first `train_fraction` of the hours, cost on the rest (see module doc)."""
    if not 0 < train_fraction < 1:
        raise ValueError("train_fraction must be between 0 and 1")
    split = int(round(demand.n_hours * train_fraction))
    if split < 24 or demand.n_hours - split < 24:
        raise ValueError("the history is too short to split into a day of training and of test")
    rows = {name: StrategyCost(name, words) for name, words in STRATEGIES}
    by_type = {offer.gpu_type: offer for offer in offers}
    for name in demand.gpu_types:
        if name in by_type:
            _add_type(rows, by_type[name], demand, split, settings,
                      is_spot_allowed=is_spot_allowed, is_elsewhere_allowed=is_elsewhere_allowed)
    _finish(rows)
    return TermBacktest(split, demand.n_hours - split, tuple(rows.values()))


def _term_key(offer: GpuOffer, option: CommitmentOption) -> str:
    """"p4de.24xlarge, 3-year reservation": the instance names the GPU type it buys."""
    return f"{offer.instance_type}, {PURCHASE_OPTION_WORDS.get(option.term, option.term)}"


def _add_type(rows: dict[str, StrategyCost], offer: GpuOffer, demand: HourlyDemand, split: int,
              settings: RiskSettings, *, is_spot_allowed: bool,
              is_elsewhere_allowed: bool) -> None:
    inputs = type_inputs(offer, demand, is_spot_allowed=is_spot_allowed,
                         is_elsewhere_allowed=is_elsewhere_allowed)
    alt = inputs.alternative.usd_per_hour
    base, spot = inputs.base_instances, inputs.spot_instances[split:]
    train, test = base[:split], base[split:]
    spot_cost = float(spot.sum()) * (inputs.spot.effective_usd_per_hour if inputs.spot else 0.0)
    on_demand = float(test.sum() + spot.sum()) * offer.on_demand_usd_per_hour
    for name, levels in _type_levels(offer, train, test, alt, settings).items():
        row = rows[name]
        if name == "all_on_demand":
            row.test_cost_usd += on_demand
            row.whole_term_cost_usd += on_demand
            continue
        test_cost, whole_term_cost = _cost(offer.commitments, levels, test, alt)
        row.test_cost_usd += test_cost + spot_cost
        row.whole_term_cost_usd += whole_term_cost + spot_cost
        if inputs.is_spot:
            row.spot_gpu_types.append(offer.gpu_type)
        for option, count in zip(offer.commitments, levels.counts, strict=True):
            if count:  # only what is bought: an empty mapping reads "nothing committed"
                key = _term_key(offer, option)
                row.instances_by_term[key] = row.instances_by_term.get(key, 0) + count


def _finish(rows: dict[str, StrategyCost]) -> None:
    on_demand = rows["all_on_demand"].test_cost_usd
    best = rows["hindsight"].test_cost_usd
    best_whole = rows["hindsight_whole_term"].whole_term_cost_usd
    for row in rows.values():
        row.savings_vs_on_demand_usd = on_demand - row.test_cost_usd
        row.regret_usd = row.test_cost_usd - best
        row.whole_term_regret_usd = row.whole_term_cost_usd - best_whole
