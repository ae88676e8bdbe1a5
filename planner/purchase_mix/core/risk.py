"""Risk-aware commitment sizing for one GPU type: term and payment choices, and a layered plan.

Objective (a documented equivalent of "maximise the 10 %-worst-case savings"): for each
candidate level, the savings of the commitment against running the same demand without
commitment at the cheapest allowed alternative rate, over block-bootstrapped paths of the
term (forecast.py); the level maximises the lowest, across growth scenarios, of the mean of
the worst 10 % of paths (CVaR). Level 0 scores 0, so the chosen plan's worst case is never
negative. Layering: the 3-year level is sized on 3-year paths; the 1-year level on top of it
on the first year. A term whose effective rate is at or above the alternative is never bought.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from planner.core.cloud import HOURS_PER_MONTH
from planner.core.purchase_options import PURCHASE_OPTION_WORDS
from planner.purchase_mix.core import forecast
from planner.purchase_mix.core.forecast import BlockTable, HistoryGate, Paths
from planner.purchase_mix.core.offers import CommitmentOption

MAX_CANDIDATES = 64
DEFAULT_SCENARIOS: tuple[float, ...] = (-0.5, -0.25, 0.0, 0.25)


@dataclass(frozen=True)
class RiskSettings:
    growth_scenarios_per_year: tuple[float, ...] = DEFAULT_SCENARIOS
    n_paths: int = 64  # per scenario
    tail_fraction: float = 0.10
    seed: int = 0


@dataclass(frozen=True)
class Spread:
    """P10 / P50 / P90 of a quantity across paths and scenarios."""

    p10: float
    p50: float
    p90: float

    @classmethod
    def of(cls, values: np.ndarray) -> Spread:
        p10, p50, p90 = np.percentile(np.asarray(values).ravel(), [10, 50, 90])
        return cls(float(p10), float(p50), float(p90))


@dataclass(frozen=True)
class TermChoice:
    """One (term, payment option) as a standalone choice, sized alone on its own term.

    Rates per instance-hour; upfront per instance for the whole term; money in USD over the
    term unless named monthly. break_even_utilization_pct = effective rate / alternative rate.
    """

    term: str
    term_words: str
    payment_option: str
    payment_words: str
    term_years: float
    usd_per_hour: float
    upfront_usd_per_instance: float
    recurring_usd_per_hour: float
    break_even_utilization_pct: float
    is_allowed: bool
    reason: str
    count: int
    upfront_usd: float
    monthly_usd: float
    break_even_month: int | None
    utilization_pct: Spread | None
    savings_usd: Spread
    worst_case_savings_usd: float


@dataclass(frozen=True)
class Layer:
    """What the layered plan buys in one term (its best payment option)."""

    option: CommitmentOption
    count: int
    savings_usd: Spread  # over the layer's own term, against no commitment
    worst_case_savings_usd: float  # lowest scenario CVaR, over the term
    first_year_savings_usd: Spread | None = None  # the layer's first 12 months


@dataclass(frozen=True)
class TypeSizing:
    gate: HistoryGate
    trend: forecast.TrendFit
    alternative_usd_per_hour: float
    choices: tuple[TermChoice, ...]
    layers: tuple[Layer, ...]  # 3-year first, then 1-year
    reasons: tuple[str, ...]
    first_year_savings_usd: Spread  # layered plan, first year, against no commitment
    first_year_worst_case_usd: float
    worst_case_by_scenario_usd: dict[str, float]  # first year, CVaR per growth scenario
    coverage_pct: Spread  # first year: committed instance-hours used / demand
    utilization_pct: Spread | None  # first year: used / bought


@dataclass(frozen=True)
class _Sim:
    table: BlockTable
    paths: Paths
    settings: RiskSettings
    cache: dict[tuple[float, int], np.ndarray] = field(default_factory=dict)

    def used(self, level: float, weeks: int) -> np.ndarray:
        """Served instance-hours per path; every term and payment option reuses the levels."""
        key = (float(level), weeks)
        if key not in self.cache:
            self.cache[key] = forecast.used_instance_hours(self.table, self.paths, level, weeks)
        return self.cache[key]


def _weeks(term_years: float) -> int:
    return int(round(term_years * forecast.WEEKS_PER_YEAR))


def _savings(sim: _Sim, low: int, count: int, rate: float, alt: float, years: float) -> np.ndarray:
    weeks = _weeks(years)
    gained = sim.used(low + count, weeks) - sim.used(low, weeks)
    return np.asarray(alt * gained - count * rate * weeks * forecast.HOURS_PER_WEEK)


def _score(sim: _Sim, savings: np.ndarray) -> float:
    return min(forecast.cvar_low(row, sim.settings.tail_fraction) for row in savings)


def _candidates(table: BlockTable, scenarios: Sequence[float], years: float) -> np.ndarray:
    peak = float(table.grid[-1]) * max(1.0, max((1 + g) ** years for g in scenarios))
    top = max(1, math.ceil(peak))
    return np.unique(np.round(np.linspace(0, top, min(top, MAX_CANDIDATES) + 1)).astype(int))


def best_count(sim: _Sim, low: int, rate: float, alt: float, years: float) -> tuple[int, float]:
    """Whole instances above `low` maximising the worst scenario's CVaR (ties: fewer)."""
    best, best_score = 0, 0.0
    for count in _candidates(sim.table, sim.paths.scenarios, years):
        if count == 0:
            continue
        score = _score(sim, _savings(sim, low, int(count), rate, alt, years))
        if score > best_score + 1e-9:
            best, best_score = int(count), score
    return best, best_score


def _break_even_month(
    option: CommitmentOption, count: int, used_per_month: float, alt: float
) -> int | None:
    """First month whose cumulative benefit covers upfront plus recurring fees (P50 demand)."""
    upfront = count * option.upfront_usd
    net = alt * used_per_month - count * option.fee_usd_per_hour * HOURS_PER_MONTH
    if count == 0 or net <= 0:
        return None
    month = max(1, math.ceil(upfront / net))
    return month if month <= option.term_years * 12 else None


def _blocked_reason(option: CommitmentOption, gate: HistoryGate, alt: float) -> str:
    words = PURCHASE_OPTION_WORDS.get(option.term, option.term)
    blocked = forecast.option_block(option, gate)
    if blocked:
        return blocked
    if option.usd_per_hour >= alt:
        return (
            f"Never pays off at this price: the {words} costs ${option.usd_per_hour:,.3f}/h "
            f"per instance, break-even at {100.0 * option.usd_per_hour / alt:,.0f}% "
            f"utilisation of the baseline (${alt:,.3f}/h)."
        )
    return ""


def term_choice(
    sim: _Sim, option: CommitmentOption, gate: HistoryGate, alt: float
) -> TermChoice:
    reason = _blocked_reason(option, gate, alt)
    count, score = (0, 0.0)
    if not reason:
        count, score = best_count(sim, 0, option.usd_per_hour, alt, option.term_years)
        if count == 0:
            reason = (
                "No count keeps the worst 10% of outcomes positive in every growth scenario."
            )
    return _choice(sim, option, count, score, alt, reason)


def _choice(
    sim: _Sim, option: CommitmentOption, count: int, score: float, alt: float, reason: str
) -> TermChoice:
    weeks = _weeks(option.term_years)
    savings = _savings(sim, 0, count, option.usd_per_hour, alt, option.term_years)
    used = sim.used(count, weeks)
    bought = count * weeks * forecast.HOURS_PER_WEEK
    months = option.term_years * 12
    return TermChoice(
        term=option.term,
        term_words=PURCHASE_OPTION_WORDS.get(option.term, option.term),
        payment_option=option.payment_option,
        payment_words=option.payment_words,
        term_years=option.term_years,
        usd_per_hour=option.usd_per_hour,
        upfront_usd_per_instance=option.upfront_usd,
        recurring_usd_per_hour=option.fee_usd_per_hour,
        break_even_utilization_pct=100.0 * option.usd_per_hour / alt,
        is_allowed=not reason,
        reason=reason,
        count=count,
        upfront_usd=count * option.upfront_usd,
        monthly_usd=count * option.fee_usd_per_hour * HOURS_PER_MONTH,
        break_even_month=_break_even_month(option, count, float(np.median(used)) / months, alt),
        utilization_pct=Spread.of(100.0 * used / bought) if bought > 0 else None,
        savings_usd=Spread.of(savings),
        worst_case_savings_usd=score if count else 0.0,
    )


def _cheapest(choices: Sequence[TermChoice], options: Sequence[CommitmentOption], is_long: bool
              ) -> CommitmentOption | None:
    allowed = [
        option
        for option, choice in zip(options, choices, strict=True)
        if choice.is_allowed and (option.term_years > 1) == is_long
    ]
    return min(allowed, key=lambda option: option.usd_per_hour, default=None)


def _layers(
    sim: _Sim, choices: Sequence[TermChoice], options: Sequence[CommitmentOption], alt: float
) -> tuple[Layer, ...]:
    layers: list[Layer] = []
    low = 0
    for is_long in (True, False):
        option = _cheapest(choices, options, is_long)
        if option is None:
            continue
        count, score = best_count(sim, low, option.usd_per_hour, alt, option.term_years)
        if count > 0:
            savings = _savings(sim, low, count, option.usd_per_hour, alt, option.term_years)
            first = _savings(sim, low, count, option.usd_per_hour, alt, 1.0)
            layers.append(Layer(option, count, Spread.of(savings), score, Spread.of(first)))
            low += count
    return tuple(layers)


def _first_year(sim: _Sim, layers: Sequence[Layer], alt: float) -> np.ndarray:
    total = np.zeros(sim.paths.scale.shape[:2])
    low = 0
    for layer in layers:
        total += _savings(sim, low, layer.count, layer.option.usd_per_hour, alt, 1.0)
        low += layer.count
    return total


def _no_commitment_reasons(
    gate: HistoryGate, choices: Sequence[TermChoice], options: Sequence[CommitmentOption]
) -> tuple[str, ...]:
    if not options:
        return ("This provider and region sell no commitment for this instance type.",
                *gate.reasons)
    reasons = list(gate.reasons)
    for choice in choices:
        text = f"{choice.term_words}, {choice.payment_words}: {choice.reason}"
        if choice.reason and choice.reason not in gate.reasons and text not in reasons:
            reasons.append(text)
    return tuple(reasons)


def size_type(
    demand_instances: np.ndarray,
    options: Sequence[CommitmentOption],
    *,
    alternative_usd_per_hour: float,
    settings: RiskSettings,
    service_years_left: float | None = None,
) -> TypeSizing:
    """Size commitments for one GPU type.

    demand_instances: hourly demand the commitments may cover, instances (GPUs / GPUs per
    instance), oldest first. options: every term and payment option offered (effective
    USD per instance-hour). alternative_usd_per_hour: the cheapest way to run an instance-hour
    without commitment that the user allows (on-demand, another region or provider, spot with
    its overhead). service_years_left: demand ends after this many years (retired hardware).
    """
    if alternative_usd_per_hour <= 0:
        raise ValueError("the alternative rate must be > 0 USD per instance-hour")
    x = np.asarray(demand_instances, dtype=np.float64)
    trend = forecast.fit_growth(x)
    gate = forecast.gate_history(len(x), trend)
    years = max([1.0, *(option.term_years for option in options)])
    sim = _sim_for(x, years, settings, service_years_left)
    table, paths = sim.table, sim.paths
    alt = alternative_usd_per_hour
    choices = tuple(term_choice(sim, option, gate, alt) for option in options)
    layers = _layers(sim, choices, options, alt)
    first_year = _first_year(sim, layers, alt)
    level = sum(layer.count for layer in layers)
    used = sim.used(level, forecast.WEEKS_PER_YEAR)
    demand = forecast.total_instance_hours(table, paths, forecast.WEEKS_PER_YEAR)
    bought = level * forecast.WEEKS_PER_YEAR * forecast.HOURS_PER_WEEK
    return TypeSizing(
        gate=gate,
        trend=trend,
        alternative_usd_per_hour=alt,
        choices=choices,
        layers=layers,
        reasons=() if layers else _no_commitment_reasons(gate, choices, options),
        first_year_savings_usd=Spread.of(first_year),
        first_year_worst_case_usd=_score(sim, first_year),
        worst_case_by_scenario_usd={
            f"{100 * g:+.0f}%/year": forecast.cvar_low(row, settings.tail_fraction)
            for g, row in zip(paths.scenarios, first_year, strict=True)
        },
        coverage_pct=Spread.of(100.0 * used / np.maximum(demand, 1e-12)),
        utilization_pct=Spread.of(100.0 * used / bought) if bought > 0 else None,
    )


def _sim_for(x: np.ndarray, years: float, settings: RiskSettings,
             service_years_left: float | None = None) -> _Sim:
    table = forecast.block_table(x)
    paths = forecast.sample_paths(
        table, scenarios=settings.growth_scenarios_per_year, n_paths=settings.n_paths,
        n_weeks=_weeks(years), service_years_left=service_years_left, seed=settings.seed,
    )
    return _Sim(table, paths, settings)


def term_savings(
    demand_instances: np.ndarray, option: CommitmentOption, count: int, *,
    alternative_usd_per_hour: float, settings: RiskSettings,
) -> tuple[Spread, Spread]:
    """Savings of `count` instances on `option` against running the same demand at the
    alternative rate: over the whole term and over the first year, P10/P50/P90 over the
    growth scenarios' block-bootstrapped paths of `demand_instances` (hourly, instances)."""
    if alternative_usd_per_hour <= 0:
        raise ValueError("the alternative rate must be > 0 USD per instance-hour")
    x = np.asarray(demand_instances, dtype=np.float64)
    sim = _sim_for(x, max(1.0, option.term_years), settings)
    alt, rate = alternative_usd_per_hour, option.usd_per_hour
    return (Spread.of(_savings(sim, 0, count, rate, alt, option.term_years)),
            Spread.of(_savings(sim, 0, count, rate, alt, 1.0)))
