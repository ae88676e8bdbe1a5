"""Recommend a GPU purchase mix for a job-history file (nothing is stored)."""

import json
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from planner.purchase_mix import services
from planner.purchase_mix.core.upload.parsing import parse_column_mapping
from planner.reports.core.purchase_mix import report_from_history
from planner.reports.services import PdfUnavailableError, report_write


class Command(BaseCommand):
    help = "Print the purchase-mix recommendation for a job history (--json: the API document)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--format", default="generic",
                            choices=["generic", "slurm", "usage", "mapped"])
        parser.add_argument("--map", default="", help="FIELD=COLUMN,... (implies mapped)")
        parser.add_argument("--time-unit", default="", choices=["", "s", "min", "h"])
        parser.add_argument("--origin", default="", help="timestamp numeric times count from")
        parser.add_argument("--gpu-type", default="", help="GPU type for rows that name none")
        parser.add_argument("--skip-bad-rows", action="store_true")
        parser.add_argument("--provider", default="", help="blank: cheapest where offered")
        parser.add_argument("--region", default="", help="blank: any region")
        parser.add_argument("--lookback-days", type=int, default=None)
        parser.add_argument("--json", action="store_true", help="print the API document")
        parser.add_argument("--report", type=Path, metavar="PATH",
                            help="also write the report (.pdf, .xlsx, .csv or .html)")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            mapping = parse_column_mapping(options["map"])
            fmt = "mapped" if mapping and options["format"] == "generic" else options["format"]
            payload = services.file_document(
                path,
                options=services.ParseOptions(
                    fmt=fmt, column_map=mapping, time_unit=options["time_unit"],
                    origin=options["origin"], default_gpu_type=options["gpu_type"],
                    is_skipping_bad_rows=options["skip_bad_rows"],
                ),
                run_options=services.RunOptions(
                    provider=options["provider"], region=options["region"],
                    lookback_days=options["lookback_days"],
                ),
            )
        except ValueError as error:
            raise CommandError(f"{path}: {error}") from error
        if options["report"]:
            _write_report(self, payload, options["report"])
        if options["json"]:
            self.stdout.write(json.dumps(payload, indent=1))
        else:
            self.stdout.write("\n".join(summary_lines(payload["document"])))


def summary_lines(document: dict[str, Any]) -> list[str]:
    rec = document["recommendation"]
    total = rec["total"]
    lines = []
    for plan in rec["plans"]:
        offer = plan["offer"]
        lines.append(
            f"{offer['gpu_type']}: {offer['provider']} {offer['region']} {offer['instance_type']} "
            f"({offer['gpus_per_instance']} GPUs, "
            f"on-demand ${offer['on_demand_usd_per_hour']:.2f}/h)"
        )
        for item in plan["commitments"]:
            lines.append(
                f"  commit {item['instances']} x {item['term']} = {item['gpus']} GPUs, "
                f"${item['hourly_commitment_usd']:,.2f}/h, ${item['total_commitment_usd']:,.0f} "
                f"over the term, break-even {item['break_even_utilization_pct']:.0f}% utilization"
            )
        is_spot = plan["decision"]["is_spot"]
        lines.append(f"  spot for interruptible jobs: {'yes' if is_spot else 'no'}")
    for name, reason in document["unpriced"].items():
        lines.append(f"{name}: not priced ({reason})")
    lines.append(
        f"Total: ${total['cost_usd']:,.0f} vs ${total['all_on_demand_cost_usd']:,.0f} all on-demand"
        f" (savings ${total['savings_usd']:,.0f}, {_pct(total['savings_pct'])}); hourly commitment"
        f" ${rec['hourly_commitment_usd']:,.2f}/h; coverage {_pct(total['coverage_pct'])}, "
        f"utilization {_pct(total['utilization_pct'])}"
    )
    return lines


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}%"

def _write_report(command: BaseCommand, payload: dict[str, Any], out: Path) -> None:
    document = report_from_history(payload, subject_id=0,
                                   generated_at=timezone.now().isoformat(timespec="seconds"))
    try:
        report_write(document, out)
    except (ValueError, PdfUnavailableError) as exc:
        raise CommandError(f"report: {exc}") from None
    command.stderr.write(f"report written to {out}")
