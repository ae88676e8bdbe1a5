"""Predict every row of serving-runs CSVs (inference_runs.csv columns) and print the error
tables beside the rule of thumb."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from simulator.core.serving.crossval import PREDICTION_COLUMNS
from simulator.serving import serving_calibration_write, serving_validate_files


def _table(frame: Any) -> str:
    return str(frame.to_string(index=False, float_format=lambda v: f"{v:.1f}"))


class Command(BaseCommand):
    help = (
        "Predict throughput (output tokens/s), TTFT and TPOT (ms) of each row of CSVs with the "
        "columns of simulator/data/inference_runs.csv; list rows that cannot be answered and "
        "why; print median/P90 absolute % error and P10-P90 band coverage per metric, and per "
        "source beside the rule of thumb (decode at HBM bandwidth, prefill at 40 % of peak). "
        "--cv source refits leaving out each source (out-of-source figures and bands)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("files", type=Path, nargs="+")
        parser.add_argument("--cv", choices=["source"], default=None)
        parser.add_argument("--out", type=Path, default=None, help="write PREDICTIONS.csv")
        parser.add_argument("--write-calibration", type=Path, default=None,
                            help="with --cv source: write the fit and bands (JSON)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["write_calibration"] and options["cv"] != "source":
            raise CommandError("--write-calibration needs --cv source (bands are out-of-source)")
        for path in options["files"]:
            if not path.is_file():
                raise CommandError(f"{path}: no such file")
        try:
            result = serving_validate_files(options["files"], cv=options["cv"],
                                            progress=self.stderr.write)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["out"]:
            result.predictions[list(PREDICTION_COLUMNS)].to_csv(options["out"], index=False)
            self.stdout.write(f"wrote {len(result.predictions)} predictions to {options['out']}")
        if options["write_calibration"]:
            serving_calibration_write(result, options["write_calibration"])
            self.stdout.write(f"wrote calibration to {options['write_calibration']}")
        self._print(result)

    def _print(self, result: Any) -> None:
        mode = "leave-one-source-out" if result.predictions.get("fold") is not None else (
            "shipped calibration; rows of the file it was fitted on, "
            "simulator/data/inference_runs.csv, give in-sample figures: --cv source for "
            "out-of-source ones")
        self.stdout.write(f"\nPredictions ({mode}): {len(result.predictions)}")
        self.stdout.write(f"Rows not answered: {len(result.unanswered)}")
        for reading in result.unanswered:
            self.stdout.write(f"  {reading.row_id}: {reading.reason}")
        partial = [(c.row_id, why) for c in result.cases for why in c.unanswered]
        if partial:
            self.stdout.write(f"Values not answered (the rest of the row is): {len(partial)}")
            for row_id, why in partial:
                self.stdout.write(f"  {row_id} {why}")
        summary = result.summary
        self.stdout.write("\nBy metric (absolute % error; band = P10-P90 coverage %):")
        self.stdout.write(_table(summary.by_metric))
        self.stdout.write("\nMLPerf Server P99 latency:")
        self.stdout.write(_table(summary.mlperf_server_latency))
        self.stdout.write("\nBy source, beside the rule of thumb (median absolute % error):")
        self.stdout.write(_table(summary.by_source))
