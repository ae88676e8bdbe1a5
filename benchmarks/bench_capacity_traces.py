"""The Philly and Helios samples on the frontier: does size-aware waiting dominate constant
waiting (Starburst's finding), and how does the recommended pool compare with the purchase
mix's no-wait commitment? `BENCH=traces make bench` prints it (a few seconds).

Philly: the Chronus job table (5,000 jobs, minutes, best_effort = interruptible), as in the
tests. Helios: the sample is a per-minute count of one virtual cluster, not a job list, so
jobs are derived from it: each rise of requested GPUs (running + pending) at a minute is one
job of that many GPUs, and each fall ends the most recent jobs first (a job cut in part is
split). An approximation: its sizes and durations are stack-shaped, not the trace's.
Both are priced as V100 at the catalog's cheapest commitment and on-demand offer.
"""

import io
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "tests" / "fixtures" / "traces"
PHILLY = TRACES / "chronus_philly_MIX1_rows1-5000.csv"
HELIOS = TRACES / "helios_earth_vcvlY_sequence_first5000.csv"
PHILLY_MAP = "start=submit_time,duration=duration,gpu_count=num_gpu,interruptible=best_effort"
WAITS = "0.5,1,2,4,8"
TARGET_HOURS = 2.0


def helios_jobs(path: Path) -> pd.DataFrame:
    """Jobs from the per-minute requested GPUs (see the module docstring)."""
    frame = pd.read_csv(path, parse_dates=["time"])
    demand = (frame["running_gpu_num"] + frame["pending_gpu_num"]).astype(int).to_numpy()
    times = frame["time"].to_numpy()
    stack: list[list[Any]] = []  # [start, gpus]
    rows: list[tuple[Any, Any, int]] = []
    level = 0
    for when, wanted in zip(times, demand, strict=True):
        if wanted > level:
            stack.append([when, wanted - level])
        while wanted < level:
            start, gpus = stack[-1]
            ended = min(gpus, level - wanted)
            rows.append((start, when, ended))
            level -= ended
            if ended == gpus:
                stack.pop()
            else:
                stack[-1][1] = gpus - ended
        level = wanted
    rows += [(start, times[-1], gpus) for start, gpus in stack]
    jobs = pd.DataFrame(rows, columns=["start", "end", "gpu_count"])
    jobs = jobs[jobs["end"] > jobs["start"]]
    jobs["start"] = pd.to_datetime(jobs["start"]).dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    jobs["end"] = pd.to_datetime(jobs["end"]).dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    jobs["gpu_type"] = "V100"
    return jobs


def _sweep(*args: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command("capacity_plan", *args, "--max-wait-hours", WAITS, "--target-p95-wait-hours",
                 str(TARGET_HOURS), "--json", stdout=out, stderr=io.StringIO())
    found: dict[str, Any] = json.loads(out.getvalue())
    return found


def _dominated_share(points: list[dict[str, Any]], by: str, over: str, wait: str) -> float:
    """Share of `over` points for which some `by` point is as cheap and waits as little."""
    mine = [p for p in points if p["policy"] == over and p["pool_gpus"] > 0]
    theirs = [p for p in points if p["policy"] == by and p["pool_gpus"] > 0]
    hit = sum(any(q["total_usd"] <= p["total_usd"] * (1 + 1e-9) and q[wait] <= p[wait] + 1e-9
                  for q in theirs) for p in mine)
    return hit / len(mine) if mine else math.nan


def _cheapest(points: list[dict[str, Any]], policy: str) -> dict[str, Any]:
    meeting = [p for p in points if p["policy"] == policy
               and p["p95_wait_hours"] <= TARGET_HOURS]
    return min(meeting, key=lambda p: p["total_usd"])


def _lines(name: str, payload: dict[str, Any]) -> list[str]:
    points = payload["points"]
    best = payload["recommended"]
    lines = [f"{name}: {payload['jobs']:,} GPU jobs, {payload['gpu_hours']:,.0f} GPU-hours, "
             f"no-wait peak {payload['peak_gpus']} GPUs; T = {WAITS} h, fifo"]
    for wait in ("mean_wait_hours", "p95_wait_hours"):
        size_wins = 100 * _dominated_share(points, "size_aware", "constant", wait)
        constant_wins = 100 * _dominated_share(points, "constant", "size_aware", wait)
        lines.append(
            f"  {wait.split('_')[0]} wait: size_aware matches or beats a constant point on "
            f"cost and wait for {size_wins:.0f} % of them; constant beats a size_aware point "
            f"for {constant_wins:.0f} %")
    for policy in ("none", "constant", "size_aware"):
        p = _cheapest(points, policy)
        limit = "" if policy == "none" else f" T={p['max_wait_hours']} h"
        lines.append(f"  cheapest with P95 <= {TARGET_HOURS:g} h, {policy}{limit}: "
                     f"{p['pool_gpus']} GPUs, ${p['total_usd']:,.0f}, mean wait "
                     f"{p['mean_wait_hours']:.2f} h, JCT +{p['mean_jct_increase_pct']:.1f} %")
    lines.append(f"  recommended: {best['pool_gpus']} GPUs, {best['policy']} T="
                 f"{best['max_wait_hours']} h, ${best['total_usd']:,.0f}")
    for item in payload["against"]:
        ref = item["reference"]
        lines.append(f"    against {item['name']} ({ref['pool_gpus']} GPUs, "
                     f"${ref['total_usd']:,.0f}, no waiting): saves ${item['saved_usd']:,.0f}"
                     f" ({item['saved_pct']:.1f} %), P95 wait +"
                     f"{item['added_p95_wait_hours']:.2f} h")
    return lines


def run() -> list[str]:
    philly = _sweep(str(PHILLY), "--map", PHILLY_MAP, "--time-unit", "min", "--origin",
                    "2017-10-01", "--gpu-type", "V100")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "helios_jobs.csv"
        helios_jobs(HELIOS).to_csv(path, index=False)
        helios = _sweep(str(path), "--gpu-type", "V100")
    return [*_lines("Philly (Chronus sample)", philly),
            *_lines("Helios Earth vcvlY (jobs derived from minute counts)", helios)]
