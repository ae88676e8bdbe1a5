"""Rank serving configurations for a model, traffic and P99 targets over current prices."""

import json
import math
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from planner.purchase_mix.quota import UploadTooLargeError
from planner.serving.core.fields import SERVING_FIELDS, FieldError, parse_serving_input
from planner.serving.services import (
    calibration_note,
    request_log_read,
    serving_document,
    serving_plan_build,
)


class Command(BaseCommand):
    help = ("Rank GPUs, instances, parallel layouts (TP, PP, EP) and replicas that serve a "
            "model at a request rate within P99 TTFT/TPOT targets, by cost per month, with cost "
            "per million input and output tokens, predicted latencies and their P10-P90 bands, "
            "utilisation and kg CO2e per million tokens.")

    def add_arguments(self, parser: Any) -> None:
        for field in SERVING_FIELDS:
            flag = "--" + field.name.replace("_", "-")
            if field.kind == "choices":
                parser.add_argument(flag, nargs="+", default=None, help=field.help)
            else:
                parser.add_argument(flag, default=None, help=f"{field.label}. {field.help}")
        parser.add_argument("--request-log", default=None, metavar="CSV",
                            help="a request log (timestamp, input_tokens, output_tokens): sets "
                                 "the rate, the daily profile and the mean lengths")
        parser.add_argument("--top", type=int, default=10, help="options to print")
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        raw = {f.name: options[f.name] for f in SERVING_FIELDS if options[f.name] is not None}
        raw.setdefault("precision", "fp8")
        try:
            log = None
            if options["request_log"]:
                path = Path(options["request_log"])
                with path.open("rb") as stream:
                    log = request_log_read(stream, size_bytes=path.stat().st_size)
            checked = parse_serving_input(raw, request_log=log)
        except FieldError as exc:
            raise CommandError(f"--{exc.field.replace('_', '-')}: {exc}") from exc
        except (UploadTooLargeError, OSError) as exc:
            raise CommandError(f"--request-log: {exc}") from exc
        plan = serving_plan_build(request=checked.request,
                                  purchase_options=checked.purchase_options)
        top = plan.options[: max(options["top"], 1)]
        document = serving_document(checked, plan, top=len(top), with_curves=False)
        if options["json"]:
            self.stdout.write(json.dumps(document, indent=2))
            return
        self.stdout.write(f"{len(plan.options)} options from {plan.n_offers} offers")
        self.stdout.write(calibration_note())
        for o in top:
            (ttft_low, ttft_high), (tpot_low, tpot_high) = o.ttft_p99_ms_band, o.tpot_p99_ms_band
            self.stdout.write(
                f"{o.provider:8} {o.instance_type:24} {o.gpu:26} {o.layout.label} "
                f"x{o.replicas:<3} on {o.instances} instances  "
                f"${o.usd_per_month:>10,.0f}/month  ${o.usd_per_million_input_tokens:.3f} in "
                f"${o.usd_per_million_output_tokens:.3f} out per M tokens  "
                f"TTFT P99 {o.ttft_p99_ms:,.0f} ms (P10-P90 {ttft_low:,.0f}-{ttft_high:,.0f})  "
                f"TPOT P99 {o.tpot_p99_ms:.1f} ms (P10-P90 {tpot_low:.1f}-{tpot_high:.1f})  "
                f"util {o.utilisation:.0%}  replicas peak {o.replicas} trough "
                f"{o.replicas_at_trough}  price {o.price_source}, as of {o.price_as_of}, "
                f"{o.price_basis}")
        self._mix(document["mix"])

    def _mix(self, mix: dict[str, Any]) -> None:
        self.stdout.write("What to buy" + (f" for {mix['configuration']}:" if mix.get(
            "configuration") else ":"))
        if mix["is_available"] and not math.isnan(mix["mix_usd_per_month"]):
            self.stdout.write(f"  ${mix['mix_usd_per_month']:,.0f}/month for the mix, "
                              f"${mix['all_on_demand_usd_per_month']:,.0f}/month all on-demand")
        for line in mix["lines"]:
            self.stdout.write(f"  {line}")
