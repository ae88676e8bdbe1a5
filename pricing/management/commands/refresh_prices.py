"""Download current prices from the providers' public price services and import them."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from pricing.importers import PriceFileErrors
from pricing.refresh import PROVIDERS, RefreshError, prices_refresh


class Command(BaseCommand):
    help = ("Fetch current prices (AWS Price List, Azure Retail Prices, GCP Cloud Billing "
            "Catalog) and import them; a second run the same day changes nothing.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--provider", choices=PROVIDERS, action="append",
                            help="repeat for several; default: every provider")
        parser.add_argument("--region", default="",
                            help="one region code (default: each provider's default regions)")

    def handle(self, *args: Any, **options: Any) -> None:
        failures = []
        for provider in options["provider"] or PROVIDERS:
            try:
                reports = prices_refresh(provider=provider, region=options["region"])
            except (RefreshError, PriceFileErrors) as exc:
                failures.append(f"{provider}: nothing imported. {exc}")
                continue
            for report in reports:
                summary = report.summary
                self.stdout.write(
                    f"{provider} {report.region or 'all regions'}: {summary.created} created, "
                    f"{summary.updated} updated, {summary.unchanged} unchanged "
                    f"({report.source})")
                for reason, count in sorted(summary.skipped.items()):
                    self.stdout.write(f"  skipped {count}: {reason}")
        if failures:
            raise CommandError("\n".join(failures))
