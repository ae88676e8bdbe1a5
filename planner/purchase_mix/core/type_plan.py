"""What the mix buys for one GPU type (shared by recommend and savings_plan_mix)."""

from __future__ import annotations

from dataclasses import dataclass

from planner.core.spot import SpotPlan
from planner.purchase_mix.core.offers import GpuOffer
from planner.purchase_mix.core.outcome import ReplayOutcome


@dataclass(frozen=True)
class TypeDecision:
    """What to buy for one GPU type: instances per commitment term (offer order), spot or not."""

    gpu_type: str
    levels: tuple[int, ...]
    is_spot: bool


@dataclass(frozen=True)
class TermCommitment:
    term: str
    term_years: float
    instances: int
    gpus: int
    usd_per_hour_per_instance: float
    hourly_commitment_usd: float
    total_commitment_usd: float  # over the whole term
    break_even_utilization_pct: float  # committed rate / on-demand rate
    discount_pct: float
    term_words: str = ""  # plain words, e.g. "1-year reservation"


@dataclass(frozen=True)
class TypePlan:
    offer: GpuOffer
    decision: TypeDecision
    commitments: tuple[TermCommitment, ...]
    spot: SpotPlan | None
    expected: ReplayOutcome
    p10_week: ReplayOutcome
    hourly_commitment_usd: float
    total_commitment_usd: float
