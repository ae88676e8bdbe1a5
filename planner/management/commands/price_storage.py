"""Price a team's checkpoint fleet per provider and tier policy (the storage what-if).

`--model name,checkpoint_gb,checkpoints_per_day` (repeat it), or `--example` for the field
report's fleet; the policies' settings as options; `--json` prints the API's document.
"""

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from planner.core.formatting import label, usd
from planner.storage.core.inputs import FIELD_REPORT_EXAMPLE, NUMBER_FIELDS
from planner.storage.services import storage_whatif


class Command(BaseCommand):
    help = "Price a checkpoint fleet on block volumes, object storage and tiered storage."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--model", action="append", default=[],
                            help="name,checkpoint_gb,checkpoints_per_day (repeat)")
        parser.add_argument("--example", action="store_true",
                            help="the field report's fleet (other options override it)")
        parser.add_argument("--providers", help="comma-separated (aws,gcp,azure)")
        for name, (text, unit, default, is_whole) in NUMBER_FIELDS.items():
            parser.add_argument(f"--{name.replace('_', '-')}", dest=name,
                                type=int if is_whole else float,
                                help=f"{text}{f' ({unit})' if unit else ''}; default "
                                     f"{default:g}".replace("%", "%%"))
        parser.add_argument("--json", action="store_true", help="print the JSON document")

    def handle(self, *args: Any, **options: Any) -> None:
        raw: dict[str, Any] = dict(FIELD_REPORT_EXAMPLE) if options["example"] else {}
        if options["model"]:
            raw["models"] = "\n".join(options["model"])
        raw |= {k: options[k] for k in (*NUMBER_FIELDS, "providers")
                if options.get(k) is not None}
        try:
            result = storage_whatif(raw=raw)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=1))
            return
        for policy in result["policies"]:
            total = usd(policy["total_usd_per_year"])
            self.stdout.write(f"{label(policy['provider']):<14} {total:>12}/year  "
                              f"{policy['saving_pct']:5.1f} % less  {policy['label']}")
        for line in result["assumptions"]:
            self.stdout.write(f"- {line}")
