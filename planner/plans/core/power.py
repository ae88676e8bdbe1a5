"""A GPU power cap on every option of a plan: slower steps, less energy for the same work.

`capped_configs` applies planner.core.power_caps.PowerCap per GPU model to the swept
configurations before they are priced, so time, GPU-hours, cost, energy and CO2e all follow:
hours (expected, P10, P90, steady state) and GPU-hours are divided by the relative
throughput, rates multiplied by it, energy multiplied by the relative energy. The P10 and P90
times widen with the cap's band (P10 at the band's fastest, P90 at its slowest), so a GPU
without a measurement gets a wider time band. `attach_power_caps` puts each option's cap and
its trade against the same option uncapped ("-16 % energy, +12 % GPU-hours, +$X") on the plan
document, and the trade of the lowest-carbon option on its card.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from planner.core import formatting as fmt
from planner.core.power_caps import PowerCap, PowerCurve, power_cap

HOUR_COLUMNS = ("time_to_train_hours", "steady_state_hours", "gpu_hours", "step_seconds")
RATE_COLUMNS = ("samples_per_second", "tokens_per_second", "mfu")


def power_caps(gpus: list[str], pct: float, kind: str,
               curves: tuple[PowerCurve, ...]) -> dict[str, PowerCap]:
    """The cap of each distinct GPU name."""
    return {gpu: power_cap(gpu, pct, kind, curves) for gpu in sorted(set(gpus))}


def capped_configs(configs: pd.DataFrame, caps: dict[str, PowerCap]) -> pd.DataFrame:
    """The configurations as they run under the caps (see module docstring)."""
    gpu = configs["gpu"].astype(str)
    ratio = gpu.map({g: c.throughput for g, c in caps.items()}).to_numpy(np.float64)
    fast = gpu.map({g: c.throughput_high for g, c in caps.items()}).to_numpy(np.float64)
    slow = gpu.map({g: c.throughput_low for g, c in caps.items()}).to_numpy(np.float64)
    energy = gpu.map({g: c.energy for g, c in caps.items()}).to_numpy(np.float64)
    changed: dict[str, Any] = {}
    for name in HOUR_COLUMNS:
        if name in configs.columns:
            changed[name] = configs[name].to_numpy(np.float64) / ratio
    for name in RATE_COLUMNS:
        if name in configs.columns:
            changed[name] = configs[name].to_numpy(np.float64) * ratio
    changed["time_to_train_p10_hours"] = configs["time_to_train_p10_hours"].to_numpy(
        np.float64) / fast
    changed["time_to_train_p90_hours"] = configs["time_to_train_p90_hours"].to_numpy(
        np.float64) / slow
    changed["energy_kwh"] = configs["energy_kwh"].to_numpy(np.float64) * energy
    return configs.assign(**changed)


def _trade(option: dict[str, Any], cap: PowerCap) -> dict[str, Any]:
    """The option against itself uncapped: energy, GPU-hours, CO2e and instance dollars."""
    hours = float(option["time_to_train_hours"])
    uncapped_hours = hours * cap.throughput
    extra_usd = (float(option["usd_per_hour"]) * float(option["nodes"])
                 * (hours - uncapped_hours))
    co2e = option.get("co2e_kg")
    saved_kg = None if co2e is None else float(co2e) * (1.0 / cap.energy - 1.0)
    trade: dict[str, Any] = {
        "energy_change_pct": 100.0 * (cap.energy - 1.0),
        "gpu_hours_change_pct": 100.0 * (1.0 / cap.throughput - 1.0),
        "extra_usd": extra_usd,
        "co2e_saved_kg": saved_kg,
        "uncapped_time_to_train_hours": uncapped_hours,
    }
    trade["text"] = (f"{trade['energy_change_pct']:+.0f} % energy, "
                     f"{trade['gpu_hours_change_pct']:+.1f} % GPU-hours, "
                     f"{'+' if extra_usd >= 0 else '−'}{fmt.usd(abs(extra_usd))} "
                     "(instance-hours at this option's rate)"
                     + ("" if saved_kg is None else f", {fmt.count(saved_kg)} kg CO2e less")
                     + " against the same option uncapped")
    return trade


def _cap_dict(cap: PowerCap) -> dict[str, Any]:
    return {"pct": cap.pct, "throughput_ratio": cap.throughput, "energy_ratio": cap.energy,
            "throughput_band": [cap.throughput_low, cap.throughput_high],
            "energy_band": [cap.energy_low, cap.energy_high],
            "is_measured": cap.is_measured, "measured_gpu": cap.measured_gpu,
            "curve": cap.curve, "basis": cap.basis}


def attach_power_caps(document: dict[str, Any], caps: dict[str, PowerCap]) -> None:
    """`power_cap` on every option, the caps per GPU with what the measurements say about
    the "95 % of the speed at 28 % less power" claim (`power_caps`), and the trade on the
    lowest-carbon card (in place)."""
    for option in document.get("options", []):
        cap = caps.get(str(option["gpu"]))
        if cap is not None:
            option["power_cap"] = {**_cap_dict(cap), "trade": _trade(option, cap)}
    document["power_caps"] = [{**_cap_dict(c), "gpu": g, "claim": c.claim}
                              for g, c in caps.items()]
    by_row = {o["row_index"]: o for o in document.get("options", [])}
    for card in document.get("recommendations", []):
        option = by_row.get(card["row_index"])
        if card["key"] == "lowest_carbon" and option and "power_cap" in option:
            card["why"] += (f" Capped at {option['power_cap']['pct']:g} % power: "
                            f"{option['power_cap']['trade']['text']}.")
