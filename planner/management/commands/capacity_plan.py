"""Sweep pool sizes x waiting policies for a job-history file and recommend how many GPUs to
commit (nothing is stored)."""

import json
import math
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from planner.capacity import services
from planner.capacity.core.inputs import OWNED_FIGURES, POOL_PRICES
from planner.capacity.core.jobs import DISCIPLINES, POLICIES
from planner.capacity.core.owned import LABELS as OWNED_LABELS
from planner.core.peaks import PEAK_CONCURRENT
from planner.management.inputs import job_file, report_path
from planner.purchase_mix.core.upload.parsing import parse_column_mapping
from planner.purchase_mix.documents import RunOptions
from planner.purchase_mix.services import ParseOptions
from planner.reports.core.capacity import report_from_capacity
from planner.reports.services import PdfUnavailableError, report_write
from pricing.selectors import stale_before


class Command(BaseCommand):
    help = ("Cost against queueing wait for committed pools of one GPU type, from a job "
            "history (--json: the document of GET /api/histories/{id}/capacity).")

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--format", default="generic", choices=["generic", "slurm", "mapped"])
        parser.add_argument("--map", default="", help="FIELD=COLUMN,... (implies mapped)")
        parser.add_argument("--time-unit", default="", choices=["", "s", "min", "h"])
        parser.add_argument("--origin", default="", help="timestamp numeric times count from")
        parser.add_argument("--gpu-type", default="",
                            help="the GPU type to plan (also given to rows that name none); "
                                 "blank: the type with the most GPU-hours")
        parser.add_argument("--skip-bad-rows", action="store_true")
        parser.add_argument("--duplicate-ids", default="refuse", choices=["refuse", "merge"])
        parser.add_argument("--provider", default="", help="blank: cheapest where offered")
        parser.add_argument("--region", default="", help="blank: any region")
        parser.add_argument("--pool-gpus", default="",
                            help=("N[,N...] pool sizes; default: about 30 from 0 to the "
                                  f"{PEAK_CONCURRENT}"))
        parser.add_argument("--discipline", default="fifo",
                            help=f"queue discipline(s), comma-separated: {', '.join(DISCIPLINES)}")
        parser.add_argument("--policy", default=",".join(POLICIES),
                            help=f"waiting policies, comma-separated: {', '.join(POLICIES)}")
        parser.add_argument("--max-wait-hours", default="2",
                            help="T[,T...] wait limits for constant and size_aware (inf allowed)")
        parser.add_argument("--target-p95-wait-hours", default="2",
                            help="recommend the cheapest point with P95 wait at most this")
        parser.add_argument("--pool-price", default="cheapest", choices=POOL_PRICES,
                            help="what the pool costs: the cheapest commitment, one term, or "
                                 "owned hardware (--owned-*)")
        for key in OWNED_FIGURES:
            words, unit = OWNED_LABELS[key]
            parser.add_argument(f"--owned-{key.replace('_', '-')}", default=None,
                                help=f"owned hardware: {words.lower()}"
                                     + (f" ({unit})" if unit else "")
                                     + "; default: the GPU type's, with its source")
        parser.add_argument("--spot", action="store_true", dest="is_spot_allowed",
                            help="interruptible jobs burst to spot (else on-demand)")
        parser.add_argument("--json", action="store_true", help="print the API document")
        parser.add_argument("--report", type=Path, metavar="PATH",
                            help="also write the report (.pdf, .xlsx, .csv or .html)")

    def handle(self, *args: Any, **options: Any) -> None:
        path = job_file(options["file"])
        report_path(options["report"])
        try:
            mapping = parse_column_mapping(options["map"])
            fmt = "mapped" if mapping and options["format"] == "generic" else options["format"]
            payload = services.file_capacity(
                path,
                options=ParseOptions(
                    fmt=fmt, column_map=mapping, time_unit=options["time_unit"],
                    origin=options["origin"], default_gpu_type=options["gpu_type"],
                    is_skipping_bad_rows=options["skip_bad_rows"],
                    duplicate_ids=options["duplicate_ids"]),
                run_options=RunOptions(provider=options["provider"], region=options["region"]),
                raw=_raw_inputs(options),
            )
        except ValueError as error:
            raise CommandError(f"{path}: {error}") from error
        if options["report"]:
            _write_report(self, payload, options["report"])
        if options["json"]:
            self.stdout.write(json.dumps(payload, indent=1))
        else:
            self.stdout.write("\n".join(summary_lines(payload)))


def _raw_inputs(options: dict[str, Any]) -> dict[str, Any]:
    return {
        "gpu_type": options["gpu_type"], "pool_gpus": options["pool_gpus"],
        "disciplines": options["discipline"], "policies": options["policy"],
        "max_wait_hours": options["max_wait_hours"],
        "target_p95_wait_hours": options["target_p95_wait_hours"],
        "pool_price": options["pool_price"], "is_spot_allowed": options["is_spot_allowed"],
        "owned": {key: options[f"owned_{key}"] for key in OWNED_FIGURES
                  if options[f"owned_{key}"] is not None},
    }


def _hours(value: Any) -> str:
    number = float(value)
    return "inf" if math.isinf(number) else f"{number:g}"


def point_line(point: dict[str, Any]) -> str:
    utilization = point["utilization"]
    return (f"{point['pool_gpus']:>7} {point['discipline']:<8} {point['policy']:<10} "
            f"{_hours(point['max_wait_hours']):>5} {point['total_usd']:>14,.0f} "
            f"{point['p95_wait_hours']:>8.2f} {point['mean_wait_hours']:>8.2f} "
            f"{point['jobs_burst']:>9,} "
            f"{'—' if utilization is None else f'{100 * utilization:.1f}':>6}")


def summary_lines(payload: dict[str, Any]) -> list[str]:
    best = payload["recommended"]
    prices = payload["prices"]
    lines = [
        f"{payload['gpu_type']}: {payload['jobs']:,} GPU jobs, {payload['gpu_hours']:,.0f} "
        f"GPU-hours, {PEAK_CONCURRENT} {payload['peak_gpus']:,} (no job waiting)",
        f"Pool at ${prices['pool_usd_per_gpu_hour']:.3f}/GPU-hour ({prices['pool_words']}); "
        f"burst on demand at ${prices['on_demand_usd_per_gpu_hour']:.3f}/GPU-hour",
        *([f"  {prices['pool_statement']}"] if prices.get("pool_statement") else []),
        f"{'pool':>7} {'queue':<8} {'policy':<10} {'T (h)':>5} {'total (USD)':>14} "
        f"{'P95 (h)':>8} {'mean (h)':>8} {'burst':>9} {'util %':>6}",
        *(point_line(p) for p in payload["points"]),
        ("Recommended (nothing may be committed on this history): "
         if payload.get("is_commitment_allowed") is False else
         f"Recommended (cheapest with P95 wait <= {payload['target_p95_wait_hours']:g} h): "
         if payload["is_target_met"] else
         f"No point has P95 wait <= {payload['target_p95_wait_hours']:g} h; the shortest: ")
        +
        f"{best['pool_gpus']} GPUs, {best['discipline']}, {best['policy']} "
        f"(T {_hours(best['max_wait_hours'])} h): ${best['total_usd']:,.0f}, "
        f"P95 wait {best['p95_wait_hours']:.2f} h, mean wait {best['mean_wait_hours']:.2f} h",
    ]
    if payload.get("headline"):
        lines.append(f"  {payload['headline']}")
    for name, waits in (best.get("waits_by_class") or {}).items():
        lines.append(f"    {name}: {waits['jobs']:,.0f} jobs, P95 wait "
                     f"{waits['p95_wait_hours']:.2f} h, P99 {waits['p99_wait_hours']:.2f} h, "
                     f"longest {waits['max_wait_hours']:.2f} h, GPU-hour weighted mean "
                     f"{waits['gpu_hour_weighted_mean_wait_hours']:.2f} h")
    purchase = payload.get("purchase") or {}
    for line in purchase.get("lines") or []:
        lines.append(f"  to buy it: {line['sentence']}")
    if purchase and not purchase.get("lines"):
        lines.append(f"  to buy it: nothing committed: {' '.join(purchase.get('reasons') or [])}")
    if purchase.get("would_buy"):
        lines.append(f"  {purchase['would_buy']['words']}")
    for item in payload["against"]:
        ref = item["reference"]
        pct = "" if item["saved_pct"] is None else f" ({item['saved_pct']:.1f} %)"
        lines.append(
            f"  against {item['name']} ({ref['pool_gpus']} GPUs, ${ref['total_usd']:,.0f}): "
            f"saves ${item['saved_usd']:,.0f}{pct}, P95 wait +{item['added_p95_wait_hours']:.2f}"
            f" h, mean wait +{item['added_mean_wait_hours']:.2f} h")
        if item.get("note"):
            lines.append(f"    {item['note']}")
    return lines


def _write_report(command: BaseCommand, payload: dict[str, Any], out: Path) -> None:
    document = report_from_capacity(payload, subject_id=0,
                                    generated_at=timezone.now().isoformat(timespec="seconds"),
                                    stale_days=settings.PRICE_STALE_DAYS,
                                    stale_before=stale_before())
    try:
        report_write(document, out)
    except (ValueError, PdfUnavailableError) as exc:
        raise CommandError(f"report: {exc}") from None
    command.stderr.write(f"report written to {out}")
