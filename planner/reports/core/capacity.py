"""The report of a capacity sweep, from its payload (planner.capacity.services.capacity_payload
or the command line's file_capacity): the frontier table, the recommended point, what it
gives up, the queue at that point, prices and assumptions."""

from __future__ import annotations

import math
from datetime import date
from typing import Any

from planner.core import formatting as fmt
from planner.core.cloud import price_age_days
from planner.core.peaks import PEAK_CONCURRENT, capitalised
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

POINT_COLUMNS = (
    Column("pool_gpus", "Pool", "GPUs"), Column("discipline", "Queue"),
    Column("policy", "Waiting policy"), Column("max_wait_hours", "Wait limit T", "h", digits=2),
    Column("total_usd", "Total", "USD"), Column("pool_usd", "Pool", "USD"),
    Column("burst_usd", "Burst", "USD"),
    Column("p95_wait_hours", "P95 wait", "h", digits=2),
    Column("mean_wait_hours", "Mean wait", "h", digits=2),
    Column("p50_wait_hours", "P50 wait", "h", digits=2, is_printed=False),
    Column("p99_wait_hours", "P99 wait", "h", digits=2, is_printed=False),
    Column("mean_jct_increase_pct", "Mean JCT increase", "%", digits=1, is_printed=False),
    Column("utilization_pct", "Pool utilisation", "%", digits=1),
    Column("jobs_burst", "Jobs burst", "count"),
    Column("pool_gpu_hours", "Pool", "GPU-hours", is_printed=False),
    Column("burst_gpu_hours", "Burst", "GPU-hours", is_printed=False),
    Column("burst_spot_gpu_hours", "Burst on spot", "GPU-hours", is_printed=False),
    Column("is_recommended", "Recommended"),
)


def curve_name(point: dict[str, Any]) -> str:
    """"FIFO, size-aware T=2 h" (one frontier curve, in the capacity page's words)."""
    queue = fmt.label(point.get("discipline"))
    if point.get("policy") == "none":
        return f"{queue}, no waiting"
    hours = float(point.get("max_wait_hours") or 0)
    limit = "∞" if math.isinf(hours) else f"{hours:g}"
    return f"{queue}, {fmt.label(point.get('policy')).lower()} T={limit} h"


def _cell(point: dict[str, Any], key: str, recommended: int, index: int) -> Any:
    if key == "is_recommended":
        return "yes" if index == recommended else ""
    if key == "utilization_pct":
        value = as_number(point.get("utilization"))
        return None if value is None else 100.0 * value
    if key == "max_wait_hours":
        return float(point.get("max_wait_hours") or 0)
    value = point.get(key)
    return value if isinstance(value, str) else as_number(value)


def _points_table(payload: dict[str, Any]) -> Table:
    recommended = int(payload.get("recommended_index", -1))
    rows = tuple(tuple(_cell(p, c.key, recommended, i) for c in POINT_COLUMNS)
                 for i, p in enumerate(payload.get("points") or []))
    return Table("points", "Cost against waiting: every pool size and policy swept",
                 "Frontier", POINT_COLUMNS, rows,
                 note="Totals over the history's span; waits over every GPU job (pool: submit "
                      "to start, burst: submit to burst), P95 nearest-rank")


def _against_table(payload: dict[str, Any]) -> Table:
    columns = (Column("name", "Against"), Column("pool_gpus", "Its pool", "GPUs"),
               Column("bought_as", "Bought as"),
               Column("pool_usd", "Its pool cost", "USD"),
               Column("total_usd", "Its total", "USD"),
               Column("saved_usd", "Recommended saves", "USD"),
               Column("saved_pct", "Recommended saves", "%", digits=1),
               Column("added_p95_wait_hours", "P95 wait added", "h", digits=2),
               Column("added_mean_wait_hours", "Mean wait added", "h", digits=2))
    pool_words = (payload.get("prices") or {}).get("pool_words")
    rows = tuple((a["name"], as_number(a["reference"]["pool_gpus"]),
                  a.get("bought_as") or (pool_words if a["reference"]["pool_gpus"]
                                         else "nothing committed"),
                  as_number(a["reference"].get("pool_usd")),
                  as_number(a["reference"]["total_usd"]), as_number(a["saved_usd"]),
                  as_number(a["saved_pct"]), as_number(a["added_p95_wait_hours"]),
                  as_number(a["added_mean_wait_hours"]))
                 for a in payload.get("against") or [])
    # How each pool is priced, and the purchase mix's own figure for its commitments.
    notes = [a["note"] for a in payload.get("against") or [] if a.get("note")]
    statement = (payload.get("prices") or {}).get("pool_statement")
    return Table("against", "What the recommended pool gives up and saves", "Comparison",
                 columns, rows, note=" ".join(notes + ([statement] if statement else [])))


def _waits_table(payload: dict[str, Any]) -> Table:
    """Waits per job-size class at the recommended point."""
    columns = (Column("job_size", "Job size"), Column("jobs", "Jobs", "count"),
               Column("p95", "P95 wait", "h", digits=2), Column("p99", "P99 wait", "h", digits=2),
               Column("max", "Longest wait", "h", digits=2),
               Column("mean", "Mean wait, GPU-hour weighted", "h", digits=2))
    by_class = (payload.get("recommended") or {}).get("waits_by_class") or {}
    rows = tuple((name, as_number(c.get("jobs")), as_number(c.get("p95_wait_hours")),
                  as_number(c.get("p99_wait_hours")), as_number(c.get("max_wait_hours")),
                  as_number(c.get("gpu_hour_weighted_mean_wait_hours")))
                 for name, c in by_class.items())
    return Table("waits_by_class", "Waits by job size at the recommended point", "Waits",
                 columns, rows, note="The wait target holds over all jobs and in every class.")


def _owned_table(payload: dict[str, Any]) -> Table | None:
    """Owned hardware's figures, each labelled default (source) or your input."""
    sources = (payload.get("prices") or {}).get("sources") or [{}]
    figures = sources[0].get("figures") or []
    if not figures:
        return None
    columns = (Column("name", "Figure"), Column("value", "Value"), Column("unit", "Unit"),
               Column("label", "From"))
    rows = tuple((f["name"], as_number(f["value"]), f["unit"], f["label"]) for f in figures)
    lines = "; ".join(f"{line['name']} {fmt.usd_per(line['usd_per_gpu_hour'], 'GPU-hour')}"
                      for line in sources[0].get("lines") or [])
    return Table("owned", "Owned hardware: figures and sources", "Owned", columns, rows,
                 note=f"Per GPU-hour: {lines}.")


def _queue_table(payload: dict[str, Any]) -> Table:
    queue = payload.get("queue") or {}
    rows = tuple((as_number(h), as_number(j), as_number(g)) for h, j, g in
                 zip(queue.get("hours") or [], queue.get("jobs") or [],
                     queue.get("gpus") or [], strict=False))
    return Table("queue", "Queue at the recommended point", "Queue",
                 (Column("hours", "Since the first submit", "h", digits=1),
                  Column("jobs", "Jobs waiting", "count"),
                  Column("gpus", "GPUs waited for", "GPUs")), rows,
                 note="The most seen in each time bin")


def _sources_table(payload: dict[str, Any], *, today: date | None = None,
                   stale_days: int | None = None, stale_before: StaleBefore = None) -> Table:
    """The prices used, with each one's age on the report's day and, with `stale_days`, a
    stale flag (planner.core.cloud.is_stale_row, as the page's "Prices used")."""
    prices = payload.get("prices") or {}
    rows = tuple((fmt.label(s.get("purchase_option")), s.get("instance_type"),
                  as_number(s.get("usd_per_gpu_hour")), s.get("basis"), s.get("as_of"),
                  age, stale_word(s, stale_before, age=age, stale_days=stale_days),
                  s.get("source"))
                 for s in prices.get("sources") or []
                 for age in (price_age_days(s.get("as_of"), today),))
    note = stale_note(stale_days, stale_before) if today is not None else ""
    return Table("sources", "Prices and their sources", "Sources",
                 (Column("purchase_option", "Purchase"), Column("instance_type", "Instance"),
                  Column("usd_per_gpu_hour", "Price", "USD/GPU-hour", digits=3),
                  Column("basis", "Basis"), Column("as_of", "As of"),
                  Column("age_days", "Age", "days"), Column("stale", "Stale"),
                  Column("source", "Source")), rows, note=note)


def _assumptions_table(payload: dict[str, Any]) -> Table:
    rows = tuple(("assumption", str(text)) for text in payload.get("assumptions") or [])
    inputs = payload.get("inputs") or {}
    rows += tuple((f"input {key}", str(value)) for key, value in sorted(inputs.items()))
    return Table("assumptions", "Assumptions and inputs", "Assumptions",
                 (Column("name", "Setting"), Column("value", "Value")), rows)


def frontier_chart(payload: dict[str, Any]) -> Chart:
    """Total cost against P95 wait, one series per policy curve."""
    curves: dict[str, list[tuple[float, float]]] = {}
    for point in payload.get("points") or []:
        curves.setdefault(curve_name(point), []).append(
            (float(point["p95_wait_hours"]), float(point["total_usd"])))
    series = tuple(Series(name, tuple(x for x, _ in values), tuple(y for _, y in values))
                   for name, values in curves.items())
    return Chart("frontier", "Cost against P95 wait, per waiting policy", "scatter",
                 "P95 wait (h)", "Total cost over the history (USD)", series)


def _queue_chart(table: Table) -> Chart:
    hours = tuple(float(v or 0) for v in table.column("hours"))
    return Chart("queue", "Jobs waiting at the recommended point", "line",
                 "Hours since the first submit (h)", "Jobs waiting (count)",
                 (Series("Jobs waiting", hours,
                         tuple(float(v or 0) for v in table.column("jobs"))),))


def _summary(payload: dict[str, Any]) -> tuple[Figure, ...]:
    best = payload.get("recommended") or {}
    prices = payload.get("prices") or {}
    return (
        Figure("Recommended pool", as_number(best.get("pool_gpus")), "GPUs"),
        Figure("Total cost at the recommended point", as_number(best.get("total_usd")), "USD"),
        Figure("P95 wait", as_number(best.get("p95_wait_hours")), "h", 2),
        Figure("Mean wait", as_number(best.get("mean_wait_hours")), "h", 2),
        Figure("Pool utilisation", _percent_of(best.get("utilization")), "%", 1),
        Figure("Jobs burst", as_number(best.get("jobs_burst")), "count"),
        Figure(f"{capitalised(PEAK_CONCURRENT)} (no job waiting)",
               as_number(payload.get("peak_gpus")), "GPUs"),
        *(Figure(f"No-wait commitment: {name}", as_number(gpus), "GPUs")
          for name, gpus in (payload.get("no_wait_references") or {}).items()),
        Figure("Pool price", as_number(prices.get("pool_usd_per_gpu_hour")), "USD/GPU-hour", 3),
        Figure("On-demand price", as_number(prices.get("on_demand_usd_per_gpu_hour")),
               "USD/GPU-hour", 3),
    )


def _percent_of(fraction: Any) -> float | None:
    """A fraction in percent; None (printed "-", as the page's "—") when unknown."""
    value = as_number(fraction)
    return None if value is None else 100.0 * value


def recommendation_words(payload: dict[str, Any]) -> str:
    """The document's headline (the page's and the command line's); older documents: the
    pool and queue."""
    if payload.get("headline"):
        return str(payload["headline"])
    best = payload.get("recommended") or {}
    return (f"Commit {fmt.count(best.get('pool_gpus') or 0)} {payload.get('gpu_type')} GPUs, "
            f"queue {curve_name(best)}")


def _findings(payload: dict[str, Any]) -> tuple[Finding, ...]:
    best = payload.get("recommended") or {}
    findings = [Finding(
        "Recommended", recommendation_words(payload),
        ("Nothing may be committed on this history, so every job runs in the cloud: "
         if payload.get("is_commitment_allowed") is False else
         f"The cheapest point with P95 wait <= {payload.get('target_p95_wait_hours')} h: "
         if payload.get("is_target_met", True) else
         f"No point meets P95 wait <= {payload.get('target_p95_wait_hours')} h; the shortest: ")
        +
        f"{fmt.usd(as_number(best.get('total_usd')) or 0)} over the history, P95 wait "
        f"{as_number(best.get('p95_wait_hours')) or 0:.2f} h.")]
    purchase = payload.get("purchase") or {}
    if purchase:
        findings.append(Finding(
            "To buy it", "; ".join(str(line.get("sentence") or line.get("words"))
                                   for line in purchase.get("lines") or [])
            or "Nothing committed",
            " ".join([*(purchase.get("reasons") or []),
                      *([purchase["would_buy"]["words"]] if purchase.get("would_buy") else [])])
            or "The purchase mix's buying rule: whole instances, money over the whole term."))
    for item in payload.get("against") or []:
        pct = item.get("saved_pct")
        findings.append(Finding(
            f"Against {item['name']}",
            f"saves {fmt.usd(as_number(item['saved_usd']) or 0)}"
            + ("" if pct is None else f" ({fmt.percent_points(pct)})"),
            f"its pool {item['reference']['pool_gpus']} GPUs costs "
            f"{fmt.usd(item['reference']['total_usd'])}; the recommendation adds "
            f"{item['added_p95_wait_hours']:.2f} h of P95 wait and "
            f"{item['added_mean_wait_hours']:.2f} h of mean wait."))
    return tuple(findings)


def report_from_capacity(payload: dict[str, Any], *, subject_id: int,
                         generated_at: str, stale_days: int | None = None,
                         stale_before: StaleBefore = None) -> Report:
    """The report of a finished capacity sweep; ValueError if it has no points yet. With
    `stale_days` and `stale_before` (pricing.selectors.stale_before), Sources flag stale
    prices (planner.core.cloud.is_stale_row)."""
    if not payload.get("points") or not payload.get("recommended"):
        raise ValueError("result: the history has no finished capacity sweep yet")
    points = _points_table(payload)
    queue = _queue_table(payload)
    return Report(
        kind="capacity", subject_id=subject_id, generated_at=generated_at,
        title=f"Capacity with queues: {payload.get('gpu_type')}"
              + (f" in {payload['name']}" if payload.get("name") else ""),
        subtitle=f"{fmt.count(payload.get('jobs') or 0)} GPU jobs replayed on "
                 f"{fmt.count(len(payload['points']))} points (pool sizes x queues x waiting "
                 "policies)",
        summary=_summary(payload), findings=_findings(payload),
        tables=(points, _against_table(payload), _waits_table(payload),
                *filter(None, [_owned_table(payload)]), queue,
                _sources_table(payload, today=report_day(generated_at), stale_days=stale_days,
                               stale_before=stale_before),
                _assumptions_table(payload)),
        charts=(frontier_chart(payload), _queue_chart(queue)),
        caveats=("A replay of the past jobs: future demand may differ.",
                 "Waiting jobs are assumed to wait; a user who resubmits elsewhere is not "
                 "modelled."),
    )
