"""Measured-runs CSVs for tests: published reference rows re-labelled as a user's own runs."""

import csv
import io
from pathlib import Path

RUNS_CSV = Path(__file__).resolve().parents[1] / "simulator" / "data" / "reference_runs.csv"


def reference_rows(kind: str = "resnet50", n_rows: int = 5) -> list[dict[str, str]]:
    """The first `n_rows` published rows of a workload kind, as CSV cells."""
    with RUNS_CSV.open(newline="", encoding="utf-8") as source:
        rows = [row for row in csv.DictReader(source) if row["workload_kind"] == kind]
    return rows[:n_rows]


def as_mine(rows: list[dict[str, str]], value_scale: float = 1.0) -> list[dict[str, str]]:
    """Reference rows under new run_ids, reported values scaled (0.7 = a slower cluster)."""
    return [
        {
            **row,
            "run_id": f"mine-{row['run_id']}",
            "value": f"{float(row['value']) * value_scale:g}",
        }
        for row in rows
    ]


def csv_bytes(rows: list[dict[str, str]], columns: list[str] | None = None) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns or list(rows[0]), extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()
