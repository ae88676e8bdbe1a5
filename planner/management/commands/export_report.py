"""Export a stored plan's or purchase-mix analysis's report to a file.

    python manage.py export_report plan|history ID --format pdf|xlsx|csv|html --out FILE

`history ID` reports the history's latest finished analysis.
"""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from planner.plans import reports as plan_reports
from planner.plans.models import PlanScenario
from planner.reports import services as report_services
from planner.reports.core.model import Report as ReportDocument


def _document(kind: str, subject_id: int) -> ReportDocument:
    if kind == "plan":
        scenario = PlanScenario.objects.filter(pk=subject_id).first()
        if scenario is None:
            raise ValueError(f"id: no plan {subject_id}")
        return plan_reports.plan_report(scenario=scenario)
    from planner.purchase_mix import reports as mix_reports

    return mix_reports.history_report(history_id=subject_id, owner_id=None)


class Command(BaseCommand):
    help = "Write the report of a plan or a job history's analysis as PDF, XLSX, CSV or HTML."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("kind", choices=["plan", "history"])
        parser.add_argument("id", type=int)
        parser.add_argument("--format", dest="fmt", choices=report_services.FORMATS,
                            help="default: from the --out file's extension")
        parser.add_argument("--out", required=True, help="the file to write")

    def handle(self, *args: Any, **options: Any) -> None:
        out = Path(options["out"])
        try:
            fmt = report_services.report_format(options["fmt"] or out.suffix or "(none)")
            rendered = report_services.report_render(_document(options["kind"], options["id"]),
                                                     fmt)
            report_services.report_save(rendered, out)
        except (ValueError, report_services.PdfUnavailableError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"wrote {out} ({len(rendered.content):,} bytes, {fmt})")
