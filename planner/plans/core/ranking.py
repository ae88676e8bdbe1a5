"""Rank and highlight plan options: the Pareto front and the five recommendation cards."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.core import formatting as fmt
from planner.core.chart_sets import SAME_OFFER_KEYS, pick_position
from planner.core.chart_sets import collapse_regions as collapse_regions  # plans read it here
from planner.plans.core.assumptions import PlanConstraints
from planner.plans.core.decision import (
    chance_text,
    cheapest_title,
    rule_text,
    short_rule,
    trade_text,
    verdict_text,
)

RISK_RESOLUTION = 1e-3  # miss probabilities closer than this count as a tie (MC resolution)


@dataclass(frozen=True)
class Recommendation:
    """One highlighted option; `row_index` is its position (and index label) in the table."""

    key: str  # cheapest_meeting_deadline | fastest_within_budget | lowest_carbon
    # | best_cost_per_token | lowest_risk
    row_index: int
    title: str
    why: str
    rule: str = ""  # how the card picks, in words (the decision rule it reads included)


def top_card(cards: tuple[Recommendation, ...]) -> Recommendation | None:
    """The plan's pick: the cheapest acceptable option's card, else (nothing acceptable) the
    lowest-risk card, else the first card (None without cards; chart_sets.pick_position)."""
    position = pick_position([card.key for card in cards])
    return None if position is None else cards[position]


def pareto_mask(hours: np.ndarray, usd: np.ndarray) -> np.ndarray:
    """True where no other point is at least as fast and as cheap and better in one of them
    (equal points are all kept)."""
    order = np.lexsort((usd, hours))
    sorted_hours, sorted_usd = hours[order], usd[order]
    running_min = np.minimum.accumulate(sorted_usd)
    group_start = np.searchsorted(sorted_hours, sorted_hours, side="left")
    faster_min = np.where(group_start > 0, running_min[np.maximum(group_start - 1, 0)], np.inf)
    on_front = (sorted_usd == sorted_usd[group_start]) & (sorted_usd < faster_min)
    mask = np.empty(len(hours), dtype=bool)
    mask[order] = on_front
    return mask


def _pick(table: pd.DataFrame, mask: np.ndarray, keys: list[np.ndarray]) -> int | None:
    """Row position of the smallest `keys` (primary first) among `mask`, else None."""
    candidates = np.flatnonzero(mask & np.isfinite(keys[0]))
    if not candidates.size:
        return None
    order = np.lexsort([key[candidates] for key in reversed(keys)])
    return int(candidates[order[0]])


def _option_label(row: pd.Series) -> str:
    return (f"{row['instance_type']} × {fmt.count(row['nodes'])} ({fmt.count(row['gpus'])} × "
            f"{row['gpu']}, {fmt.label(row['purchase_option'])}) in {fmt.label(row['provider'])} "
            f"{row['region']}")


def caveats(row: pd.Series) -> str:
    """What a reader must know before acting on an option: price basis and age, the
    simulator's calibration status for its GPU, a speed that is only a lower bound (its
    rate_note), spot capacity, a single marketplace machine."""
    notes = []
    age = row.get("age_days")
    basis = row.get("basis") or ("derived" if row.get("is_derived") else "listed")
    dated = f"{basis} price as of {row['as_of']}"
    if age is not None and age == age:
        dated += f" ({age:,.0f} days old)"
    notes.append(dated)
    status = row.get("calibration_status", "")
    if status and status != "calibrated":
        notes.append(f"throughput {status}: no published run of this GPU and precision was "
                     "fitted, so the band is wider" if status == "uncalibrated"
                     else f"throughput {status} from runs of the same GPU family")
    if row.get("rate_note"):
        notes.append(str(row["rate_note"]))
    if row.get("is_capacity_unlikely"):
        notes.append(f"spot capacity for {row['nodes']:g} nodes is unlikely")
    if row.get("offer_kind") == "marketplace_machine":
        notes.append("a single marketplace machine (host-set price, no cluster)")
    return " Note: " + "; ".join(notes) + "."


def _deadline_text(row: pd.Series, constraints: PlanConstraints) -> str:
    if constraints.deadline_hours is None:
        return ""
    return (f" against the {fmt.duration(constraints.deadline_hours)} deadline "
            f"({row['deadline_miss_probability']:.1%} chance of missing it)")


def _cheapest(table: pd.DataFrame, feasible: np.ndarray, c: PlanConstraints,
              n_feasible: int) -> Recommendation | None:
    """Lowest expected total among acceptable options (planner.plans.core.decision); None
    when no option is acceptable (the lowest-risk card then says how close the best comes).
    Its why names the nearest cheaper option and the risk that saving costs."""
    keys = [table["total_usd"].to_numpy(), table["time_to_train_hours"].to_numpy()]
    acceptable = feasible & table["acceptable"].to_numpy(dtype=bool)
    index = _pick(table, acceptable, keys)
    if index is None:
        return None
    row = table.iloc[index]
    rule = f"Lowest expected total among acceptable options. {rule_text(c)}"
    why = (f"{_option_label(row)}: lowest expected total {fmt.usd(row['total_usd'])} of "
           f"{fmt.count(int(acceptable.sum()))} acceptable options ({fmt.count(n_feasible)} "
           f"ranked); expected {fmt.duration(row['time_to_train_hours'])} "
           f"(P90 {fmt.duration(row['time_p90_hours'])}){_risk_text(row, c)}.")
    why += trade_text(table, feasible, index, c)
    why += caveats(row) + _calibrated_alternative(table, acceptable, keys, index)
    return Recommendation("cheapest_meeting_deadline", index, cheapest_title(c), why, rule)


def _risk_text(row: pd.Series, c: PlanConstraints) -> str:
    """", 2.6% chance of missing the 60.0 days deadline" for an acceptable option ("" without
    limits, and for an option outside the rule: verdict_text gives its chance)."""
    text = chance_text(row, c) if bool(row["acceptable"]) else ""
    return f", {text}" if text else ""


def _ranked_rule(what: str, c: PlanConstraints) -> str:
    """A card's rule when it picks among all ranked options, acceptable or not."""
    rule = short_rule(c)
    among = ("all ranked options (expected time and total within the limits), acceptable or "
             "not" if rule else "all ranked options")
    return f"{what} among {among}. {rule_text(c)}"


def _calibrated_alternative(table: pd.DataFrame, mask: np.ndarray, keys: list[np.ndarray],
                            index: int) -> str:
    """For a pick on an uncalibrated GPU: the best option on a calibrated one, by the same
    keys, with its cost and time ("" when the pick is calibrated or nothing else is)."""
    if table.iloc[index].get("calibration_status") != "uncalibrated":
        return ""
    calibrated = (table["calibration_status"] == "calibrated").to_numpy()
    other = _pick(table, mask & calibrated, keys)
    if other is None:
        return " No option on a calibrated GPU qualifies."
    row = table.iloc[other]
    return (f" Best on a calibrated GPU: {_option_label(row)}, {fmt.usd(row['total_usd'])} in "
            f"{fmt.duration(row['time_to_train_hours'])}.")


def _fastest(table: pd.DataFrame, feasible: np.ndarray,
             c: PlanConstraints) -> Recommendation | None:
    """Shortest expected time; with a budget, among options within it by the decision rule
    (its chance of going over at most the threshold) when any is."""
    keys = [table["time_to_train_hours"].to_numpy(), table["total_usd"].to_numpy()]
    within = feasible & table["within_budget"].to_numpy(dtype=bool)
    index = _pick(table, within, keys) if c.budget_usd is not None else None
    pool = within if index is not None else feasible
    if index is None:
        index = _pick(table, feasible, keys)
    if index is None:
        return None
    row = table.iloc[index]
    budget = ("" if c.budget_usd is None else
              f" within the {fmt.usd(c.budget_usd)} budget" if pool is within else
              f" (no option is within the {fmt.usd(c.budget_usd)} budget at the threshold)")
    why = (f"{_option_label(row)}: shortest expected time "
           f"{fmt.duration(row['time_to_train_hours'])} "
           f"(P90 {fmt.duration(row['time_p90_hours'])}) for {fmt.usd(row['total_usd'])}{budget}"
           f"{_risk_text(row, c)}.")
    title = "Fastest within budget" if pool is within else "Fastest"
    rule = (_ranked_rule("Shortest expected time", c) if pool is not within else
            f"Shortest expected time among options within the budget (at most "
            f"{fmt.percent(c.miss_threshold, 0)} chance of going over it). {rule_text(c)}")
    why += verdict_text(row, c) + caveats(row) + _calibrated_alternative(table, pool, keys,
                                                                           index)
    return Recommendation("fastest_within_budget", index, title, why, rule)


def _best_per_token(table: pd.DataFrame, feasible: np.ndarray,
                    c: PlanConstraints) -> Recommendation | None:
    """Lowest total cost per million tokens: the run's whole total (storage, egress and any
    unused commitment term included) / the tokens it trains, so cost per token × tokens is
    the card's total."""
    unit, column = "token", "usd_per_million_tokens"
    if not np.isfinite(table[column].to_numpy(dtype=np.float64)).any():
        unit, column = "sample", "usd_per_million_samples"
    per_unit = table[column].to_numpy(dtype=np.float64)
    keys = [per_unit, table["total_usd"].to_numpy()]
    index = _pick(table, feasible, keys)
    if index is None:
        return None
    row = table.iloc[index]
    trained = row["total_usd"] / row[column] * 1e6
    why = (f"{_option_label(row)}: ${row[column]:.3g} per million {unit}s = "
           f"{fmt.usd(row['total_usd'])} in total (storage, egress and any unused commitment "
           f"term included) / {fmt.large_count(trained, unit + 's')}; "
           f"{fmt.usd(row['usd_per_hour'])} per instance-hour at {row['mfu']:.0%} MFU"
           f"{_risk_text(row, c)}.")
    why += verdict_text(row, c) + caveats(row)
    why += _calibrated_alternative(table, feasible, keys, index)
    rule = _ranked_rule(f"Lowest total cost per million {unit}s", c)
    return Recommendation("best_cost_per_token", index, f"Best cost per {unit}", why, rule)


def _lowest_risk(table: pd.DataFrame, feasible: np.ndarray,
                 c: PlanConstraints) -> Recommendation | None:
    """Lowest P(miss deadline or budget), ties within RISK_RESOLUTION → non-spot → cheapest.
    With neither limit set, risk is read as the P90 total cost."""
    is_spot = table["is_spot"].to_numpy().astype(np.float64)
    usd = table["total_usd"].to_numpy()
    if c.deadline_hours is None and c.budget_usd is None:
        index = _pick(table, feasible, [table["total_p90_usd"].to_numpy(), is_spot, usd])
        if index is None:
            return None
        row = table.iloc[index]
        why = (f"{_option_label(row)}: lowest P90 total {fmt.usd(row['total_p90_usd'])} "
               f"(expected {fmt.usd(row['total_usd'])}); no deadline or budget is set.")
        rule = "Lowest P90 total among all ranked options (no deadline or budget is set)."
        return Recommendation("lowest_risk", index, "Lowest risk", why + caveats(row), rule)
    risk = np.round(table["miss_probability"].to_numpy() / RISK_RESOLUTION)
    keys = [risk, is_spot, usd]
    index = _pick(table, feasible, keys)
    if index is None:
        return None
    row = table.iloc[index]
    limits = " or ".join(name for name, value in (
        ("deadline", c.deadline_hours), ("budget", c.budget_usd)) if value is not None)
    spot = (f", {row['expected_interruptions']:.1f} spot interruptions expected"
            if row["is_spot"] else "")
    why = (f"{_option_label(row)}: {row['miss_probability']:.1%} chance of missing the {limits} "
           f"(P90 {fmt.duration(row['time_p90_hours'])}, {fmt.usd(row['total_p90_usd'])}{spot}); "
           f"expected {fmt.usd(row['total_usd'])}.")
    if not table["acceptable"].to_numpy(dtype=bool)[feasible].any():
        why += (" No ranked option is acceptable, so there is no cheapest pick: this is the "
                "closest to the rule.")
    why += verdict_text(row, c, is_chance_said=True) + caveats(row)
    why += _calibrated_alternative(table, feasible, keys, index)
    rule = _ranked_rule("Lowest chance of missing the limits (ties: non-spot, then cheaper)", c)
    return Recommendation("lowest_risk", index, "Lowest risk", why, rule)


def tradeoff_line(table: pd.DataFrame, picks: tuple[Recommendation, ...]) -> str:
    """What the lowest-risk card costs over the cheapest one, and what it buys: "+$12,140 for
    a 0.3% miss chance instead of 21.0%" ("" when they are the same option or equally safe)."""
    by_key = {pick.key: pick.row_index for pick in picks}
    cheap, safe = by_key.get("cheapest_meeting_deadline"), by_key.get("lowest_risk")
    if cheap is None or safe is None or cheap == safe:
        return ""
    a, b = table.iloc[cheap], table.iloc[safe]
    if not b["miss_probability"] < a["miss_probability"]:
        return ""
    extra = float(b["total_usd"] - a["total_usd"])
    sign = "+" if extra >= 0 else "-"
    return (f"{sign}{fmt.usd(abs(extra))} for a {fmt.percent(b['miss_probability'])} miss "
            f"chance instead of {fmt.percent(a['miss_probability'])} (lowest risk against "
            f"the cheapest).")


def intensity_text(energy_kwh: float, pue: float, g_per_kwh: float) -> str:
    """The grid intensity (gCO2e/kWh) with as few digits (3 to 6 significant) as make
    round(kWh shown × PUE shown × intensity shown / 1000) equal the rounded CO2e (kg)."""
    target = round(energy_kwh * pue * g_per_kwh / 1000.0)
    shown_kwh = round(energy_kwh)
    for digits in range(3, 7):
        decimals = max(0, digits - 1 - int(np.floor(np.log10(abs(g_per_kwh))))) if g_per_kwh \
            else 0
        text = f"{g_per_kwh:,.{decimals}f}"
        if round(shown_kwh * float(f"{pue:g}") * float(text.replace(",", "")) / 1000.0) \
                == target:
            return text
    return text


def _carbon_basis_text(row: pd.Series) -> str:
    basis = row["carbon_basis"]
    intensity = intensity_text(float(row["energy_kwh"]), float(basis["pue"]),
                               float(basis["g_co2e_per_kwh"]))
    return (f"{fmt.count(row['energy_kwh'])} kWh × PUE {basis['pue']:g} ({basis['pue_source']}, "
            f"{basis['pue_scope']}) × {intensity} gCO2e/kWh "
            f"({basis['accounting']}-based, {basis['source']}, {basis['year']})")


def _lowest_carbon(table: pd.DataFrame, feasible: np.ndarray, cheapest: Recommendation | None,
                   c: PlanConstraints) -> Recommendation | None:
    """Lowest expected CO2e among feasible options with carbon data (ties: cheapest), and
    what it saves against the cheapest option."""
    co2e = table["co2e_kg"].to_numpy(dtype=np.float64)
    index = _pick(table, feasible, [co2e, table["total_usd"].to_numpy()])
    if index is None:
        return None
    row = table.iloc[index]
    why = (f"{_option_label(row)}: lowest expected emissions {fmt.count(row['co2e_kg'])} kg CO2e "
           f"(P10–P90 {fmt.count(row['co2e_p10_kg'])}–{fmt.count(row['co2e_p90_kg'])} kg) from "
           f"{_carbon_basis_text(row)}; {fmt.usd(row['total_usd'])} in "
           f"{fmt.duration(row['time_to_train_hours'])}.")
    if cheapest is not None and cheapest.row_index != index:
        base = table.iloc[cheapest.row_index]
        if np.isfinite(base["co2e_kg"]):
            extra = float(row["total_usd"] - base["total_usd"])
            cost = (f"for {fmt.usd(extra)} more" if extra >= 0.005 else
                    f"and costs {fmt.usd(-extra)} less" if extra <= -0.005 else "at the same cost")
            why += (f" The cheapest acceptable option emits {fmt.count(base['co2e_kg'])} kg "
                    f"CO2e: this one saves {fmt.count(base['co2e_kg'] - row['co2e_kg'])} kg "
                    f"{cost}.")
        else:
            why += f" The cheapest acceptable option has {base['carbon_note']}."
    why += verdict_text(row, c) + caveats(row)
    rule = _ranked_rule("Lowest expected CO2e (ties: cheaper)", c)
    return Recommendation("lowest_carbon", index, "Lowest carbon", why, rule)


def recommend_options(table: pd.DataFrame,
                      constraints: PlanConstraints) -> tuple[Recommendation, ...]:
    """Highlights among feasible rows of a plan table; empty when nothing is feasible. Ties
    between regions went to the preferred region (the table's order); each card names the
    other regions with the same price."""
    feasible = table["rank"].notna().to_numpy()
    cheapest = _cheapest(table, feasible, constraints, int(feasible.sum()))
    picks = (
        cheapest,
        _fastest(table, feasible, constraints),
        _lowest_carbon(table, feasible, cheapest, constraints),
        _best_per_token(table, feasible, constraints),
        _lowest_risk(table, feasible, constraints),
    )
    offers = _offers(table)
    return tuple(_with_other_regions(table, pick, offers) for pick in picks if pick is not None)


@dataclass(frozen=True)
class _Offers:
    """Per row, one integer code per SAME_OFFER_KEYS column (equal codes: equal values, or
    both missing) and its region's code; the region names by code."""

    codes: np.ndarray  # (keys, rows)
    region: np.ndarray
    region_names: np.ndarray


def _offers(table: pd.DataFrame) -> _Offers:
    keys = [key for key in SAME_OFFER_KEYS if key in table.columns]
    codes = np.array([pd.factorize(table[key])[0] for key in keys], dtype=np.int64)
    region, names = pd.factorize(table["region"])
    return _Offers(codes.reshape(len(keys), len(table)), region,
                   np.asarray(names.astype(str), dtype=object))


def _same_price_rows(table: pd.DataFrame, index: int, offers: _Offers | None = None
                     ) -> np.ndarray:
    """Row positions of the same offer (SAME_OFFER_KEYS) at the same total (to the cent) in
    other regions, in table order (one per region)."""
    found = offers or _offers(table)
    # The price first (numeric, fast), then the offer's keys on those few rows.
    total = table["total_usd"].to_numpy()
    rows = np.flatnonzero(np.abs(total - total[index]) < 0.005)
    same = (found.codes[:, rows] == found.codes[:, [index]]).all(axis=0)
    same &= found.region[rows] != found.region[index]
    _, first = np.unique(found.region_names[found.region[rows[same]]].astype(str),
                         return_index=True)
    return np.asarray(rows[same][np.sort(first)], dtype=np.intp)


def same_price_regions(table: pd.DataFrame, index: int) -> list[str]:
    """Other regions selling the same offer (SAME_OFFER_KEYS) at the same total (to the cent)."""
    return [str(r) for r in table["region"].to_numpy()[_same_price_rows(table, index)]]


def _with_other_regions(table: pd.DataFrame, pick: Recommendation, offers: _Offers
                        ) -> Recommendation:
    """The pick with the other regions at its price named, and, when one of them emits less
    (regions tie on price, not on grid carbon), the lowest-emitting one and what it saves."""
    rows = _same_price_rows(table, pick.row_index, offers)
    if not rows.size:
        return pick
    others = [str(r) for r in offers.region_names[offers.region[rows]]]
    listed = ", ".join(others[:8]) + (f" and {len(others) - 8} more" if len(others) > 8 else "")
    why = f"{pick.why} Same price also in {listed}."
    if "co2e_kg" in table.columns:
        co2e = table["co2e_kg"].to_numpy(dtype=np.float64)
        own = co2e[pick.row_index]
        finite = rows[np.isfinite(co2e[rows])]
        if finite.size and np.isfinite(own):
            best = int(finite[np.argmin(co2e[finite])])
            if co2e[best] < own - 0.5:
                why += (f" At that price {offers.region_names[offers.region[best]]} emits "
                        f"{fmt.count(own - co2e[best])} kg CO2e less "
                        f"({fmt.count(co2e[best])} kg).")
    return Recommendation(pick.key, pick.row_index, pick.title, why, pick.rule)
