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
from typing import Any

import pyarrow.csv as pa_csv

from planner.purchase_mix.core.synthetic import write_synthetic_jobs_csv

SIZES = (1_000_000, 10_000_000)
ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 10.0
TARGET_GIB = 2.0


def _peak_gib() -> float:
    """This process's peak RSS (VmHWM). Not ru_maxrss: Linux keeps that across execve, so a
    child started from the large benchmark parent would report the parent's size."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024**2
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def _upload_child(path: str) -> None:
    """Subprocess 1, the web process: one upload (parse, store, queue the run)."""
    import django

    django.setup()
    from django.contrib.auth.models import User

    from planner.purchase_mix import services
    from planner.purchase_mix.tasks import analyze_run_task

    analyze_run_task.apply_async = lambda *args, **kwargs: None  # subprocess 2 is the worker
    user = User.objects.create_user(f"bench-{os.getpid()}-{time.time_ns()}")
    started = time.perf_counter()
    with open(path, "rb") as handle:
        outcome = services.history_create(
            owner_id=user.pk, upload=handle, name="bench.csv", size_bytes=os.path.getsize(path),
            options=services.ParseOptions(fmt="generic"),
            run_options=services.RunOptions(provider="aws", region="us-east-1"),
        )
    assert outcome.history is not None and outcome.run is not None, outcome.error
    print(json.dumps({"seconds": time.perf_counter() - started, "run_id": outcome.run.pk,
                      "records": outcome.history.records, "peak_gib": _peak_gib()}))


def _task_child(run_id: int) -> None:
    """Subprocess 2, the worker: the analysis run; then removes what the upload stored."""
    import django

    django.setup()
    from planner.purchase_mix.models import AnalysisRun
    from planner.purchase_mix.tasks import analyze_run_task

    started = time.perf_counter()
    analyze_run_task(run_id)
    seconds = time.perf_counter() - started
    run = AnalysisRun.objects.select_related("history__owner").get(pk=run_id)
    history = run.history
    for stored_file in (history.upload, history.parsed, history.demand):
        stored_file.delete(save=False)
    history.owner.delete()
    print(json.dumps({"seconds": seconds, "status": run.status, "peak_gib": _peak_gib()}))


def _run_child(call: str, upload_bytes: int) -> tuple[dict[str, Any], float]:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c",
         f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
         f"from benchmarks import bench_history; bench_history.{call}"],
        cwd=ROOT, capture_output=True, text=True, check=False,
        # The 10M-job file (~800 MB) is over the default 200 MB upload limit; lift it here.
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "planner.settings",
             "UPLOAD_MAX_BYTES": str(max(upload_bytes + 1, 200 * 1024**2))},
    )
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1]), wall


def _ok(is_ok: bool) -> str:
    return "ok" if is_ok else "MISSED"


def _one(n_jobs: int) -> list[str]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "jobs.csv"
        write_synthetic_jobs_csv(path, n_jobs, seed=1)
        size = path.stat().st_size
        arrow_s = None
        if n_jobs <= 1_000_000:
            started = time.perf_counter()
            pa_csv.read_csv(path)
            arrow_s = time.perf_counter() - started
        upload, upload_wall = _run_child(f"_upload_child({str(path)!r})", size)
    task, task_wall = _run_child(f"_task_child({upload['run_id']})", size)
    total_s = upload["seconds"] + task["seconds"]
    peak = max(upload["peak_gib"], task["peak_gib"])
    lines = [f"synthetic history: {n_jobs:,} jobs, {size / 1024**2:,.0f} MB CSV"]
    if arrow_s is not None:
        lines.append(f"pyarrow.csv.read_csv (reference)                      {arrow_s:6.2f} s")
    note = f"(target < {TARGET_SECONDS:.0f} s: {_ok(total_s < TARGET_SECONDS)})"
    return [
        *lines,
        f"upload service: parse + store (web process)            {upload['seconds']:6.2f} s   "
        f"peak RSS {upload['peak_gib']:.2f} GiB",
        f"task: analyze + recommend, aws us-east-1 (worker)      {task['seconds']:6.2f} s   "
        f"peak RSS {task['peak_gib']:.2f} GiB   run {task['status']}",
        f"upload to recommendation                               {total_s:6.2f} s   "
        + (note if n_jobs <= 1_000_000 else ""),
        f"wall time of both processes incl. Django start         "
        f"{upload_wall + task_wall:6.2f} s",
        f"peak RSS of either process                             {peak:6.2f} GiB "
        f"(target < {TARGET_GIB:.0f} GiB: {_ok(peak < TARGET_GIB)})",
    ]


def run() -> list[str]:
    only = os.environ.get("BENCH_HISTORY_JOBS")
    sizes = (int(only),) if only else SIZES
    return [line for n_jobs in sizes for line in _one(n_jobs)]


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "planner.settings")
    print("\n".join(run()))
