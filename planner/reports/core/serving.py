"""A serving plan's report (planner.serving's document -> the one report model): the same
figures the page and API show, for the PDF, XLSX, CSV and HTML renderers."""

from __future__ import annotations

from typing import Any

from planner.core.formatting import serving_gpus_per_replica, serving_layout_label
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

OPTION_COLUMNS: tuple[Column, ...] = (
    Column("provider", "Provider"), Column("instance_type", "Instance"), Column("gpu", "GPU"),
    Column("region", "Region", is_printed=False),
    Column("purchase_option", "Purchase option", is_printed=False),
    Column("tp", "TP"), Column("pp", "PP"), Column("ep", "EP"),
    Column("gpus_per_replica", "GPUs per replica", is_printed=False),
    Column("replicas", "Replicas at peak"),
    Column("replicas_trough", "Replicas at trough"), Column("gpus", "GPUs at peak"),
    Column("usd_per_month", "Cost", "USD/month"),
    Column("usd_in", "Per M input tokens", "USD/M tokens", digits=3),
    Column("usd_out", "Per M output tokens", "USD/M tokens", digits=3),
    Column("ttft_p99_ms", "P99 TTFT", "ms"), Column("tpot_p99_ms", "P99 TPOT", "ms", digits=1),
    Column("ttft_p10", "P99 TTFT band P10", "ms", is_printed=False),
    Column("ttft_p90", "P99 TTFT band P90", "ms", is_printed=False),
    Column("tpot_p10", "P99 TPOT band P10", "ms", digits=1, is_printed=False),
    Column("tpot_p90", "P99 TPOT band P90", "ms", digits=1, is_printed=False),
    Column("utilisation", "Utilisation", "%", digits=0),
    Column("kg", "CO2e per M tokens", "kg", digits=3, is_printed=False),
    Column("price_as_of", "Price as of"), Column("price_basis", "Price basis"),
    Column("price_source", "Price source", is_printed=False),
)
BASIS_NOTE = ("Price basis: listed is the provider's price list; derived is computed from a "
              "listed price and a published discount; estimated is left out unless allowed.")


def _row(o: dict[str, Any]) -> tuple[Any, ...]:
    cost = o["usd_per_million_tokens"]
    return (o["provider"], o["instance_type"], o["gpu"], o["region"], o["purchase_option"],
            o["tp"], o.get("pp") or 1, o.get("ep") or 1,
            serving_gpus_per_replica(o),
            o["replicas"], o.get("replicas_at_trough") or o["replicas"], o["gpus"],
            float(o["usd_per_month"]), float(cost["input"]),
            float(cost["output"]), float(o["ttft_p99_ms"]), float(o["tpot_p99_ms"]),
            as_number(o["ttft_p99_ms_p10"]), as_number(o["ttft_p99_ms_p90"]),
            as_number(o["tpot_p99_ms_p10"]), as_number(o["tpot_p99_ms_p90"]),
            float(o["utilisation"]) * 100.0, o["kg_co2e_per_million_tokens"],
            o["price_as_of"], o["price_basis"], o["price_source"])


def _band(low: Any, high: Any, digits: int) -> str:
    low, high = as_number(low), as_number(high)
    if low is None or high is None:
        return "no band (no calibration shipped)"
    return f"P10-P90 {low:,.{digits}f} to {high:,.{digits}f} ms"


def _summary(best: dict[str, Any] | None, document: dict[str, Any]) -> tuple[Figure, ...]:
    figures = [Figure("Configurations meeting the targets", document["n_options"])]
    mix = document.get("mix") or {}
    if best:
        cost = best["usd_per_million_tokens"]
        figures += [Figure("Cheapest per month", float(best["usd_per_month"]), "USD"),
                    Figure("Layout", f"{serving_layout_label(best)}, "
                           f"{serving_gpus_per_replica(best)} GPUs per replica"),
                    Figure("Replicas at peak", best["replicas"]),
                    Figure("Replicas at trough", best.get("replicas_at_trough")
                           or best["replicas"]),
                    Figure("Per million input tokens", float(cost["input"]), "USD", 3),
                    Figure("Per million output tokens", float(cost["output"]), "USD", 3),
                    Figure("P99 TTFT", float(best["ttft_p99_ms"]), "ms"),
                    Figure("P99 TTFT band", _band(best["ttft_p99_ms_p10"],
                                                  best["ttft_p99_ms_p90"], 0)),
                    Figure("P99 TPOT", float(best["tpot_p99_ms"]), "ms", 1),
                    Figure("P99 TPOT band", _band(best["tpot_p99_ms_p10"],
                                                  best["tpot_p99_ms_p90"], 1)),
                    Figure("Price", f"{best['price_source']}, as of {best['price_as_of']}, "
                           f"{best['price_basis']}, per instance-hour")]
    if mix.get("is_available"):
        figures += [Figure("Purchase mix per month", float(mix["mix_usd_per_month"]), "USD"),
                    Figure("All on-demand per month",
                           float(mix["all_on_demand_usd_per_month"]), "USD")]
    return tuple(figures)


def _findings(document: dict[str, Any]) -> tuple[Finding, ...]:
    titles = {"cheapest": "Cheapest meeting the targets",
              "lowest_latency": "Lowest P99 TPOT within 1.5x the cheapest cost",
              "lowest_carbon": "Lowest kg CO2e per million tokens"}
    out = []
    for key, title in titles.items():
        o = document["cards"].get(key)
        if o:
            out.append(Finding(
                title, f"{o['provider']} {o['instance_type']} ({o['gpu']}), "
                f"{serving_layout_label(o)} x {o['replicas']} replicas on {o['instances']} "
                f"instances",
                f"USD {o['usd_per_month']:,.0f} per month; P99 TTFT {o['ttft_p99_ms']:,.0f} ms "
                f"({_band(o['ttft_p99_ms_p10'], o['ttft_p99_ms_p90'], 0)}), "
                f"P99 TPOT {o['tpot_p99_ms']:.1f} ms "
                f"({_band(o['tpot_p99_ms_p10'], o['tpot_p99_ms_p90'], 1)})"))
    return tuple(out)


def _charts(document: dict[str, Any]) -> tuple[Chart, ...]:
    curves = tuple(Series(c["label"], tuple(p["output_tokens_per_s"] for p in c["points"]),
                          tuple(p["tpot_p99_ms"] for p in c["points"]))
                   for c in document["curves"])
    options = document["options"]
    cost = Series("options", tuple(float(o["ttft_p99_ms"]) for o in options),
                  tuple(float(o["usd_per_million_tokens"]["all"]) for o in options))
    charts = [Chart("cost-ttft", "Cost per million tokens against time to first token",
                    "scatter", "P99 time to first token (ms)",
                    "USD per million tokens (prompt + output)", (cost,))]
    if curves:
        charts.insert(0, Chart("latency-load", "Latency against load, one replica", "line",
                               "Output tokens/s per replica", "P99 time per output token (ms)",
                               curves))
    day = _day_series(options)
    if day:
        charts.append(Chart("replicas-day", "Replicas over the day", "line", "Hour of the day",
                            "Replicas in service", day))
    return tuple(charts)


DAY_CONFIGURATIONS = 3


def day_configurations(options: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The cheapest DAY_CONFIGURATIONS distinct configurations (GPU and layout) that have an
    hourly schedule, each with its series name: the page's chart and the report show the same
    ones under the same names."""
    picked: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
    for o in options:
        if len(picked) == DAY_CONFIGURATIONS:
            break
        key = (o["gpu"], serving_layout_label(o))
        if key not in picked and o.get("replicas_by_hour"):
            picked[key] = (f"{o['gpu']} {key[1]} ({o['instance_type']})", o)
    return list(picked.values())


def _day_series(options: list[dict[str, Any]]) -> tuple[Series, ...]:
    """Replicas each hour of the cheapest three distinct configurations (GPU and layout)."""
    return tuple(Series(name, tuple(float(h) for h in range(24)),
                        tuple(float(r) for r in o["replicas_by_hour"]))
                 for name, o in day_configurations(options))


def _hours_table(document: dict[str, Any]) -> Table:
    """Hour by hour: the request rate and the cheapest configuration's replicas."""
    best = document["cards"].get("cheapest") or {}
    rates = (document.get("traffic") or {}).get("hourly_rate_per_s") or []
    replicas = best.get("replicas_by_hour") or []
    instances = best.get("instances_by_hour") or []
    rows = tuple((h, float(rates[h]), replicas[h], instances[h])
                 for h in range(min(len(rates), len(replicas), len(instances))))
    return Table("hours", "Replicas over the day (cheapest configuration)", "Hours",
                 (Column("hour", "Hour of the day"),
                  Column("rate", "Request rate", "requests/s", digits=3),
                  Column("replicas", "Replicas"), Column("instances", "Instances")), rows,
                 "Each hour needs ceil(rate / goodput per replica) replicas, at least one, in "
                 "whole instances.")


def _buy_table(document: dict[str, Any]) -> Table:
    """The purchase mix's lines, as the page and API print them."""
    mix = document.get("mix") or {}
    note = ""
    if mix.get("is_available"):
        note = (f"For {mix['configuration']}: USD {mix['mix_usd_per_month']:,.0f} per month "
                f"for the mix against USD {mix['all_on_demand_usd_per_month']:,.0f} all "
                f"on-demand (scale-up delay {mix['scale_up_minutes']:g} minutes); prices "
                f"{mix['price_source']}, as of {mix['price_as_of']}, per instance-hour.")
    return Table("buy", "What to buy", "What to buy", (Column("line", "Line"),),
                 tuple((line,) for line in mix.get("lines") or []), note)


def report_from_serving(document: dict[str, Any], *, subject_id: int, title: str,
                        generated_at: str) -> Report:
    """The report of one stored serving plan document (planner.serving.services)."""
    data = document["input"]
    options = Table("options", "Options, cheapest first", "Options", OPTION_COLUMNS,
                    tuple(_row(o) for o in document["options"]),
                    "Cost per month = instances x hourly price x 730 h; per-token costs split "
                    "it between prompt and output by prefill and decode time. " + BASIS_NOTE)
    unfit = Table("unfit", "GPUs left out", "Left out", (Column("why", "GPU and why"),),
                  tuple((u,) for u in document["unfit"]))
    subtitle = (f"{data['rate']:g} requests/s, {data['input_tokens']:g} prompt and "
                f"{data['output_tokens']:g} output tokens, precision {data['precision']}")
    traffic = document.get("traffic") or {}
    if traffic.get("source") == "request_log":
        subtitle += (f"; traffic from a request log of {traffic['rows']:,} requests over "
                     f"{traffic['history_days']:.1f} days, peak {data['rate']:.3g} and trough "
                     f"{traffic['trough_rate_per_s']:.3g} requests/s")
    elif traffic.get("source") == "daily_profile":
        subtitle += (f"; a daily profile peaking at {data['rate']:g} requests/s, trough "
                     f"{traffic['trough_rate_per_s']:.3g}")
    tables = (options, _buy_table(document), _hours_table(document), unfit)
    return Report("serving", subject_id, title, generated_at,
                  _summary(document["cards"].get("cheapest"), document), _findings(document),
                  tables, _charts(document), (document["note"], _sources(document)),
                  subtitle)


def _sources(document: dict[str, Any]) -> str:
    """Every price source the options rest on, with its as-of date and basis."""
    seen = sorted({(o["price_source"], o["price_as_of"], o["price_basis"])
                   for o in document["options"]})
    return "Prices per instance-hour: " + ("; ".join(
        f"{source} (as of {as_of}, {basis})" for source, as_of, basis in seen) or "none") + "."
