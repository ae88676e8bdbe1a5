"""Upload-to-recommendation for synthetic 1,000,000- and 10,000,000-job histories, through the
service layer.

A child process per size runs what the upload view and the analysis task run (parse -> store ->
analyze -> recommend, including the risk sizing and the backtest) and reports its own peak RSS;
pyarrow.csv.read_csv on the 1M file is the reference. Targets: 1M jobs under 10 s from upload,
10M jobs under 2 GiB peak RSS. BENCH_HISTORY_JOBS=1000000 runs one size only.
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

SIZES = (1_000_000, 10_000_000)
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
        "peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2,
    }))


def _run_child(path: Path) -> tuple[dict[str, float], float, float]:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c",
         f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
         f"from benchmarks.bench_history import _child; _child({str(path)!r})"],
        cwd=ROOT, capture_output=True, text=True, check=False,
        # The 10M-job file (~800 MB) is over the default 200 MB upload limit; lift it here.
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "planner.settings",
             "UPLOAD_MAX_BYTES": str(max(path.stat().st_size + 1, 200 * 1024**2))},
    )
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{result.stderr[-3000:]}")
    timings = json.loads(result.stdout.strip().splitlines()[-1])
    return timings, wall, float(timings["peak_gib"])


def _one(n_jobs: int) -> list[str]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "jobs.csv"
        write_synthetic_jobs_csv(path, n_jobs, seed=1)
        size_mb = path.stat().st_size / 1024**2
        arrow_s = None
        if n_jobs <= 1_000_000:
            started = time.perf_counter()
            pa_csv.read_csv(path)
            arrow_s = time.perf_counter() - started
        timings, wall_s, peak_gib = _run_child(path)
    service_s = timings["parse_store_s"] + timings["analyze_recommend_s"]
    lines = [f"synthetic history: {n_jobs:,} jobs, {size_mb:,.0f} MB CSV"]
    if arrow_s is not None:
        lines.append(f"pyarrow.csv.read_csv (reference)                      {arrow_s:6.2f} s")
    time_note = ""
    if n_jobs <= 1_000_000:
        verdict = "ok" if service_s < TARGET_SECONDS else "MISSED"
        time_note = f"(target < {TARGET_SECONDS:.0f} s: {verdict})"
    return [
        *lines,
        f"upload service: parse + store                          {timings['parse_store_s']:6.2f} s",
        f"task: analyze + recommend (aws us-east-1)              "
        f"{timings['analyze_recommend_s']:6.2f} s   run {timings['status']}",
        f"upload to recommendation                               {service_s:6.2f} s   {time_note}",
        f"child process wall time incl. Django start             {wall_s:6.2f} s",
        f"peak RSS of the child                                  {peak_gib:6.2f} GiB "
        f"(target < {TARGET_GIB:.0f} GiB: {'ok' if peak_gib < TARGET_GIB else 'MISSED'})",
    ]


def run() -> list[str]:
    only = os.environ.get("BENCH_HISTORY_JOBS")
    sizes = (int(only),) if only else SIZES
    return [line for n_jobs in sizes for line in _one(n_jobs)]


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "planner.settings")
    print("\n".join(run()))
