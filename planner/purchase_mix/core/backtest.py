"""Look-back sensitivity of THE recommendation, and a train/test backtest of the hindsight
sizing (exact optimum on a window, replayed on the rest).

Look-back: each window (the last N days) is sized the way what to buy is (buy.what_to_buy:
risk-sized, same growth scenarios, same gates: under 30 days nothing is committed, 3-year
terms need 90 days), then that purchase is replayed on the window and on the whole history.
The row of the window what to buy was sized on is the recommendation itself (its purchase,
its replay), so the table and the summary's "replayed on your history" are one number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from planner.core.serialize import json_safe
from planner.core.spot import DEFAULT_CHECKPOINT_POLICY, CheckpointPolicy
from planner.purchase_mix.core.buy import WhatToBuy, buy_decision, what_to_buy
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.hindsight import hindsight_decisions
from planner.purchase_mix.core.offers import GpuOffer
from planner.purchase_mix.core.outcome import ReplayOutcome
from planner.purchase_mix.core.replay import TypeDecision, replay_mix
from planner.purchase_mix.core.risk import RiskSettings

LOOKBACK_DAYS: tuple[int, ...] = (7, 30, 60, 90)


@dataclass(frozen=True)
class LookbackResult:
    days: int | None  # None = the whole history
    is_partial: bool  # the history is shorter than the window
    decisions: tuple[TypeDecision, ...]
    hourly_commitment_usd: float  # effective, upfront amortised, all lines
    window: ReplayOutcome  # replayed on the look-back window itself
    full_history: ReplayOutcome  # the same purchase replayed on the whole history
    words: str = ""  # "2 x p4de.24xlarge, 3-year reservation; ..." or "nothing committed"
    is_recommendation: bool = False  # the window what to buy was sized on: that purchase


@dataclass(frozen=True)
class Sensitivity:
    results: tuple[LookbackResult, ...]

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = json_safe(self)
        return result


@dataclass(frozen=True)
class SizingRule:
    """How what to buy was sized, to size every look-back window the same way."""

    settings: RiskSettings
    is_spot_allowed: bool = False
    is_elsewhere_allowed: bool = False
    service_years_left: Mapping[str, float] | None = None


def _bought_words(buy: WhatToBuy) -> str:
    words = "; ".join(f"{line.count} x {line.instance_type}, {line.term_words}"
                      for line in buy.lines) or "nothing committed"
    spot = [item.gpu_type for item in buy.types if item.is_spot]
    return words + (f"; spot for interruptible jobs ({', '.join(spot)})" if spot else "")


def _row(days: int | None, buy: WhatToBuy, window: HourlyDemand, demand: HourlyDemand,
         offers: Sequence[GpuOffer], *, is_recommendation: bool) -> LookbackResult:
    decisions = tuple(buy_decision(item) for item in buy.types)
    on_window = replay_mix(decisions, window, offers).total
    whole = replay_mix(decisions, demand, offers).total
    return LookbackResult(days, days is not None and days * 24 > demand.n_hours, decisions,
                          buy.usd_per_hour, on_window, whole, _bought_words(buy),
                          is_recommendation)


def lookback_sensitivity(
    demand: HourlyDemand,
    offers: Sequence[GpuOffer],
    *,
    rule: SizingRule,
    recommended: WhatToBuy,
    sized_on_days: int | None,
    days: Sequence[int] = LOOKBACK_DAYS,
) -> Sensitivity:
    """For each N in `days`, and the window what to buy was sized on (`sized_on_days`, None
    = the whole history), the purchase sized on the last N days and its replayed savings.
    The recommendation's own window reuses `recommended` (not sized again)."""
    windows: list[int | None] = list(days)
    if sized_on_days not in windows:
        windows.append(sized_on_days)
    results = []
    for window_days in windows:
        if window_days is not None and window_days <= 0:
            raise ValueError("look-back days must be > 0")
        window = demand.last_days(window_days) if window_days else demand
        is_recommendation = window_days == sized_on_days
        buy = recommended if is_recommendation else what_to_buy(
            window, offers, settings=rule.settings, is_spot_allowed=rule.is_spot_allowed,
            is_elsewhere_allowed=rule.is_elsewhere_allowed,
            service_years_left=rule.service_years_left)
        results.append(_row(window_days, buy, window, demand, offers,
                            is_recommendation=is_recommendation))
    return Sensitivity(tuple(results))


@dataclass(frozen=True)
class StrategyResult:
    name: str  # "all_on_demand" | "fit_on_train" | "lookback_30d" | "hindsight"
    decisions: tuple[TypeDecision, ...]
    test: ReplayOutcome  # replayed on the test part
    regret_usd: float  # test cost minus the hindsight optimum's test cost


@dataclass(frozen=True)
class BacktestResult:
    train_hours: int
    test_hours: int
    strategies: tuple[StrategyResult, ...]

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = json_safe(self)
        return result


def _no_commitment(decisions: Sequence[TypeDecision]) -> tuple[TypeDecision, ...]:
    return tuple(
        TypeDecision(item.gpu_type, tuple(0 for _ in item.levels), False) for item in decisions
    )


def backtest(
    demand: HourlyDemand,
    offers: Sequence[GpuOffer],
    *,
    train_fraction: float = 2 / 3,
    lookback_days: int = 30,
    checkpoint_policy: CheckpointPolicy = DEFAULT_CHECKPOINT_POLICY,
) -> BacktestResult:
    """Fit on the first `train_fraction` of hours, cost the rest; compare with baselines."""
    if not 0 < train_fraction < 1:
        raise ValueError("train_fraction must be between 0 and 1")
    split = int(round(demand.n_hours * train_fraction))
    if split < 1 or split >= demand.n_hours:
        raise ValueError("the history is too short to split")
    train, test = demand.window(0, split), demand.window(split, demand.n_hours)
    fitted = hindsight_decisions(train, offers, checkpoint_policy=checkpoint_policy)
    candidates = {
        "all_on_demand": _no_commitment(fitted),
        "fit_on_train": fitted,
        f"lookback_{lookback_days}d": hindsight_decisions(
            train.last_days(lookback_days), offers, checkpoint_policy=checkpoint_policy
        ),
        "hindsight": hindsight_decisions(test, offers, checkpoint_policy=checkpoint_policy),
    }
    outcomes = {
        name: replay_mix(decisions, test, offers, checkpoint_policy=checkpoint_policy).total
        for name, decisions in candidates.items()
    }
    best = outcomes["hindsight"].cost_usd
    strategies = tuple(
        StrategyResult(name, tuple(candidates[name]), outcome, outcome.cost_usd - best)
        for name, outcome in outcomes.items()
    )
    return BacktestResult(split, demand.n_hours - split, strategies)
