"""Recommend a GPU purchase mix for a job-history file (nothing is stored)."""

import json
import re
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from planner.core.formatting import label
from planner.management.inputs import job_file, report_path
from planner.purchase_mix import services
from planner.purchase_mix.core.upload.parsing import parse_column_mapping
from planner.purchase_mix.core.upload.settings import UPLOAD_SETTINGS, UploadSetting
from planner.purchase_mix.documents import parse_growth
from planner.reports.core.purchase_mix import report_from_history
from planner.reports.services import PdfUnavailableError, report_write
from pricing.selectors import stale_before

# A value such as "-50,-25,0,25" (--growth's own default) is a value, not an option: argparse
# takes an argument starting with "-" for an option unless it matches this (by default one
# negative number only).
NEGATIVE_NUMBERS = re.compile(r"^-\.?\d[\d.]*(,\s*[-+]?\.?\d[\d.]*)*$")


def _flag(setting: UploadSetting) -> list[str]:
    return [f"--{setting.name.replace('_', '-')}"]


def _argument(setting: UploadSetting) -> dict[str, Any]:
    """argparse options of an upload setting (argparse %-formats help: "%" doubled)."""
    text = (setting.help or setting.label).replace("%", "%%")
    if setting.kind == "flag":
        return {"action": "store_true", "help": text}
    if setting.kind == "choice":
        return {"default": setting.default, "choices": list(setting.values), "help": text}
    return {"default": setting.default, "help": text}


class Command(BaseCommand):
    help = "Print the purchase-mix recommendation for a job history (--json: the API document)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("file", type=Path)
        for setting in UPLOAD_SETTINGS:
            parser.add_argument(*_flag(setting), **_argument(setting))
        parser.add_argument("--no-elsewhere", action="store_true",
                            help="the default; kept for scripts that pass it")
        parser.add_argument("--lookback-days", type=int, default=None)
        parser.add_argument("--json", action="store_true", help="print the API document")
        parser.add_argument("--report", type=Path, metavar="PATH",
                            help="also write the report (.pdf, .xlsx, .csv or .html)")
        parser._negative_number_matcher = NEGATIVE_NUMBERS  # --growth -50,-25,0,25

    def handle(self, *args: Any, **options: Any) -> None:
        path = job_file(options["file"])
        report_path(options["report"])
        try:
            mapping = parse_column_mapping(options["map"])
            fmt = "mapped" if mapping and options["format"] == "generic" else options["format"]
            payload = services.file_document(
                path,
                options=services.ParseOptions(
                    fmt=fmt, column_map=mapping, time_unit=options["time_unit"],
                    origin=options["origin"], default_gpu_type=options["gpu_type"],
                    is_skipping_bad_rows=options["skip_bad_rows"],
                    duplicate_ids=options["duplicate_ids"],
                ),
                run_options=services.RunOptions(
                    provider=options["provider"], region=options["region"],
                    lookback_days=options["lookback_days"],
                    growth_scenarios=parse_growth(options["growth"]),
                    is_spot_alternative=options["spot_alternative"],
                    is_elsewhere_alternative=(options["elsewhere_alternative"]
                                              and not options["no_elsewhere"]),
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
    buy = document["what_to_buy"]
    lines = ["What to buy:"]
    for line in buy["lines"]:  # the buying rule's one line, as every page and report
        lines.append(f"  {line['sentence']}; starting {line['starting']}")
    if buy["lines"]:
        lines.append(f"  total: upfront ${buy['upfront_usd']:,.0f}, "
                     f"${buy['usd_per_hour']:,.2f}/hour")
    if not buy["lines"]:
        lines.append("  nothing to commit (reasons below); run everything without commitment")
    for item in buy["types"]:
        lines.extend(_type_lines(item))
    for name, reason in document["unpriced"].items():
        lines.append(f"{name}: not priced ({reason})")
    replay = buy["replay"]["total"]
    lines.append(
        f"What to buy, replayed on your history: ${replay['cost_usd']:,.0f} against "
        f"${replay['all_on_demand_cost_usd']:,.0f} all on demand, savings "
        f"${replay['savings_usd']:,.0f} ({_pct(replay['savings_pct'])})"
    )
    hindsight = document["hindsight_reference"]
    lines.append(
        f"Hindsight reference (what you would have bought knowing the future; not a "
        f"recommendation): ${hindsight['hourly_commitment_usd']:,.2f}/hour committed, savings "
        f"${hindsight['total']['savings_usd']:,.0f} ({_pct(hindsight['total']['savings_pct'])})"
    )
    lines.extend(backtest_lines(document.get("backtest")))
    return lines


def _type_lines(item: dict[str, Any]) -> list[str]:
    sizing = item["sizing"]
    alt = item["alternative"]
    offer = item["offer"]
    lines = [
        f"{item['gpu_type']}: {label(offer['provider'])} {offer['region']} "
        f"{offer['instance_type']} ({offer['gpus_per_instance']} GPUs, on-demand "
        f"${offer['on_demand_usd_per_hour']:,.2f}/h)"
        f"; baseline without commitment ${alt['usd_per_hour']:,.3f}"
        f"/hour per instance ({alt['words']}); spot {item['spot_share_pct']:.0f}%, committed "
        f"{item['committed_share_pct']:.0f}%, on-demand {item['on_demand_share_pct']:.0f}% of "
        f"GPU-hours in the replay; first-year savings, worst case (mean of the worst 10%) "
        f"${sizing['first_year_worst_case_usd']:,.0f}"
    ]
    if item.get("elsewhere"):
        lines.append(f"  elsewhere: {item['elsewhere']['words']}")
    gate_reasons = tuple(sizing["gate"]["reasons"])
    for choice in sizing["choices"]:
        status = f"{choice['count']} instances" if choice["count"] else "none"
        lines.append(
            f"  {choice['term_words']}, {choice['payment_words']}: break-even utilisation "
            f"{choice['break_even_utilization_pct']:.0f}%, {status}"
            + (f" ({choice['reason']})" if choice["reason"] not in ("", *gate_reasons) else "")
        )
    lines.extend(f"  why nothing is committed: {reason}" for reason in sizing["reasons"])
    return lines


def backtest_lines(backtest: dict[str, Any] | None) -> list[str]:
    if not backtest:
        return ["Backtest: the history is too short to split."]
    lines = [
        f"Backtest: fit on the first {backtest['train_hours']} h, cost on the last "
        f"{backtest['test_hours']} h (USD)",
        f"  {'strategy':<52} {'test cost':>12} {'savings':>12} {'regret':>12} "
        f"{'whole-term':>14} {'regret':>12}",
    ]
    for row in backtest["strategies"]:
        lines.append(
            f"  {row['words']:<52} {row['test_cost_usd']:>12,.0f} "
            f"{row['savings_vs_on_demand_usd']:>12,.0f} {row['regret_usd']:>12,.0f} "
            f"{row['whole_term_cost_usd']:>14,.0f} {row['whole_term_regret_usd']:>12,.0f}"
        )
    return lines


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}%"

def _write_report(command: BaseCommand, payload: dict[str, Any], out: Path) -> None:
    document = report_from_history(payload, subject_id=0,
                                   generated_at=timezone.now().isoformat(timespec="seconds"),
                                   stale_days=settings.PRICE_STALE_DAYS,
                                   stale_before=stale_before())
    try:
        report_write(document, out)
    except (ValueError, PdfUnavailableError) as exc:
        raise CommandError(f"report: {exc}") from None
    command.stderr.write(f"report written to {out}")
