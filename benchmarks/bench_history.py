"""Upload-to-recommendation for a synthetic 1,000,000-job history, through the service layer.

A child process runs what the upload view and the analysis task run (parse -> store ->
analyze -> recommend) so its peak RSS can be read from RUSAGE_CHILDREN; pyarrow.csv.read_csv
on the same file is the reference. Targets: under 10 s and under 2 GB.
"""

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.csv as pa_csv

from planner.purchase_mix.core.synthetic import write_synthetic_jobs_csv

N_JOBS = 1_000_000
ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 10.0
TARGET_GIB = 2.0


def _child(path: str) -> None:
    """Runs in the subprocess: one upload and its analysis run, then removes what it stored."""
    import django

    django.setup()
    from django.contrib.auth.models import User

    from planner.purchase_mix import services
    from planner.purchase_mix.tasks import analyze_run_task

    analyze_run_task.delay_on_commit = lambda *args, **kwargs: None  # the benchmark is the worker
    user = User.objects.create_user(f"bench-{os.getpid()}-{time.time_ns()}")
    started = time.perf_counter()
    with open(path, "rb") as handle:
        outcome = services.history_create(
            owner_id=user.pk, upload=handle, name="bench.csv", size_bytes=os.path.getsize(path),
            options=services.ParseOptions(fmt="generic"),
            run_options=services.RunOptions(provider="aws", region="us-east-1"),
        )
    stored = time.perf_counter()
    assert outcome.history is not None and outcome.run is not None, outcome.error
    analyze_run_task(outcome.run.pk)
    done = time.perf_counter()
    outcome.run.refresh_from_db()
    history = outcome.history
    for stored_file in (history.upload, history.parsed, history.demand):
        stored_file.delete(save=False)
    user.delete()
    print(json.dumps({
        "parse_store_s": stored - started, "analyze_recommend_s": done - stored,
        "status": outcome.run.status, "records": history.records,
    }))


def _run_child(path: Path) -> tuple[dict[str, float], float, float]:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c",
         f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
         f"from benchmarks.bench_history import _child; _child({str(path)!r})"],
        cwd=ROOT, capture_output=True, text=True, check=False,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "planner.settings"},
    )
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{result.stderr[-3000:]}")
    peak_gib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024**2
    return json.loads(result.stdout.strip().splitlines()[-1]), wall, peak_gib


def run() -> list[str]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "jobs.csv"
        write_synthetic_jobs_csv(path, N_JOBS, seed=1)
        size_mb = path.stat().st_size / 1024**2
        started = time.perf_counter()
        pa_csv.read_csv(path)
        arrow_s = time.perf_counter() - started
        timings, wall_s, peak_gib = _run_child(path)
    service_s = timings["parse_store_s"] + timings["analyze_recommend_s"]
    return [
        f"synthetic history: {N_JOBS:,} jobs, {size_mb:,.0f} MB CSV",
        f"pyarrow.csv.read_csv (reference)                      {arrow_s:6.2f} s",
        f"upload service: parse + store                          {timings['parse_store_s']:6.2f} s",
        f"task: analyze + recommend (aws us-east-1)              "
        f"{timings['analyze_recommend_s']:6.2f} s   run {timings['status']}",
        f"upload to recommendation                               {service_s:6.2f} s   "
        f"(target < {TARGET_SECONDS:.0f} s: {'ok' if service_s < TARGET_SECONDS else 'MISSED'})",
        f"child process wall time incl. Django start             {wall_s:6.2f} s",
        f"peak RSS of the child                                  {peak_gib:6.2f} GiB "
        f"(target < {TARGET_GIB:.0f} GiB: {'ok' if peak_gib < TARGET_GIB else 'MISSED'})",
    ]


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "planner.settings")
    print("\n".join(run()))
