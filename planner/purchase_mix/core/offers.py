"""Prices the caller passes in: one offer per GPU type (rates per instance-hour, USD)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from planner.core.purchase_options import NO_UPFRONT, PAYMENT_OPTION_WORDS


@dataclass(frozen=True)
class CommitmentOption:
    """A reserved/committed term and payment option. `usd_per_hour` is the effective
    per-instance hourly rate, upfront payments amortized over the term; `upfront_usd` is paid
    per instance at purchase for the whole term; `recurring_usd_per_hour` is the hourly fee
    (None: `usd_per_hour` when nothing is paid upfront). `max_instances` caps this term.
    """

    term: str
    term_years: float
    usd_per_hour: float
    max_instances: int | None = None
    payment_option: str = NO_UPFRONT
    upfront_usd: float = 0.0
    recurring_usd_per_hour: float | None = None
    offering_class: str = ""  # "standard" | "convertible" | "" (AWS reserved instances)

    @property
    def fee_usd_per_hour(self) -> float:
        """The hourly fee per instance (`recurring_usd_per_hour`; when the offer leaves it
        out, the rate if nothing is paid upfront, else nothing)."""
        if self.recurring_usd_per_hour is not None:
            return self.recurring_usd_per_hour
        return self.usd_per_hour if self.upfront_usd == 0 else 0.0

    @property
    def payment_words(self) -> str:
        words = PAYMENT_OPTION_WORDS.get(self.payment_option, self.payment_option)
        return f"{words}, {self.offering_class}" if self.offering_class else words

    def __post_init__(self) -> None:
        if self.term_years <= 0 or self.usd_per_hour <= 0:
            raise ValueError(f"term {self.term}: term_years and usd_per_hour must be > 0")
        if self.max_instances is not None and self.max_instances < 0:
            raise ValueError(f"term {self.term}: max_instances must be >= 0")
        if self.upfront_usd < 0:
            raise ValueError(f"term {self.term}: upfront_usd must be >= 0")


@dataclass(frozen=True)
class GpuOffer:
    """Where and at what prices one GPU type can be bought.

    `spot_interruptions_per_hour` is the reclaim hazard per instance-hour (e.g. from the
    provider's interruption band: -ln(1 - monthly fraction) / 730).
    """

    gpu_type: str
    provider: str
    region: str
    instance_type: str
    gpus_per_instance: int
    on_demand_usd_per_hour: float
    commitments: tuple[CommitmentOption, ...] = ()
    spot_usd_per_hour: float | None = None
    spot_interruptions_per_hour: float = 0.0
    # Cheapest on-demand elsewhere (another region or provider), per instance of this size.
    elsewhere_usd_per_hour: float | None = None
    elsewhere: str = ""  # where, which machine (GPUs per machine, SXM or PCIe)
    gpu_words: str = ""  # the bought GPU with its form factor, e.g. "A100 SXM4-40GB"
    # The cheapest on-demand GPU-hour of the type in the same provider and region (where a
    # job that does not fit a committed pool bursts): its instance type, GPUs, $/instance-hour.
    burst_instance_type: str = ""
    burst_gpus_per_instance: int = 0
    burst_usd_per_hour: float | None = None

    def __post_init__(self) -> None:
        if self.gpus_per_instance <= 0:
            raise ValueError(f"{self.gpu_type}: gpus_per_instance must be > 0")
        if self.on_demand_usd_per_hour <= 0:
            raise ValueError(f"{self.gpu_type}: on_demand_usd_per_hour must be > 0")
        if self.spot_usd_per_hour is not None and self.spot_usd_per_hour <= 0:
            raise ValueError(f"{self.gpu_type}: spot_usd_per_hour must be > 0")
        if self.spot_interruptions_per_hour < 0:
            raise ValueError(f"{self.gpu_type}: spot_interruptions_per_hour must be >= 0")
        keys = {(o.term, o.payment_option, o.offering_class) for o in self.commitments}
        if len(keys) != len(self.commitments):
            raise ValueError(f"{self.gpu_type}: duplicate commitment terms")

    @property
    def on_demand_usd_per_gpu_hour(self) -> float:
        return self.on_demand_usd_per_hour / self.gpus_per_instance


def offers_by_type(offers: Sequence[GpuOffer]) -> dict[str, GpuOffer]:
    by_type: dict[str, GpuOffer] = {}
    for offer in offers:
        if offer.gpu_type in by_type:
            raise ValueError(f"more than one offer for {offer.gpu_type}")
        by_type[offer.gpu_type] = offer
    return by_type
