"""Owned hardware's cost per GPU-hour, line by line, with where each figure comes from.

Per GPU type: the purchase price and power come from NVIDIA's own DGX systems (list price at
launch, maximum system power, divided by their 8 GPUs); every other figure is a stated
assumption. Each is editable; a figure the user gave is labelled "your input", one left
blank "default (source)".

Per GPU-hour (H hours a year, L years of life, r the cost of capital a year, P the price):
  hardware        P / (L x H)
  network         P x network % / (L x H)
  storage         P x storage % / (L x H)
  resale          - P x resale % / (L x H)            (sold at the end of its life)
  cost of capital the capital recovery factor's interest on (P (1 + network % + storage %)
                  - resale discounted over L years) / H
  power           kW x PUE x USD/kWh
  space           kW x USD per kW-month x 12 / H      (colocation space and cooling)
  staff           USD per GPU-year / H
An owned GPU is paid for every hour, busy or idle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from planner.capacity.core.prices import HOURS_PER_YEAR, OwnedHardware


@dataclass(frozen=True)
class Default:
    value: float
    source: str


_PER_8 = "divided by its 8 GPUs"
GPU_DEFAULTS: dict[str, dict[str, Default]] = {
    "V100": {
        "purchase_usd_per_gpu": Default(18_625.0, "NVIDIA DGX-1 with 8 V100, list price "
                                        f"$149,000 at launch (GTC, May 2017), {_PER_8}; a "
                                        "used V100 costs far less today"),
        "power_kw_per_gpu": Default(0.4375, f"NVIDIA DGX-1 datasheet, 3.5 kW maximum, {_PER_8}"),
    },
    "A100": {
        "purchase_usd_per_gpu": Default(24_875.0, "NVIDIA DGX A100, list price $199,000 at "
                                        f"launch (May 2020), {_PER_8}"),
        "power_kw_per_gpu": Default(0.8125, f"NVIDIA DGX A100 datasheet, 6.5 kW maximum, "
                                    f"{_PER_8}"),
    },
    "H100": {
        "purchase_usd_per_gpu": Default(37_500.0, "an 8-GPU H100 server at about $300,000 "
                                        "(NVIDIA publishes no list price; a commonly reported "
                                        f"figure), {_PER_8}"),
        "power_kw_per_gpu": Default(1.275, f"NVIDIA DGX H100 datasheet, 10.2 kW maximum, "
                                    f"{_PER_8}"),
    },
}
COMMON_DEFAULTS: dict[str, Default] = {
    "lifetime_years": Default(5.0, "assumption: 5 years of use (clouds depreciate servers "
                                   "over 5 to 6 years)"),
    "pue": Default(1.3, "assumption: a modern colocation data centre"),
    "usd_per_kwh": Default(0.10, "assumption: an industrial electricity price"),
    "network_pct": Default(10.0, "assumption: the cluster network at 10% of the servers' price"),
    "storage_pct": Default(5.0, "assumption: shared storage at 5% of the servers' price"),
    "space_usd_per_kw_month": Default(150.0, "assumption: colocation space and cooling per kW"
                                             " of IT load a month"),
    "staff_usd_per_gpu_year": Default(600.0, "assumption: one engineer at $150,000 a year "
                                             "per 250 GPUs"),
    "cost_of_capital_pct": Default(8.0, "assumption: 8% a year"),
    "resale_pct": Default(10.0, "assumption: sold for 10% of its price at the end of its life"),
}
LABELS: dict[str, tuple[str, str]] = {  # key: (words, unit)
    "purchase_usd_per_gpu": ("Purchase price per GPU (server share included)", "USD"),
    "lifetime_years": ("Lifetime", "years"),
    "power_kw_per_gpu": ("Power per GPU at the wall", "kW"),
    "pue": ("PUE", ""),  # the data centre's power / the IT power
    "usd_per_kwh": ("Electricity", "USD/kWh"),
    "network_pct": ("Network", "% of the purchase price"),
    "storage_pct": ("Storage", "% of the purchase price"),
    "space_usd_per_kw_month": ("Space and cooling", "USD per kW-month"),
    "staff_usd_per_gpu_year": ("Staff", "USD per GPU-year"),
    "cost_of_capital_pct": ("Cost of capital", "% a year"),
    "resale_pct": ("Resale value at the end of its life", "% of the purchase price"),
}
OWNED_KEYS: tuple[str, ...] = tuple(LABELS)
RANGES: dict[str, tuple[float, float]] = {
    "purchase_usd_per_gpu": (0.0, 1_000_000.0), "lifetime_years": (0.25, 30.0),
    "power_kw_per_gpu": (0.0, 10.0), "pue": (1.0, 3.0), "usd_per_kwh": (0.0, 10.0),
    "network_pct": (0.0, 200.0), "storage_pct": (0.0, 200.0),
    "space_usd_per_kw_month": (0.0, 10_000.0), "staff_usd_per_gpu_year": (0.0, 1_000_000.0),
    "cost_of_capital_pct": (0.0, 100.0), "resale_pct": (0.0, 100.0),
}


def gpu_family(gpu_type: str) -> str | None:
    """"A100-80GB" -> "A100": the GPU_DEFAULTS entry a history's GPU type falls under."""
    upper = gpu_type.upper()
    return next((name for name in GPU_DEFAULTS if name in upper), None)


def defaults_for(gpu_type: str) -> dict[str, Default]:
    """Every figure's default for the GPU type; a type without its own figures takes the
    H100's, and its sources say so."""
    family = gpu_family(gpu_type)
    own = GPU_DEFAULTS[family or "H100"]
    if family is None:
        own = {key: Default(d.value, f"no figure for {gpu_type}: the H100's ({d.source})")
               for key, d in own.items()}
    return {**own, **COMMON_DEFAULTS}


def checked(given: Mapping[str, Any]) -> dict[str, float]:
    """The figures the user gave (blank ones left out), as numbers in range; ValueError
    naming the field otherwise."""
    found: dict[str, float] = {}
    for key, raw in given.items():
        if key not in RANGES:
            raise ValueError(f"{key}: not an owned-hardware figure ({', '.join(OWNED_KEYS)})")
        if raw is None or raw == "":
            continue
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise ValueError(f"{key}: {raw!r} is not a number") from None
        low, high = RANGES[key]
        if not low <= value <= high:  # also refuses NaN
            unit = LABELS[key][1]
            raise ValueError(f"{key}: {value:g} is out of range ({low:g} to {high:g} {unit})"
                             .replace(" )", ")"))
        found[key] = value
    return found


@dataclass(frozen=True)
class OwnedCost:
    hardware: OwnedHardware
    usd_per_gpu_hour: float
    figures: tuple[dict[str, Any], ...]  # each figure: value, unit, basis, source
    lines: tuple[dict[str, Any], ...]  # each cost line: name, usd_per_gpu_hour
    upfront_usd_per_gpu: float  # paid at purchase: the price with its network and storage
    running_usd_per_gpu_hour: float  # paid as it runs: power, space and cooling, staff


def owned_cost(gpu_type: str, given: Mapping[str, float]) -> OwnedCost:
    """Owned hardware for the GPU type: the user's figures over the type's defaults, the
    cost lines per GPU-hour and each figure labelled "your input" or "default (source)"."""
    defaults = defaults_for(gpu_type)
    value = {key: float(given[key]) if key in given else defaults[key].value
             for key in OWNED_KEYS}
    figures = tuple(
        {"key": key, "name": LABELS[key][0], "value": value[key], "unit": LABELS[key][1],
         "basis": "your input" if key in given else "default",
         "label": "your input" if key in given else f"default ({defaults[key].source})"}
        for key in OWNED_KEYS)
    price, years = value["purchase_usd_per_gpu"], value["lifetime_years"]
    per_hour = 1.0 / (years * HOURS_PER_YEAR)
    extras = (value["network_pct"] + value["storage_pct"]) / 100.0
    resale = price * value["resale_pct"] / 100.0
    rate = value["cost_of_capital_pct"] / 100.0
    capital = price * (1.0 + extras)
    if rate > 0:
        recovery = rate / (1.0 - (1.0 + rate) ** -years)
        yearly = (capital - resale / (1.0 + rate) ** years) * recovery
        interest = yearly / HOURS_PER_YEAR - (capital - resale) * per_hour
    else:
        interest = 0.0
    kw = value["power_kw_per_gpu"]
    running = (  # paid as the GPU runs, not at purchase
        ("power", kw * value["pue"] * value["usd_per_kwh"]),
        ("space and cooling", kw * value["space_usd_per_kw_month"] * 12.0 / HOURS_PER_YEAR),
        ("staff", value["staff_usd_per_gpu_year"] / HOURS_PER_YEAR),
    )
    lines = (
        ("hardware, depreciated", price * per_hour),
        ("network", price * value["network_pct"] / 100.0 * per_hour),
        ("storage", price * value["storage_pct"] / 100.0 * per_hour),
        ("resale value", -resale * per_hour),
        ("cost of capital", interest),
        *running,
    )
    total = sum(cost for _, cost in lines)
    hardware = OwnedHardware(price, years, kw, value["pue"], value["usd_per_kwh"])
    return OwnedCost(hardware, total, figures,
                     tuple({"name": name, "usd_per_gpu_hour": cost} for name, cost in lines),
                     upfront_usd_per_gpu=capital,
                     running_usd_per_gpu_hour=sum(cost for _, cost in running))
