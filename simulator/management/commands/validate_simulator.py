"""Predict every row of a reference-runs CSV and print the error table."""

from pathlib import Path
from typing import Any

import pandas as pd
from django.core.management.base import BaseCommand, CommandError

from simulator.services import simulator_validate_file

OUT_COLUMNS = [
    "run_id",
    "metric",
    "reported",
    "predicted",
    "predicted_p10",
    "predicted_p90",
    "abs_pct_error",
    "note",
]


def _summary_text(summary: pd.DataFrame) -> str:
    columns = {
        "group_by": "by",
        "group": "group",
        "n_rows": "rows",
        "share_predicted": "predicted %",
        "median_ape": "median APE %",
        "p90_ape": "P90 APE %",
        "baseline_median_ape": "rule median APE %",
        "baseline_p90_ape": "rule P90 APE %",
    }
    shown = summary[list(columns)].rename(columns=columns)
    shown["predicted %"] = shown["predicted %"] * 100
    return shown.to_string(index=False, float_format=lambda v: f"{v:.1f}")


class Command(BaseCommand):
    help = (
        "Predict each row's metric of a CSV in the reference-runs schema; print median and "
        "P90 absolute % error overall and by GPU, metric and workload kind, beside the "
        "6·N·D at 40%-of-peak rule of thumb."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--out", type=Path, default=None, help="write PREDICTIONS.csv")
        parser.add_argument(
            "--loso",
            action="store_true",
            help="refit leaving out each source, predict that source's rows",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            report = simulator_validate_file(path=path, loso=options["loso"])
        except ValueError as exc:
            raise CommandError(f"{path}: {exc}") from None
        if options["out"]:
            report.predictions[OUT_COLUMNS].to_csv(options["out"], index=False)
            self.stdout.write(f"wrote {len(report.predictions)} predictions to {options['out']}")
        mode = "leave-one-source-out" if options["loso"] else "shipped calibration"
        self.stdout.write(f"Absolute percentage error ({mode}; rule = 6·N·D at 40% of peak):")
        self.stdout.write(_summary_text(report.summary))
