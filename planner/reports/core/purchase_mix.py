"""The report of a finished purchase-mix analysis, from its stored document
(planner.purchase_mix.services.recommendation_document). Keys are read defensively: the
document gains fields over time (a "what_to_buy" table, when present, is the main table)."""

from __future__ import annotations

import math
from datetime import date
from typing import Any

from planner.core import formatting as fmt
from planner.core.cloud import price_age_days
from planner.core.peaks import PEAK_HOURLY_AVERAGE, capitalised
from planner.core.purchase_options import OPTIONS_BY_CODE
from planner.reports.core.model import (
    Chart,
    Column,
    Figure,
    Finding,
    Report,
    Series,
    Table,
    as_number,
)
from planner.reports.core.plan_report import StaleBefore, report_day, stale_note, stale_word

MIX_COLUMNS = (
    Column("gpu_type", "GPU type"), Column("provider", "Provider"), Column("region", "Region"),
    Column("instance_type", "Instance type"), Column("buy", "What to buy"),
    Column("demand_gpu_hours", "Demand", "GPU-hours"),
    Column("committed_gpu_hours", "Committed", "GPU-hours"),
    Column("on_demand_gpu_hours", "On demand", "GPU-hours"),
    Column("spot_gpu_hours", "Spot", "GPU-hours"),
    Column("cost_usd", "Cost", "USD", digits=2),
    Column("all_on_demand_cost_usd", "All on demand", "USD", digits=2),
    Column("savings_usd", "Savings", "USD", digits=2),
    Column("savings_pct", "Savings", "%", digits=1),
    Column("coverage_pct", "Coverage", "%", digits=1),
    Column("effective_usd_per_gpu_hour", "Effective price", "USD/GPU-hour", digits=3),
)
EXPECTED_KEYS = tuple(c.key for c in MIX_COLUMNS[5:])


def _describe(item: Any) -> str:
    if isinstance(item, dict):
        return ", ".join(f"{k} {v}" for k, v in item.items() if v not in (None, "", [], {}))
    return str(item)


def _commitment_text(item: dict[str, Any]) -> str:
    instances, gpus = as_number(item.get("instances")) or 0, as_number(item.get("gpus")) or 0
    hourly = as_number(item.get("hourly_commitment_usd")) or 0
    term = item.get("term_words") or item.get("term") or "commitment"
    return (f"{fmt.count(instances)} × {term} ({fmt.count(gpus)} GPUs, "
            f"{fmt.usd_per(hourly, 'hour')})")


def _line_text(line: dict[str, Any]) -> str:
    """The buying rule's one line (its `sentence`); older documents: "3 x p4d.24xlarge (8 GPUs
    each, 24 GPUs), 3-year reservation, all upfront"."""
    if line.get("sentence"):
        return str(line["sentence"])
    words = line.get("words") or (f"{line.get('count')} x {line.get('instance_type')} "
                                  f"({line.get('gpus')} GPUs)")
    return f"{words}, {line.get('term_words')}, {line.get('payment_words')}"


def _buy_text(buy: dict[str, Any], gpu_type: str, spot: Any) -> str:
    """What to buy for one GPU type: its lines, and whether spot is used."""
    parts = [_line_text(line) for line in buy.get("lines") or []
             if isinstance(line, dict) and line.get("gpu_type") == gpu_type]
    if isinstance(spot, dict):
        rate = as_number(spot.get("effective_usd_per_hour") or spot.get("spot_usd_per_hour"))
        parts.append(f"spot for interruptible jobs ({fmt.usd_per(rate or 0, 'instance-hour')})")
    return "; ".join(parts) + ("; the rest on demand" if parts else "on demand only")


def _replay(buy: dict[str, Any]) -> dict[str, Any]:
    replay = buy.get("replay")
    return replay if isinstance(replay, dict) else {}


def _spot_of(buy: dict[str, Any], gpu_type: str) -> Any:
    for item in buy.get("types") or []:
        if item.get("gpu_type") == gpu_type and item.get("is_spot"):
            return item.get("spot")
    return None


def _mix_table(document: dict[str, Any]) -> Table:
    """What to buy per GPU type, replayed on the history (the same purchase as the lines)."""
    buy = _what_to_buy(document)
    rows = []
    for plan in _replay(buy).get("plans") or []:
        offer, expected = plan.get("offer") or {}, plan.get("expected") or {}
        name = str(offer.get("gpu_type", ""))
        rows.append((name, fmt.label(offer.get("provider")), offer.get("region"),
                     offer.get("instance_type"), _buy_text(buy, name, _spot_of(buy, name)),
                     *(as_number(expected.get(k)) for k in EXPECTED_KEYS)))
    return Table("mix", "What to buy, per GPU type, replayed on the history", "Purchase mix",
                 MIX_COLUMNS, tuple(rows),
                 note="Replayed on the hourly demand of the history; savings against buying "
                      "everything on demand at the same provider, region and instance type")


HINDSIGHT_COLUMNS = (
    Column("gpu_type", "GPU type"), Column("instance_type", "Instance type"),
    Column("bought", "Would have bought"),
    Column("cost_usd", "Cost", "USD", digits=2),
    Column("savings_usd", "Savings", "USD", digits=2),
)


def _hindsight_table(document: dict[str, Any]) -> Table:
    """The hindsight reference: labelled, never the recommendation."""
    reference = document.get("hindsight_reference") or {}
    rows = []
    for plan in reference.get("plans") or []:
        offer, expected = plan.get("offer") or {}, plan.get("expected") or {}
        taken = [_commitment_text(c) for c in plan.get("commitments") or []
                 if isinstance(c, dict) and (as_number(c.get("instances")) or 0) > 0]
        rows.append((str(offer.get("gpu_type", "")), offer.get("instance_type"),
                     "; ".join(taken) or "nothing", as_number(expected.get("cost_usd")),
                     as_number(expected.get("savings_usd"))))
    return Table("hindsight", "Hindsight reference (not a recommendation)", "Hindsight reference",
                 HINDSIGHT_COLUMNS, tuple(rows),
                 note=str(reference.get("words") or "What you would have bought knowing the "
                          "future; a backtest reference only"))


BUY_COLUMNS = (
    Column("gpu_type", "GPU type"), Column("provider", "Provider"), Column("region", "Region"),
    Column("instance_type", "Instance type"), Column("term_words", "Buy"),
    Column("payment_words", "Payment"), Column("count", "Instances", "count"),
    Column("gpus", "GPUs", "count"), Column("upfront_usd", "Upfront", "USD", digits=2),
    Column("usd_per_hour", "Effective", "USD/h", digits=2),
    Column("recurring_usd_per_hour", "Billed hourly", "USD/h", digits=2),
    Column("savings_p10_usd", "Savings over the term P10", "USD", is_printed=False),
    Column("savings_p90_usd", "Savings over the term P90", "USD", is_printed=False),
    Column("break_even_utilization_pct", "Break-even utilisation", "%", digits=0),
    Column("starting", "Starting"),
)
TYPE_COLUMNS = (
    Column("gpu_type", "GPU type"), Column("committed_share_pct", "Committed", "%", digits=1),
    Column("spot_share_pct", "Spot", "%", digits=1),
    Column("on_demand_share_pct", "On demand", "%", digits=1),
    Column("off_spot_gpu_hours", "Interruptible kept off spot", "GPU-hours"),
    Column("alternative", "Cheapest no-commitment alternative"),
    Column("alternative_usd_per_hour", "Alternative", "USD/instance-hour", digits=3),
)


def _what_to_buy(document: dict[str, Any]) -> dict[str, Any]:
    buy = document.get("what_to_buy")
    return buy if isinstance(buy, dict) else {}


def _buy_lines_table(buy: dict[str, Any]) -> Table:
    """The document's what-to-buy lines: one purchase each (numbers stay numbers)."""
    rows = tuple(tuple(_cell(_line_value(line, c.key)) for c in BUY_COLUMNS)
                 for line in buy.get("lines") or [] if isinstance(line, dict))
    return Table("what_to_buy", "What to buy", "What to buy", BUY_COLUMNS, rows,
                 note="Commitments to buy now; everything else runs on the alternative of "
                      "its GPU type (see Per GPU type)")


def _line_value(line: dict[str, Any], key: str) -> Any:
    if key.startswith("savings_p"):
        spread = line.get("savings_usd") or {}
        return spread.get(key.split("_")[1]) if isinstance(spread, dict) else None
    return line.get(key)


def _buy_types_table(buy: dict[str, Any]) -> Table:
    rows = []
    for item in buy.get("types") or []:
        alternative = item.get("alternative") or {}
        rows.append((str(item.get("gpu_type", "")),
                     *(as_number(item.get(c.key)) for c in TYPE_COLUMNS[1:5]),
                     alternative.get("words"), as_number(alternative.get("usd_per_hour"))))
    return Table("buy_types", "Per GPU type: shares of GPU-hours, replayed on the history",
                 "Per GPU type", TYPE_COLUMNS, tuple(rows),
                 note="The purchase replayed hour by hour: committed is the replay's coverage")


def _unit(key: str) -> str:
    for suffix, unit in (("_usd_per_hour", "USD/h"), ("_usd", "USD"), ("_pct", "%"),
                         ("_gpu_hours", "GPU-hours"), ("_hours", "h"), ("_gpus", "GPUs"),
                         ("_days", "days")):
        if key.endswith(suffix):
            return unit
    return ""


def _cell(value: Any) -> Any:
    if isinstance(value, str) or value is None:
        return value
    number = as_number(value)
    return number if number is not None else _describe(value)


def _demand_table(document: dict[str, Any]) -> Table:
    demand = document.get("hourly_demand") or {}
    firm, spare = demand.get("firm") or {}, demand.get("interruptible") or {}
    hours = list(firm.get("hours") or [])
    gpu_types = sorted(set(firm.get("series") or {}) | set(spare.get("series") or {}))
    columns = [Column("hour", "Hour (UTC)")]
    for name in gpu_types:
        columns += [Column(f"firm:{name}", f"{name} firm", "GPUs", digits=2),
                    Column(f"spot:{name}", f"{name} interruptible", "GPUs", digits=2)]
    rows = []
    for i, hour in enumerate(hours):
        row: list[Any] = [hour]
        for name in gpu_types:
            for part in (firm, spare):
                values = (part.get("series") or {}).get(name) or []
                row.append(as_number(values[i]) if i < len(values) else None)
        rows.append(tuple(row))
    return Table("demand", "Hourly demand", "Hourly demand", tuple(columns), tuple(rows),
                 note=str(demand.get("unit", "average concurrent GPUs per UTC hour")))


def _purchase_words(price: dict[str, Any]) -> str:
    """"1-year reservation, all upfront, standard": a reservation's payment option and offering
    class tell apart rows that would otherwise read the same."""
    option = str(price.get("purchase_option") or "")
    by_code = OPTIONS_BY_CODE.get(option)
    words = [str(price.get("purchase_words") or fmt.label(option))]
    if by_code is not None and by_code.is_commitment:
        words += [str(price.get("payment_words") or ""), str(price.get("offering_class") or "")]
    return ", ".join(word for word in words if word)


def _sources_table(document: dict[str, Any], *, today: date | None = None,
                   stale_days: int | None = None, stale_before: StaleBefore = None) -> Table:
    """The prices used: basis, date, age on the report's day, stale flag (as the page's)."""
    columns = (Column("gpu_type", "GPU type"), Column("provider", "Provider"),
               Column("region", "Region"), Column("instance_type", "Instance type"),
               Column("purchase_option", "Purchase"),
               Column("usd_per_gpu_hour", "Price", "USD/GPU-hour", digits=3),
               Column("basis", "Basis"), Column("as_of", "As of"),
               Column("age_days", "Age", "days"), Column("stale", "Stale"),
               Column("source", "Source"))

    rows = tuple((p.get("gpu_type"), fmt.label(p.get("provider")), p.get("region"),
                  p.get("instance_type"), _purchase_words(p),
                  as_number(p.get("usd_per_gpu_hour")),
                  p.get("basis") or ("derived" if p.get("is_derived") else "listed"),
                  p.get("as_of"), age,
                  stale_word(p, stale_before, age=age, stale_days=stale_days), p.get("source"))
                 for p in document.get("prices") or []
                 for age in (price_age_days(p.get("as_of"), today),))
    return Table("sources", "Prices and their sources", "Sources", columns, rows,
                 note=stale_note(stale_days, stale_before) if today is not None else "")


UPLOAD_WORDS = {
    "delimiter": ("Upload: column delimiter", ""), "encoding": ("Upload: text encoding", ""),
    "error_count": ("Upload: rows with errors", "rows"), "is_ok": ("Upload: accepted", ""),
    "records": ("Upload: jobs read", "jobs"), "rows_ignored": ("Upload: rows ignored", "rows"),
    "rows_read": ("Upload: rows read", "rows"), "rows_skipped": ("Upload: rows skipped", "rows"),
}


def _assumptions_table(document: dict[str, Any], upload: dict[str, Any]) -> Table:
    settings = document.get("settings") or {}
    provider = settings.get("provider")
    rows: list[tuple[Any, ...]] = [
        ("Provider you buy in", fmt.label(provider) if provider else "cheapest offered", ""),
        ("Region", settings.get("region") or "any", ""),
        ("Sized on", as_number(settings.get("lookback_days")) or "whole history", "days"),
    ]
    rows += [(f"Spot interruptions, {fmt.label(p)}", str(b), "% of instances per month")
             for p, b in sorted((settings.get("spot_bands") or {}).items())]
    rows += [(f"GPU type {k} read as", str(v), "catalog GPU")
             for k, v in sorted((document.get("accelerators") or {}).items())]
    for key, value in sorted(upload.items()):
        if isinstance(value, dict | list):
            continue
        name, unit = UPLOAD_WORDS.get(key, (f"Upload: {key.replace('_', ' ')}", ""))
        shown = ("yes" if value else "no") if isinstance(value, bool) else _cell(value)
        rows.append((name, shown, unit))
    return Table("assumptions", "Settings, upload and teams", "Assumptions",
                 (Column("name", "Setting"), Column("value", "Value", digits=-1),
                  Column("unit", "Unit")), tuple(rows))


def _teams_table(document: dict[str, Any]) -> Table:
    teams = (document.get("analysis") or {}).get("gpu_hours_by_team") or {}
    rows = tuple((str(team), as_number(hours)) for team, hours in
                 sorted(teams.items(), key=lambda item: -(as_number(item[1]) or 0)))
    return Table("teams", "GPU-hours by team", "Teams",
                 (Column("team", "Team"), Column("gpu_hours", "GPU-hours", "GPU-hours")), rows)


def _summary(document: dict[str, Any]) -> tuple[Figure, ...]:
    buy = _what_to_buy(document)
    replay = _replay(buy)
    total = replay.get("total") or {}
    stats = ((document.get("analysis") or {}).get("stats") or {}).get("total") or {}
    quiet_week = replay.get("p10_week_total") or {}
    bought = (
        Figure("What to buy now: upfront", as_number(buy.get("upfront_usd")), "USD", 2),
        Figure("What to buy now: per hour", as_number(buy.get("usd_per_hour")), "USD/h", 2),
        Figure("What to buy now: first-year savings (P50)",
               as_number(buy.get("first_year_savings_p50_usd")), "USD"),
        Figure("What to buy now: first-year savings, worst case (mean of the worst 10 %)",
               as_number(buy.get("first_year_worst_case_usd")), "USD"),
    ) if buy else ()
    return (
        *bought,
        Figure("What to buy, replayed: cost over the history", as_number(total.get("cost_usd")),
               "USD", 2),
        Figure("All on demand: cost over the history",
               as_number(total.get("all_on_demand_cost_usd")), "USD", 2),
        Figure("Savings", as_number(total.get("savings_usd")), "USD", 2),
        Figure("Savings", as_number(total.get("savings_pct")), "%", 1),
        Figure("Risk: savings over the hours replayed if every week were the P10 week",
               as_number(quiet_week.get("savings_usd")), "USD", 2),
        Figure("Demand", as_number(total.get("demand_gpu_hours")), "GPU-hours"),
        Figure("Mean demand", as_number(stats.get("mean_gpus")), "GPUs", 1),
        Figure(capitalised(PEAK_HOURLY_AVERAGE), as_number(stats.get("peak_gpus")), "GPUs", 1),
        Figure("Hours replayed", as_number(replay.get("n_hours")), "h"),
        *_price_dates(document),
    )


def _price_dates(document: dict[str, Any]) -> tuple[Figure, ...]:
    dates = sorted(str(p["as_of"]) for p in document.get("prices") or [] if p.get("as_of"))
    return (Figure("Prices dated", f"{dates[0]} to {dates[-1]}"),) if dates else ()


def _findings(document: dict[str, Any]) -> tuple[Finding, ...]:
    """Per GPU type: what to buy, where, against what, and why nothing when nothing."""
    buy = _what_to_buy(document)
    expected_by_type = {str((plan.get("offer") or {}).get("gpu_type", "")): plan.get("expected")
                        or {} for plan in _replay(buy).get("plans") or []}
    findings = []
    for item in buy.get("types") or []:
        offer, name = item.get("offer") or {}, str(item.get("gpu_type", ""))
        expected = expected_by_type.get(name, {})
        saved = fmt.percent_points(as_number(expected.get("savings_pct")) or 0)
        why = (f"{fmt.label(offer.get('provider'))} {offer.get('region')} "
               f"{offer.get('instance_type')}: {fmt.usd(as_number(expected.get('cost_usd')) or 0)}"
               f" against {fmt.usd(as_number(expected.get('all_on_demand_cost_usd')) or 0)} "
               f"all on demand there ({saved} saved).")
        elsewhere = item.get("elsewhere") or {}
        if elsewhere.get("words"):
            why += f" Elsewhere: {elsewhere['words']}."
        reasons = (item.get("sizing") or {}).get("reasons") or []
        if reasons:
            why += " Nothing committed: " + " ".join(str(r) for r in reasons)
        findings.append(Finding(name, _buy_text(buy, name, item.get("spot") if item.get("is_spot")
                                                else None), why))
    return tuple(findings)


def _demand_chart(table: Table) -> Chart:
    series = []
    for column in table.columns[1:]:
        values = tuple(float(v) if isinstance(v, int | float) and math.isfinite(v) else 0.0
                       for v in table.column(column.key))
        series.append(Series(column.label, tuple(float(i) for i in range(len(values))), values))
    return Chart("demand", "Hourly GPU demand", "line", "Hours since the first hour (h)",
                 "Concurrent GPUs (GPUs)", tuple(series))


def _cost_chart(table: Table) -> Chart:
    names = tuple(str(v) for v in table.column("gpu_type"))
    cost = tuple(float(v) if isinstance(v, int | float) else 0.0 for v in table.column("cost_usd"))
    saved = tuple(float(v) if isinstance(v, int | float) else 0.0
                  for v in table.column("savings_usd"))
    index = tuple(float(i) for i in range(len(names)))
    return Chart("costs", "Cost with what to buy, and savings, per GPU type", "bar", "GPU type",
                 "Cost over the history (USD)",
                 (Series("Cost with what to buy", index, cost), Series("Saved", index, saved)),
                 names)


def _bought_chart(table: Table) -> Chart:
    """GPU-hours per GPU type by how they are bought (the page's mix over time, summed)."""
    names = tuple(str(v) for v in table.column("gpu_type"))
    index = tuple(float(i) for i in range(len(names)))
    parts = (("committed_gpu_hours", "Committed"), ("on_demand_gpu_hours", "On demand"),
             ("spot_gpu_hours", "Spot"))
    series = tuple(Series(words, index, tuple(float(v) if isinstance(v, int | float) else 0.0
                                              for v in table.column(key)))
                   for key, words in parts)
    return Chart("bought", "GPU-hours by how they are bought, per GPU type", "bar", "GPU type",
                 "Demand served over the history (GPU-hours)", series, names)


def _durations_chart(document: dict[str, Any]) -> Chart | None:
    """Jobs per log-spaced duration bin and the fitted log-normal (the page's histogram)."""
    analysis = document.get("analysis") or {}
    histogram = analysis.get("duration_histogram") or {}
    edges = [as_number(e) or 0.0 for e in histogram.get("edges_hours") or []]
    counts = [as_number(c) or 0.0 for c in histogram.get("counts") or []]
    fitted = [as_number(f) or 0.0 for f in histogram.get("fitted_counts") or []]
    if len(edges) < 2 or not len(counts) == len(fitted) == len(edges) - 1 or min(edges) <= 0:
        return None
    centres = tuple(math.sqrt(a * b) for a, b in zip(edges[:-1], edges[1:], strict=True))
    ks = as_number((analysis.get("durations") or {}).get("ks_statistic"))
    title = "Job durations and the fitted log-normal" + (f" (KS D = {ks:.3f})"
                                                         if ks is not None else "")
    return Chart("durations", title, "line", "Job duration (hours, log scale)",
                 "Jobs per bin (count)",
                 (Series("Jobs", centres, tuple(counts)),
                  Series("Fitted log-normal", centres, tuple(fitted))), is_x_log=True)


def _teams_chart(table: Table, limit: int = 20) -> Chart | None:
    """GPU-hours of the `limit` biggest teams (the page's team bars)."""
    rows = table.rows[:limit]
    if not rows:
        return None
    names = tuple(str(row[0]) for row in rows)
    index = tuple(float(i) for i in range(len(names)))
    title = "GPU-hours by team" + (f" (top {limit} of {len(table.rows)})"
                                   if len(table.rows) > limit else "")
    return Chart("teams", title, "bar", "Team", "GPU-hours over the history (GPU-hours)",
                 (Series("GPU-hours", index, tuple(as_number(row[1]) or 0.0 for row in rows)),),
                 names)


def _carbon_table(document: dict[str, Any]) -> Table:
    places = (document.get("carbon") or {}).get("by_place") or []
    columns = (Column("gpu_type", "GPU type"), Column("provider", "Provider"),
               Column("region", "Region"), Column("gpu_hours", "GPU-hours", "GPU-hours"),
               Column("energy_kwh", "Energy", "kWh"), Column("co2e_kg", "CO2e", "kg CO2e"),
               Column("basis", "Basis"))
    rows = tuple((p.get("gpu_type"), fmt.label(p.get("provider")), p.get("region"),
                  as_number(p.get("gpu_hours")), as_number(p.get("energy_kwh")),
                  as_number(p.get("co2e_kg")), p.get("basis")) for p in places)
    return Table("carbon", "Energy and CO2e per GPU type and region", "Carbon", columns, rows,
                 note=str((document.get("carbon") or {}).get("energy_counts") or ""))


def _burst_table(document: dict[str, Any]) -> Table:
    moves = (document.get("carbon") or {}).get("burst") or []
    columns = (Column("gpu_type", "GPU type"), Column("from", "Now in"),
               Column("burst_gpu_hours", "Burst (on demand)", "GPU-hours"),
               Column("to", "Lowest-carbon priced region"),
               Column("co2e_saved_kg", "CO2e saved", "kg CO2e"),
               Column("cost_change_usd", "Cost change", "USD"))
    rows = tuple((m.get("gpu_type"), f"{fmt.label(m.get('from_provider'))} {m.get('from_region')}",
                  as_number(m.get("burst_gpu_hours")), m.get("words"),
                  as_number(m.get("co2e_saved_kg")), as_number(m.get("cost_change_usd")))
                 for m in moves)
    return Table("burst_carbon", "Moving the burst share to the lowest-carbon priced region",
                 "Burst move", columns, rows)


def _caveats(document: dict[str, Any]) -> tuple[str, ...]:
    caveats = []
    unpriced = document.get("unpriced") or {}
    if unpriced:
        caveats.append("No price for: " + ", ".join(f"{k} ({_describe(v)})"
                                                    for k, v in unpriced.items()) + ".")
    backtest = document.get("backtest")
    if backtest is None:
        caveats.append("No backtest: the history is too short to hold out its last 30 days.")
    caveats.append("Savings replay the past demand hour by hour; future demand may differ "
                   "(see the trend and the look-back sensitivity in the app).")
    return tuple(caveats)


def report_from_history(payload: dict[str, Any], *, subject_id: int,
                        generated_at: str, stale_days: int | None = None,
                        stale_before: StaleBefore = None) -> Report:
    """The report of a history payload (services.history_payload or file_document); with
    `stale_days` and `stale_before` (selectors.stale_before), Sources flag stale prices."""
    document = payload.get("document")
    if not isinstance(document, dict):
        raise ValueError("result: the history has no finished analysis yet")
    mix = _mix_table(document)
    demand = _demand_table(document)
    buy = _what_to_buy(document)
    buy_tables = (_buy_lines_table(buy), _buy_types_table(buy)) if buy else ()
    # The purchases are the main table (the CSV) when there is something to buy.
    if buy_tables and buy_tables[0].rows:
        tables: tuple[Table, ...] = (*buy_tables, mix)
    else:
        tables = (mix, *buy_tables)
    sources = _sources_table(document, today=report_day(generated_at), stale_days=stale_days,
                             stale_before=stale_before)
    tables = (*tables, _hindsight_table(document), demand, sources,
              _teams_table(document), _assumptions_table(document, payload.get("upload") or {}))
    if document.get("carbon"):
        tables = (*tables, _carbon_table(document), _burst_table(document))
    optional = (_durations_chart(document), _teams_chart(_teams_table(document)))
    charts = (_demand_chart(demand), _cost_chart(mix), _bought_chart(mix),
              *(chart for chart in optional if chart is not None))
    return Report(
        kind="history", subject_id=subject_id, generated_at=generated_at,
        title=f"Purchase mix for {payload.get('name') or f'history {subject_id}'}",
        subtitle=f"{as_number(_replay(buy).get('n_hours')) or 0:.0f} hours of demand replayed",
        summary=_summary(document), findings=_findings(document), tables=tables,
        charts=charts, caveats=_caveats(document),
    )
