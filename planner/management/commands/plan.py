"""Plan a training run from the command line: rank every catalog configuration by cost.

Every scenario field (planner.plans.core.fields) is an option: `--tokens`, `--deadline-days`,
`--dataset-gb`, `--checkpoint-gb`, `--egress-gb`...; lists are comma-separated.
"""

import argparse
import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from planner.core.formatting import goodput_parts, layout_label
from planner.management.inputs import report_path
from planner.plans.core.fields import SCENARIO_FIELDS, ScenarioField
from planner.plans.core.ranking import collapse_regions
from planner.plans.reports import FIELD_LABELS, FIELD_UNITS
from planner.plans.scenario import scenario_from_input
from planner.plans.services import plan_compute
from planner.reports.core.plan_levers import lever_lines
from planner.reports.core.plan_report import OPTION_COLUMNS, option_cell, report_from_plan
from planner.reports.services import PdfUnavailableError, report_write

# The terminal's columns: the plan report's, those marked for it (one column table).
TERMINAL_COLUMNS = tuple(c for c in OPTION_COLUMNS if c.is_in_terminal)
# Short spellings kept from earlier releases.
ALIASES = {"purchase_options": ["--purchase"]}


def _rows(text: str) -> int:
    # argparse makes this a usage error; --top -5 printed all rows but 5, --top 0 none.
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of rows from 1")
    return int(text)


def _option(field: ScenarioField) -> tuple[list[str], dict[str, Any]]:
    flags = [f"--{field.name.replace('_', '-')}", *ALIASES.get(field.name, [])]
    # Numbers are read by the scenario checker, so "2T" and "500B" work as on the form.
    types = {"number": str, "integer": int}
    help_text = field.label + (f"; {field.range_text}" if field.range_text else "")
    if field.kind in ("choices", "bands"):
        help_text += " (comma-separated)"
    # argparse %-formats help text: a literal "%" (e.g. "% of instances") must be doubled.
    return flags, {"dest": field.name, "type": types.get(field.kind, str),
                   "help": help_text.replace("%", "%%")}


class Command(BaseCommand):
    help = "Rank catalog configurations for a training workload by cost and time."

    def add_arguments(self, parser: Any) -> None:
        for field in SCENARIO_FIELDS:
            flags, options = _option(field)
            if field.kind == "flag":
                options = {"dest": field.name, "action": "store_true", "default": None,
                           "help": field.label.replace("%", "%%")}
            parser.add_argument(*flags, **options)
        parser.add_argument("--top", type=_rows, default=20, help="rows to print")
        parser.add_argument("--json", action="store_true",
                            help="print the same document as GET /api/plans/{id}")
        parser.add_argument("--report", metavar="PATH",
                            help="also write the report (.pdf, .xlsx, .csv or .html)")

    def handle(self, *args: Any, **options: Any) -> None:
        raw = {f.name: options[f.name] for f in SCENARIO_FIELDS if options.get(f.name) is not None}
        report_path(Path(options["report"]) if options["report"] else None)
        try:
            scenario = scenario_from_input(raw, today=timezone.now().date())
            result = plan_compute(scenario=scenario, owner_id=None)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if options["report"]:
            self._write_report(result, scenario.data, Path(options["report"]))
        if options["json"]:
            document = {"id": None, "name": "", "status": "done", "progress_pct": 100.0,
                        "progress_message": "done", "error": "", "inputs": scenario.data,
                        "result": result}
            self.stdout.write(json.dumps(document, indent=1, default=str))
            return
        self._print_table(result, options["top"])

    def _write_report(self, result: dict[str, Any], inputs: dict[str, Any], path: Path) -> None:
        document = report_from_plan(result, inputs=inputs, name=inputs.get("name") or "",
                                    subject_id=0, generated_at=timezone.now().isoformat(),
                                    labels=FIELD_LABELS, units=FIELD_UNITS)
        try:
            report_write(document, path)
        except (ValueError, PdfUnavailableError) as exc:
            raise CommandError(f"report: {exc}") from None
        self.stderr.write(f"report written to {path}")

    def _print_table(self, result: dict[str, Any], top: int) -> None:
        by_index = {o.get("row_index"): o for o in result["options"]}
        for card in result["recommendations"]:
            self.stdout.write(f"{card['title']}: {card['why']}")
            option = by_index.get(card.get("row_index"))
            if option:
                self.stdout.write(f"  {layout_label(option)}; {goodput_parts(option)}")
        profile = result.get("goodput_profile")
        if profile:
            self.stdout.write(f"Goodput profile: {profile['label']}: {profile['meaning']}."
                              + "".join(f"\n  Source: {s}" for s in profile["sources"]))
        if result.get("decision_rule"):
            self.stdout.write(str(result["decision_rule"]))
        for line in lever_lines(result):
            self.stdout.write(line)
        for note in result.get("run_defaults", []):
            self.stdout.write(f"Default: {note}")
        dates = result.get("prices") or {}
        if dates.get("oldest"):
            self.stdout.write(
                f"Prices as of {dates['oldest']} to {dates['newest']} (oldest "
                f"{dates['oldest_age_days']:,} days old; {dates['n_stale']:,} options use a "
                "stale price)"
                + ("; the plan mixes snapshots more than 30 days apart" if dates["is_mixed"]
                   else ""))
        rows = collapse_regions([r for r in result["options"] if r.get("rank")])[:top]
        self.stdout.write("  ".join(f"{c.header:>14}" for c in TERMINAL_COLUMNS))
        for row in rows:
            cells = [_cell(option_cell(row, c.key)) for c in TERMINAL_COLUMNS]
            extra = f"  also in {len(row['other_regions'])} regions" if row["other_regions"] else ""
            if row.get("rate_note"):
                extra += f"  ({row['rate_note']})"
            if row.get("envelope_note"):
                extra += f"  ({row['envelope_note']})"
            self.stdout.write("  ".join(f"{cell:>14}" for cell in cells) + extra)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 10 else f"{value:,.0f}"
    return str(value)
