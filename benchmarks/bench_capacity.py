"""capacity_plan on a synthetic 1,000,000-job history: 30 pool sizes x 3 waiting policies
(none, constant and size_aware at T = 2 h, fifo) from the file to the recommendation.

A child process runs the command as a user would (parse, prices and the no-wait commitment,
the sweep on this machine's cores, the recommendation) and reports its wall time and its own
peak RSS. Targets: under 60 s and under 2 GiB on the 2-core machine. All jobs are one GPU type
(A100-80GB), so the whole million is swept. BENCH_CAPACITY_JOBS changes the size.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pa_csv

from planner.purchase_mix.core.synthetic import synthetic_jobs_table

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 60.0
TARGET_GIB = 2.0
CHILD = """
import io, json, os, resource, sys, time
import django
django.setup()
from django.core.management import call_command
started = time.perf_counter()
out = io.StringIO()
call_command("capacity_plan", sys.argv[1], "--json", stdout=out)
seconds = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_SELF)
payload = json.loads(out.getvalue())
with open("/proc/self/status") as status:
    peak = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:")) / 1024**2
print(json.dumps({
    "seconds": seconds, "peak_gib": peak, "cpu_seconds": usage.ru_utime + usage.ru_stime,
    "points": len(payload["points"]), "jobs": payload["jobs"],
    "threads": len(os.sched_getaffinity(0)), "recommended": payload["recommended"],
    "peak_gpus": payload["peak_gpus"]}))
"""


def _write(path: Path, n_jobs: int) -> None:
    table = synthetic_jobs_table(n_jobs, seed=23, days=365)
    one_type = pa.array(["A100-80GB"] * n_jobs)
    table = table.set_column(table.schema.get_field_index("gpu_type"), "gpu_type", one_type)
    pa_csv.write_csv(table, str(path))


def _child(path: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", CHILD, str(path)], cwd=ROOT, check=True,
                          capture_output=True, text=True, timeout=900)
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def run() -> list[str]:
    n_jobs = int(os.environ.get("BENCH_CAPACITY_JOBS", "1000000"))
    with tempfile.TemporaryDirectory() as folder:
        small, path = Path(folder) / "small.csv", Path(folder) / "jobs.csv"
        _write(small, 10_000)
        _write(path, n_jobs)
        # The simulator's loop is compiled on its first call and cached on disk (numba).
        first = _child(small)
        found = _child(path)
    best = found["recommended"]
    ok_time = "meets" if found["seconds"] < TARGET_SECONDS else "MISSES"
    ok_memory = "meets" if found["peak_gib"] < TARGET_GIB else "MISSES"
    return [
        f"capacity_plan, {found['jobs']:,} jobs, {found['points']} points (30 pool sizes x "
        f"none/constant/size_aware, fifo, T = 2 h), {os.cpu_count()} cores",
        f"  file to recommendation: {found['seconds']:.1f} s ({ok_time} the {TARGET_SECONDS:.0f}"
        f" s target), peak RSS {found['peak_gib']:.2f} GiB ({ok_memory} {TARGET_GIB:.0f} GiB)",
        f"  CPU time {found['cpu_seconds']:.1f} s on {found.get('threads', 1)} threads (load "
        f"average {os.getloadavg()[0]:.1f} while it ran: other work slows the wall time)",
        f"  no-wait peak {found['peak_gpus']:,} GPUs; recommended {best['pool_gpus']:,} GPUs, "
        f"{best['policy']}, ${best['total_usd']:,.0f}, P95 wait {best['p95_wait_hours']:.2f} h",
        f"  (a 10,000-job warm-up run, which compiles the loop if not cached: "
        f"{first['seconds']:.1f} s)",
    ]
