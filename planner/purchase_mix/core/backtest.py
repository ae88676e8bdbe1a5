"""Look-back sensitivity and a train/test backtest of the hindsight sizing (exact optimum on a
window, replayed on the rest)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from planner.core.serialize import json_safe
from planner.core.spot import DEFAULT_CHECKPOINT_POLICY, CheckpointPolicy
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.hindsight import hindsight_decisions, hindsight_replay
from planner.purchase_mix.core.offers import GpuOffer
from planner.purchase_mix.core.outcome import ReplayOutcome
from planner.purchase_mix.core.replay import TypeDecision, replay_mix

LOOKBACK_DAYS: tuple[int, ...] = (7, 30, 60, 90)


@dataclass(frozen=True)
class LookbackResult:
    days: int
    is_partial: bool  # the history is shorter than the window
    decisions: tuple[TypeDecision, ...]
    hourly_commitment_usd: float
    window: ReplayOutcome  # replayed on the look-back window itself
    full_history: ReplayOutcome  # the same purchase replayed on the whole history


@dataclass(frozen=True)
class Sensitivity:
    results: tuple[LookbackResult, ...]

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = json_safe(self)
        return result


def lookback_sensitivity(
    demand: HourlyDemand,
    offers: Sequence[GpuOffer],
    *,
    days: Sequence[int] = LOOKBACK_DAYS,
    checkpoint_policy: CheckpointPolicy = DEFAULT_CHECKPOINT_POLICY,
) -> Sensitivity:
    """Fit on the last N days for each N; report the purchase and its replayed savings."""
    results = []
    for window_days in days:
        if window_days <= 0:
            raise ValueError("look-back days must be > 0")
        window = demand.last_days(window_days)
        fit = hindsight_replay(window, offers, checkpoint_policy=checkpoint_policy)
        decisions = tuple(plan.decision for plan in fit.plans)
        whole = replay_mix(decisions, demand, offers, checkpoint_policy=checkpoint_policy)
        results.append(
            LookbackResult(
                window_days,
                window_days * 24 > demand.n_hours,
                decisions,
                fit.hourly_commitment_usd,
                fit.total,
                whole.total,
            )
        )
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
