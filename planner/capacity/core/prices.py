"""What a GPU-hour costs: on the committed pool (reservation, savings plan or owned hardware)
and in the cloud when a job bursts (on-demand, or spot for interruptible jobs)."""

from __future__ import annotations

from dataclasses import dataclass

HOURS_PER_YEAR = 8766.0  # 365.25 days
# What owned hardware can be, each (lowest, highest, unit): a lifetime of a few hours would
# make every GPU-hour cost the whole purchase.
OWNED_RANGES: dict[str, tuple[float, float, str]] = {
    "purchase_usd_per_gpu": (0.0, 1_000_000.0, "USD"),
    "lifetime_years": (0.25, 30.0, "years"),
    "power_kw_per_gpu": (0.0, 10.0, "kW"),
    "pue": (1.0, 3.0, ""),
    "usd_per_kwh": (0.0, 10.0, "USD per kWh"),
}


@dataclass(frozen=True)
class OwnedHardware:
    """Bought GPUs: price per GPU (server share included), years of use, power per GPU
    (kW, at the wall before cooling), the data centre's PUE and the electricity price."""

    purchase_usd_per_gpu: float
    lifetime_years: float
    power_kw_per_gpu: float
    pue: float
    usd_per_kwh: float

    def __post_init__(self) -> None:
        for name, (low, high, unit) in OWNED_RANGES.items():
            value = getattr(self, name)
            if not low <= value <= high:  # also refuses NaN
                within = f"{low:g} to {high:g} {unit}".strip()
                raise ValueError(f"{name}: {value:g} is out of range ({within})")

    @property
    def usd_per_gpu_hour(self) -> float:
        """Straight-line depreciation per hour of the lifetime plus power x PUE x $/kWh
        (every hour: an owned GPU is paid for whether it runs or not)."""
        capital = self.purchase_usd_per_gpu / (self.lifetime_years * HOURS_PER_YEAR)
        return capital + self.power_kw_per_gpu * self.pue * self.usd_per_kwh


@dataclass(frozen=True)
class CapacityPrices:
    """USD per GPU-hour. The pool is billed for every hour of the span whether busy or not;
    burst jobs pay on-demand, or spot when interruptible and `spot_usd_per_gpu_hour` is
    set (None: spot not allowed or not sold)."""

    pool_usd_per_gpu_hour: float
    on_demand_usd_per_gpu_hour: float
    spot_usd_per_gpu_hour: float | None = None
    pool_words: str = ""

    def __post_init__(self) -> None:
        if not self.pool_usd_per_gpu_hour >= 0:
            raise ValueError("pool_usd_per_gpu_hour: must be >= 0")
        if not self.on_demand_usd_per_gpu_hour > 0:
            raise ValueError("on_demand_usd_per_gpu_hour: must be > 0")
        if self.spot_usd_per_gpu_hour is not None and not self.spot_usd_per_gpu_hour > 0:
            raise ValueError("spot_usd_per_gpu_hour: must be > 0")
