"""The plan report's storage and power-cap tables: the recommended option's storage plan
(TB-months and dollars by tier beside the flat price) and its power cap with its trade and
what the measurements say of the "95 % of the speed at 28 % less power" claim. Both come from
lever_summary, the object the plan page shows too."""

from __future__ import annotations

from typing import Any

from planner.core.chart_sets import pick_position
from planner.reports.core.model import Column, Table

STORAGE_COLUMNS = (Column("role", "Holds"), Column("tier", "Tier"),
                   Column("tb_months", "Stored", "TB-months", digits=3),
                   Column("billed_tb_months", "Billed", "TB-months", digits=3),
                   Column("usd", "Cost", "USD", digits=2),
                   Column("basis", "Price basis", is_printed=False))
POWER_COLUMNS = (Column("what", "What"), Column("value", "Value", digits=3),
                 Column("unit", "Unit"), Column("note", "Note"))


def lever_summary(document: dict[str, Any]) -> dict[str, Any] | None:
    """The plan's pick (chart_sets.pick_position: the cheapest acceptable option, else the
    lowest-risk one) with its storage plan, its power cap and what the power measurements say
    about its GPU (None without a card or for a plan made before storage plans): what the
    plan page, the report and the `plan` command show."""
    cards = document.get("recommendations") or []
    position = pick_position([card["key"] for card in cards])
    if position is None:
        return None
    card = cards[position]
    by_row = {o["row_index"]: o for o in document.get("options", [])}
    option = by_row.get(card["row_index"])
    if option is None or "storage_plan" not in option:
        return None
    caps = {c["gpu"]: c for c in document.get("power_caps", [])}
    cap = caps.get(str(option["gpu"]))
    sources = (document.get("storage") or {}).get("sources") or {}
    storage = {**option["storage_plan"], "tiers": [
        {**line, **sources.get(line["tier"], {"basis": "", "source_url": ""})}
        for line in option["storage_plan"]["tiers"]]}
    return {"card": card["title"], "option": option, "storage": storage,
            "power": option.get("power_cap"), "claim": cap["claim"] if cap else ""}


def _storage_table(summary: dict[str, Any]) -> Table:
    plan = summary["storage"]
    rows: list[tuple[Any, ...]] = [
        (t["role"], t["tier"], t["tb_months"], t["billed_tb_months"], t["usd"], t["basis"])
        for t in plan["tiers"]]
    rows.append(("total (tiered)", plan["policy"], None, None, plan["total_usd"], ""))
    rows.append(("flat price (in the plan's totals)", "one $/GB-month per provider", None,
                 None, plan["flat_usd"], "data set + 2 checkpoints, run and retention"))
    note = (f"{summary['card']}: {plan['checkpoints_written']:,} checkpoints of "
            f"{plan['checkpoint_gb']:,.0f} GB ({plan['stored_checkpoint_gb']:,.0f} GB stored), "
            f"one every {plan['interval_hours']:g} h ({plan['interval_basis']}); retention "
            f"{plan['retention']}; {plan['stall_seconds_per_checkpoint']:,.0f} s stall per "
            f"checkpoint ({'asynchronous' if plan['is_async'] else 'synchronous'} writes), "
            f"{plan['stall_hours']:,.1f} h over the run; the goodput line assumes "
            f"{plan['goodput_stall_seconds']:g} s.")
    return Table("storage_plan", "Checkpoint storage", "Storage", STORAGE_COLUMNS,
                 tuple(rows), note=note)


def _power_table(summary: dict[str, Any]) -> Table:
    cap = summary["power"]
    trade = cap["trade"]
    rows: tuple[tuple[Any, ...], ...] = (
        ("power limit", cap["pct"], "% of the highest limit", cap["basis"]),
        ("throughput", cap["throughput_ratio"], "x uncapped",
         f"band {cap['throughput_band'][0]:.3f}-{cap['throughput_band'][1]:.3f}"),
        ("energy for the same work", cap["energy_ratio"], "x uncapped",
         f"band {cap['energy_band'][0]:.3f}-{cap['energy_band'][1]:.3f}"),
        ("GPU-hours", trade["gpu_hours_change_pct"], "% change", trade["text"]),
        ("instance cost", trade["extra_usd"], "USD more", ""),
        ("95 % speed at -28 % power", None, "", summary["claim"]),
    )
    return Table("power_cap", "GPU power limit", "Power cap", POWER_COLUMNS, rows)


def lever_tables(document: dict[str, Any]) -> tuple[Table, ...]:
    """The storage table (and the power table when the plan caps power); () for a plan made
    before storage plans."""
    summary = lever_summary(document)
    if summary is None:
        return ()
    tables = [_storage_table(summary)]
    if summary["power"]:
        tables.append(_power_table(summary))
    return tuple(tables)


def lever_lines(document: dict[str, Any]) -> list[str]:
    """The storage plan and the power cap of the plan's pick, in words (the `plan` command)."""
    summary = lever_summary(document)
    if summary is None:
        return []
    plan = summary["storage"]
    lines = [f"Storage ({summary['card'].lower()}): {plan['policy']}; tiered "
             f"${plan['total_usd']:,.0f} against ${plan['flat_usd']:,.0f} at the flat price; "
             f"{plan['checkpoints_written']:,} checkpoints of {plan['checkpoint_gb']:,.0f} GB, "
             f"{plan['stall_seconds_per_checkpoint']:,.0f} s stall each, retention "
             f"{plan['retention']}"]
    for line in plan["tiers"]:
        lines.append(f"  {line['role']}: {line['tier']} {line['tb_months']:,.2f} TB-months, "
                     f"${line['usd']:,.0f}")
    if summary["power"]:
        cap = summary["power"]
        lines.append(f"Power limit {cap['pct']:g} %: {cap['trade']['text']}. {cap['basis']}")
        lines.append(f"  95 % of the speed at 28 % less power? {summary['claim']}")
    return lines
