"""Load the GPU sheet, the shipped price snapshots and the grid-carbon table (idempotent)."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from pricing.carbon.services import carbon_load
from pricing.catalog_sources import DATA_DIR
from pricing.services import ImportSummary, catalog_load


def _line(label: str, summary: ImportSummary) -> str:
    text = (
        f"{label}: {summary.created} created, {summary.updated} updated, "
        f"{summary.unchanged} unchanged"
    )
    skipped = sum(summary.skipped.values())
    return text + (f", {skipped} source rows skipped" if skipped else "")


class Command(BaseCommand):
    help = ("Load gpus.csv, every price snapshot and the grid-carbon table in pricing/data; a "
            "second run changes nothing.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
        parser.add_argument(
            "--verbose-skips", action="store_true", help="list why source rows were skipped"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        report = catalog_load(data_dir=options["data_dir"])
        self.stdout.write(_line("accelerators", report.accelerators))
        for slug, summary in report.snapshots.items():
            self.stdout.write(_line(f"prices {slug}", summary))
            if options["verbose_skips"]:
                for reason, count in sorted(summary.skipped.items()):
                    self.stdout.write(f"    skipped {count}: {reason}")
        self.stdout.write(_line("derived commitment prices", report.derived))
        carbon = carbon_load(data_dir=options["data_dir"])
        self.stdout.write(_line("grid carbon intensities and PUEs", carbon))
