"""`make bench`: print every benchmark figure. Run against the database `make run` uses
(or DATABASE_URL). BENCH=load (or any comma-separated section names) runs only those."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "planner.settings")


def main() -> None:
    import django

    django.setup()
    from planner.startup import settle_after_startup

    settle_after_startup()  # as gunicorn and the workers do once started (planner.wsgi)
    from benchmarks import (
        bench_capacity,
        bench_capacity_traces,
        bench_history,
        bench_load,
        bench_pages,
        bench_plans,
        bench_pricing,
        bench_serving,
        bench_simulator,
    )

    sizes = os.environ.get("BENCH_HISTORY_JOBS") or "1,000,000 and 10,000,000"
    sections = {
        "pricing": ("Catalog and pricing pages", bench_pricing.run),
        "simulator": ("Simulator sweep", bench_simulator.run),
        "plans": ("Plans", bench_plans.run),
        "serving": ("Serving plan (plan_serving over the whole catalog)", bench_serving.run),
        "pages": ("Single-request time of the main pages (signed in, gzip)", bench_pages.run),
        "load": (f"Load: {bench_load.USERS} concurrent users on the pages and the plan API",
                 bench_load.run),
        "history": (f"Job history: {sizes} jobs from upload to recommendation",
                    bench_history.run),
        "capacity": ("Capacity: capacity_plan on a 1,000,000-job history, 30 pool sizes x 3 "
                     "policies", bench_capacity.run),
        "traces": ("Capacity frontier on the Philly and Helios samples",
                   bench_capacity_traces.run),
    }
    # BENCH=load,plans runs only those sections (default: all, in this order).
    chosen = [name.strip() for name in os.environ.get("BENCH", "").split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(sections))
    if unknown:
        raise SystemExit(f"BENCH: unknown section(s) {unknown}; choose from {list(sections)}")
    for title, run in [sections[name] for name in chosen or list(sections)]:
        print(f"\n== {title}")
        for line in run():
            print(line)


if __name__ == "__main__":
    main()
