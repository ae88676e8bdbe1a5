"""Predict every row of reference-runs CSVs and print the error tables."""

from pathlib import Path
from typing import Any

import pandas as pd
from django.core.management.base import BaseCommand, CommandError

from simulator.core.envelope import ENVELOPE_GROUP_WORDS
from simulator.core.validation import single_factor_floor
from simulator.services import simulator_calibration_refit, simulator_validate_file

OUT_COLUMNS = [
    "run_id",
    "metric",
    "reported",
    "predicted",
    "predicted_p10",
    "predicted_p90",
    "abs_pct_error",
    "note",
    "envelope",
    "envelope_distance",
    "envelope_group",
    "envelope_note",
]
SUMMARY_COLUMNS = {
    "group": "group",
    "n_rows": "rows",
    "n_predicted": "predicted",
    "share_predicted": "predicted %",
    "median_ape": "median APE %",
    "p90_ape": "P90 APE %",
    "bias_pct": "bias %",
    "coverage": "P10-P90 cover %",
    "baseline_median_ape": "rule median APE %",
    "baseline_p90_ape": "rule P90 APE %",
}
ENVELOPE_HEADING = (
    " how far outside the calibration runs each row was when predicted ("
    + "; ".join(f"{group}: {words}" for group, words in ENVELOPE_GROUP_WORDS.items())
    + "); rows = the rows each group's coverage and band width rest on"
)
MODES = {"family": "leave-one-family-out", "source": "leave-one-source-out"}


def _summary_text(summary: pd.DataFrame) -> str:
    shown = summary[list(SUMMARY_COLUMNS)].rename(columns=SUMMARY_COLUMNS)
    shown["predicted %"] = shown["predicted %"] * 100
    shown["P10-P90 cover %"] = shown["P10-P90 cover %"] * 100
    shown["group"] = shown["group"].str.slice(0, 60)
    return shown.to_string(index=False, float_format=lambda v: f"{v:.1f}")


class Command(BaseCommand):
    help = (
        "Predict each row's metric of CSVs in the reference-runs schema; print rows predicted, "
        "median and P90 absolute % error, signed bias and P10-P90 coverage overall and by "
        "metric, GPU, precision, scale band and family, beside the 6·N·D at 40%-of-peak rule "
        "of thumb. --cv family refits leaving out one family at a time (out-of-family figures)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("files", type=Path, nargs="+")
        parser.add_argument("--out", type=Path, default=None, help="write PREDICTIONS.csv")
        parser.add_argument(
            "--loso",
            action="store_true",
            help="refit leaving out each source, predict that source's rows",
        )
        parser.add_argument(
            "--cv",
            choices=sorted(MODES),
            default=None,
            help="refit leaving out one family (or source) at a time",
        )
        parser.add_argument(
            "--write-calibration",
            type=Path,
            default=None,
            help="refit on FILES (bands from leave-one-family-out residuals) and write JSON here",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        paths: list[Path] = options["files"]
        for path in paths:
            if not path.is_file():
                raise CommandError(f"{path}: no such file")
        for option in ("out", "write_calibration"):
            if options[option] and not options[option].parent.is_dir():
                raise CommandError(f"--{option.replace('_', '-')}: no folder "
                                   f"{options[option].parent} to write {options[option].name} in")
        cv = options["cv"] or ("source" if options["loso"] else None)
        try:
            if options["write_calibration"]:
                fitted = simulator_calibration_refit(
                    paths=paths, out_path=options["write_calibration"]
                )
                self.stdout.write(
                    f"wrote calibration fitted on {fitted.n_rows} rows to "
                    f"{options['write_calibration']}"
                )
            report = simulator_validate_file(paths=paths, cv=cv)
        except ValueError as exc:
            raise CommandError(f"{', '.join(map(str, paths))}: {exc}") from None
        if options["out"]:
            report.predictions[OUT_COLUMNS].to_csv(options["out"], index=False)
            self.stdout.write(f"wrote {len(report.predictions)} predictions to {options['out']}")
        self._write_report(report.summary, report.predictions, MODES.get(cv or "", "shipped"))

    def _write_report(self, summary: pd.DataFrame, predictions: pd.DataFrame, mode: str) -> None:
        self.stdout.write(
            f"Error of the simulator ({mode} calibration) beside the rule of thumb "
            "(6·N·D at 40% of peak); bias = median signed % error:"
        )
        for group_by in summary["group_by"].unique():
            heading = ENVELOPE_HEADING if group_by == "envelope_group" else ""
            self.stdout.write(f"\nby {group_by}:{heading}")
            self.stdout.write(_summary_text(summary[summary["group_by"] == group_by]))
        floor = single_factor_floor(predictions, "whole-run")
        if floor is not None:
            self.stdout.write(
                f"\nwhole runs: published / predicted GPU-hours runs from {floor.ratio_low:.2f} "
                f"to {floor.ratio_high:.2f} over {floor.n_rows} runs; the one factor fitting them "
                f"best, chosen on them (x{floor.factor:.3f}), still leaves P90 "
                f"{floor.p90_ape:.1f}% (a floor for any goodput factor, not an accuracy figure)"
            )
        skipped = predictions[predictions["predicted"].isna()]
        if len(skipped):
            self.stdout.write(f"\n{len(skipped)} row(s) not predicted:")
            for row in skipped[["run_id", "note"]].itertuples(index=False):
                self.stdout.write(f"  {row.run_id}: {row.note}")
