"""Import one price file in a provider's format."""

import argparse
from datetime import date
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from pricing.importers import PriceFileErrors
from pricing.importers.registry import FORMATS
from pricing.services import prices_import_file


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        # argparse turns this into a usage error; a CommandError here escaped as a traceback.
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


class Command(BaseCommand):
    help = "Import a price file: --format FORMAT FILE [--as-of YYYY-MM-DD] [--dry-run]"

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--format", required=True, choices=sorted(FORMATS))
        parser.add_argument(
            "--as-of",
            type=_date,
            default=None,
            help="date the prices were observed (required for undated formats)",
        )
        parser.add_argument(
            "--provider",
            default=None,
            help="skypilot format: cloud of the file (inferred when omitted)",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="parse and count, then roll back: nothing is written",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            summary = prices_import_file(
                fmt=options["format"],
                path=path,
                as_of=options["as_of"],
                provider=options["provider"],
                dry_run=options["dry_run"],
            )
        except PriceFileErrors as exc:
            raise CommandError(f"{path}: nothing imported. {exc}") from None
        verb = "would be" if options["dry_run"] else "were"
        self.stdout.write(
            f"{path.name}: {summary.created} prices {verb} created, {summary.updated} updated, "
            f"{summary.unchanged} unchanged"
        )
        for reason, count in sorted(summary.skipped.items()):
            self.stdout.write(f"  skipped {count} row(s): {reason}")
