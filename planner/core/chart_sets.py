"""Which options each plan chart draws, and its title: one answer for the plan page (Plotly)
and the plan report (PDF, HTML, XLSX), so they chart the same options under the same words.
Also what makes two options one offer sold in several regions (SAME_OFFER_KEYS,
collapse_regions), which the plan's cards, table and charts share.

Read from the stored plan document (PlanResult.to_dict rows: dicts with row_index, rank,
acceptable, infeasible_reason, total_usd, co2e_kg...). "Cheapest" means the lowest expected
total among acceptable options (planner.plans.core.decision); any other subset is named for
what it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

BREAKDOWN_BARS = 10

# Columns that make two options the same purchase apart from where it is bought.
SAME_OFFER_KEYS = ("provider", "instance_type", "nodes", "tp", "pp", "dp", "cp", "zero_stage",
                   "recompute", "micro_batch", "precision", "purchase_option", "payment_option")


def collapse_regions(options: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per offer that differs only by region: the first (best-ranked) row, with
    `other_regions` listing the rest cheapest first as (region, total_usd) pairs."""
    kept: dict[tuple[Any, ...], dict[str, Any]] = {}
    for option in options:
        key = tuple(option.get(name) for name in SAME_OFFER_KEYS)
        if key in kept:
            kept[key]["other_regions"].append((option["region"], option.get("total_usd")))
        else:
            kept[key] = {**option, "other_regions": []}
    for row in kept.values():
        row["other_regions"].sort(key=lambda pair: (pair[1] is None, pair[1] or 0.0))
    return list(kept.values())

# The card that is the plan's pick, first present first: the cheapest acceptable option's,
# else (nothing acceptable) the lowest-risk option's, else the first card.
PICK_KEYS = ("cheapest_meeting_deadline", "lowest_risk")


def pick_position(card_keys: Sequence[str]) -> int | None:
    """Which card (by position among the plan's cards, given by key) is the plan's pick; None
    without cards. The plan's memory chart, storage plan, power cap and compare row all show
    this card's option."""
    for key in PICK_KEYS:
        if key in card_keys:
            return list(card_keys).index(key)
    return 0 if card_keys else None


@dataclass(frozen=True)
class ChartSet:
    """One chart's options (dicts of the plan document, in drawing order) and its title."""

    key: str  # pareto | costs | carbon
    title: str
    options: tuple[dict[str, Any], ...]

    @property
    def row_indexes(self) -> tuple[int, ...]:
        return tuple(int(o.get("row_index", -1)) for o in self.options)

    @property
    def caption(self) -> str:
        """Which options are drawn, by their rank in the table: "12 options: ranks 1–3, 7"."""
        ranks = sorted({int(o["rank"]) for o in self.options if o.get("rank") is not None})
        noun = "option" if len(self.options) == 1 else "options"
        return f"{len(self.options):,} {noun}: ranks {rank_ranges(ranks)}" if ranks else \
            f"{len(self.options):,} {noun}"


def rank_ranges(ranks: list[int]) -> str:
    """Sorted ranks as ranges: [1, 2, 3, 7, 9, 10] -> "1–3, 7, 9–10"."""
    parts: list[str] = []
    start = previous = None
    for rank in [*ranks, None]:
        if rank is not None and previous is not None and rank == previous + 1:
            previous = rank
            continue
        if start is not None:
            parts.append(f"{start}" if start == previous else f"{start}–{previous}")
        start = previous = rank
    return ", ".join(parts)


def _ranked(options: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = [o for o in options if not o.get("infeasible_reason") and o.get("rank") is not None]
    return sorted(found, key=lambda o: int(o["rank"]))


def pareto_set(options: list[dict[str, Any]]) -> ChartSet:
    """Every ranked offer once, in its cheapest region (the others differ only in price)."""
    points = collapse_regions(sorted(_ranked(options), key=lambda o: o["total_usd"]))
    return ChartSet("pareto", "Time to train vs total cost (each ranked offer, its cheapest "
                    "region)", tuple(points))


def breakdown_set(options: list[dict[str, Any]]) -> ChartSet:
    """The first BREAKDOWN_BARS distinct offers by rank (acceptable first, then by expected
    total), titled for what they are."""
    rows = collapse_regions(_ranked(options))[:BREAKDOWN_BARS]
    n_acceptable = sum(bool(o.get("acceptable", True)) for o in rows)
    if n_acceptable == len(rows):
        what = f"the {len(rows)} cheapest acceptable offers"
    elif n_acceptable == 0:
        what = f"the {len(rows)} cheapest ranked offers (none is acceptable)"
    else:
        what = (f"the {len(rows)} first-ranked offers ({n_acceptable} cheapest acceptable, "
                "then the cheapest others)")
    return ChartSet("costs", f"Cost breakdown of {what}", tuple(rows))


def carbon_set(options: list[dict[str, Any]]) -> ChartSet:
    """Every ranked option with carbon data, each region its own point (the grid differs)."""
    rows = [o for o in _ranked(options) if o.get("co2e_kg") is not None]
    return ChartSet("carbon", "Total cost vs emissions (ranked options with carbon data)",
                    tuple(rows))


def memory_title(document: dict[str, Any]) -> str:
    """The memory chart's title, naming whose memory it is (the plan's pick)."""
    memory = document.get("chosen_memory") or {}
    by_index = {o.get("row_index"): o for o in document.get("options", [])}
    option = by_index.get(memory.get("row_index"))
    if option is not None and option.get("acceptable") is False:
        return "Memory per GPU of the lowest-risk option (no option is acceptable)"
    return "Memory per GPU of the cheapest acceptable option"
