"""The option table: every (simulated configuration × current price) pair that passes the
user's filters, with the columns the costing needs. Input checks raise ValueError."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np
import pandas as pd

from planner.core.purchase_options import PURCHASE_OPTION_CODES
from planner.plans.core.assumptions import PlanConstraints

LAYOUT_COLUMNS = ("tp", "pp", "dp", "cp", "zero_stage", "recompute", "micro_batch",
                  "grad_accum", "precision")


CONFIG_COLUMNS = ("instance_key", "gpu", "nodes", "gpus", *LAYOUT_COLUMNS, "step_seconds",
                  "samples_per_second", "tokens_per_second", "time_to_train_hours",
                  "time_to_train_p10_hours", "time_to_train_p90_hours", "gpu_hours",
                  "energy_kwh", "memory_per_gpu_gib", "mfu", "memory_capacity_gib")


PRICE_COLUMNS = ("instance_key", "provider", "region", "instance_type", "purchase_option",
                 "usd_per_hour", "as_of", "source", "is_derived")
# Optional price columns and their defaults (what an offer is, how it is paid, how old it is):
#   payment_option   "" | no_upfront | partial_upfront | all_upfront
#   upfront_usd      per instance for the whole term (NaN: none or not published)
#   basis            listed | derived | estimated
#   offer_kind       cloud_instance | cluster_product | marketplace_machine
#   max_nodes        most nodes the offer can give one job (1 = a single machine)
#   spot_node_limit  spot nodes beyond which capacity is unlikely (inf: no limit known)
#   age_days         days between the price's as-of date and the plan
PRICE_DEFAULTS: dict[str, Any] = {
    "payment_option": "", "upfront_usd": np.nan, "basis": "", "offer_kind": "cloud_instance",
    "max_nodes": np.inf, "spot_node_limit": np.inf, "age_days": np.nan,
}
# Optional configuration columns: the simulator's calibration status of each prediction, and
# what its speed must say when it rests on a fallback rate ("" when nothing; see
# simulator.core.hardware.cuda_core_rate_note).
# steady_state_hours: the run's useful-step hours before goodput (NaN: taken as the time to
# train, goodput 1); virtual_stages: model chunks per pipeline stage (1 = plain 1F1B).
# envelope_note: why the prediction is outside the calibration envelope ("" inside it);
# envelope: the axes it is outside, ";"-joined (simulator.core.envelope.AXES; "" inside).
# goodput_fraction, failure_goodput_fraction: the sweep's whole-run goodput and its modelled
# part alone (failures, restarts, checkpoints); NaN: no split known (all counted as failures).
CONFIG_DEFAULTS: dict[str, Any] = {"calibration_status": "unknown", "rate_note": "",
                                   "steady_state_hours": np.nan, "virtual_stages": 1.0,
                                   "envelope_note": "", "envelope": "",
                                   "goodput_fraction": np.nan,
                                   "failure_goodput_fraction": np.nan}


def with_defaults(frame: pd.DataFrame, defaults: dict[str, Any]) -> pd.DataFrame:
    """The frame with every optional column present (missing ones at their default)."""
    filled = {name: (frame[name].fillna(value) if name in frame.columns else value)
              for name, value in defaults.items()}
    frame = frame.assign(**filled)
    if "basis" in defaults and "is_derived" in frame.columns:
        derived = np.where(frame["is_derived"].astype(bool), "derived", "listed")
        frame = frame.assign(basis=np.where(frame["basis"].astype(str) == "", derived,
                                            frame["basis"].astype(str)))
    return frame


def check_configs(configs: pd.DataFrame) -> None:
    missing = [c for c in CONFIG_COLUMNS if c not in configs.columns]
    if missing or configs.empty:
        raise ValueError(f"configs: empty or missing columns {missing}")
    numbers = configs[["nodes", "gpus", "time_to_train_hours", "time_to_train_p10_hours",
                       "time_to_train_p90_hours"]].to_numpy(dtype=np.float64)
    if not (np.isfinite(numbers).all() and (numbers > 0).all()):
        raise ValueError("configs: nodes, gpus and times to train must be finite and > 0")
    if configs[["instance_key", "gpu"]].isna().any().any():
        raise ValueError("configs: missing instance_key or gpu")
    p10, p90 = numbers[:, 3], numbers[:, 4]
    if (p10 > p90).any():
        raise ValueError("configs: time_to_train_p10_hours must be <= time_to_train_p90_hours")


def check_prices(prices: pd.DataFrame) -> None:
    missing = [c for c in PRICE_COLUMNS if c not in prices.columns]
    if missing or prices.empty:
        raise ValueError(f"prices: empty or missing columns {missing}")
    rates = prices["usd_per_hour"].to_numpy(dtype=np.float64)
    if not (np.isfinite(rates).all() and (rates > 0).all()):
        raise ValueError("prices: usd_per_hour must be finite and > 0")
    unknown = set(prices["purchase_option"].unique()) - set(PURCHASE_OPTION_CODES)
    if unknown:
        raise ValueError(f"prices: unknown purchase options {sorted(map(str, unknown))}")
    if prices[list(PRICE_COLUMNS)].isna().any().any():
        raise ValueError("prices: missing values (every price needs names and an as_of date)")
    limits = prices["max_nodes"].to_numpy(dtype=np.float64)
    if not (limits >= 1).all():
        raise ValueError("prices: max_nodes must be >= 1")
    unknown_basis = set(prices["basis"].unique()) - {"listed", "derived", "estimated"}
    if unknown_basis:
        raise ValueError(f"prices: unknown basis {sorted(map(str, unknown_basis))}")


def _gpu_allowed(gpus: pd.Series, allowed: Collection[str]) -> np.ndarray:
    """Exact name, or model prefix followed by a space, case-insensitive."""
    names = gpus.astype(str).str.lower()
    mask = np.zeros(len(gpus), dtype=bool)
    for name in (str(a).lower() for a in allowed):
        mask |= ((names == name) | names.str.startswith(name + " ")).to_numpy()
    return mask


def option_pairs(configs: pd.DataFrame, prices: pd.DataFrame,
                  constraints: PlanConstraints) -> tuple[np.ndarray, np.ndarray, int]:
    """Positions (config row, price row) of every option passing the filters, and how many
    pairs were dropped because the configuration needs more nodes than the offer gives."""
    price_ok = np.ones(len(prices), dtype=bool)
    for column in ("provider", "region", "purchase_option"):
        allowed = getattr(constraints, f"{column}s")
        if allowed is not None:
            price_ok &= prices[column].isin(list(allowed)).to_numpy()
    cfg_ok = np.ones(len(configs), dtype=bool)
    if constraints.gpus is not None:
        cfg_ok = _gpu_allowed(configs["gpu"], constraints.gpus)
    left = pd.DataFrame({"key": configs["instance_key"].to_numpy()[cfg_ok],
                         "cfg": np.flatnonzero(cfg_ok),
                         "nodes": configs["nodes"].to_numpy(dtype=np.float64)[cfg_ok]})
    right = pd.DataFrame({"key": prices["instance_key"].to_numpy()[price_ok],
                          "price": np.flatnonzero(price_ok),
                          "max_nodes": prices["max_nodes"].to_numpy(dtype=np.float64)[price_ok]})
    pairs = left.merge(right, on="key")
    # An offer never becomes a cluster larger than it can give (a marketplace machine stays one).
    fits = pairs["nodes"] <= pairs["max_nodes"]
    n_over_limit = int((~fits).sum())
    pairs = pairs[fits].sort_values(["cfg", "price"], kind="stable")
    if pairs.empty:
        raise ValueError("no priced option passes the filters (providers, regions, gpus, "
                         "purchase options)")
    return pairs["cfg"].to_numpy(), pairs["price"].to_numpy(), n_over_limit


def iso_dates(values: pd.Series) -> pd.Series:
    """as_of as ISO strings (dates stay dates, strings are kept as given)."""
    lookup = {v: v if isinstance(v, str) else v.isoformat() for v in values.unique()}
    return values.map(lookup)


def _categorical(values: pd.Series, rows: np.ndarray) -> pd.Categorical:
    """values[rows] without copying strings row by row."""
    codes, uniques = pd.factorize(values)
    return pd.Categorical.from_codes(codes[rows], categories=uniques)


def work_table(configs: pd.DataFrame, prices: pd.DataFrame, cfg_rows: np.ndarray,
                price_rows: np.ndarray) -> pd.DataFrame:
    """The columns the costing needs, one row per option (strings as categoricals)."""
    numbers = ("nodes", "time_to_train_hours", "time_to_train_p10_hours",
               "time_to_train_p90_hours", "tokens_per_second", "samples_per_second",
               "memory_capacity_gib", "memory_per_gpu_gib", "energy_kwh",
               "steady_state_hours", "goodput_fraction", "failure_goodput_fraction")
    work = {name: configs[name].to_numpy(dtype=np.float64)[cfg_rows] for name in numbers}
    work["steady_state_hours"] = np.where(np.isfinite(work["steady_state_hours"]),
                                          work["steady_state_hours"], work["time_to_train_hours"])
    return pd.DataFrame({
        **work,
        "gpu": _categorical(configs["gpu"].astype(str), cfg_rows),
        "provider": _categorical(prices["provider"], price_rows),
        "region": _categorical(prices["region"].astype(str), price_rows),
        "purchase_option": _categorical(prices["purchase_option"], price_rows),
        "basis": _categorical(prices["basis"].astype(str), price_rows),
        "usd_per_hour": prices["usd_per_hour"].to_numpy(dtype=np.float64)[price_rows],
        "spot_node_limit": prices["spot_node_limit"].to_numpy(dtype=np.float64)[price_rows],
    })
