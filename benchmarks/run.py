"""`make bench`: print every benchmark figure. Run against the database `make run` uses."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "planner.settings")


def main() -> None:
    import django

    django.setup()
    from benchmarks import bench_history, bench_plans, bench_pricing, bench_simulator

    sections = [
        ("Catalog and pricing pages", bench_pricing.run),
        ("Simulator sweep", bench_simulator.run),
        ("Plans", bench_plans.run),
        ("Job history: 1,000,000 jobs from upload to recommendation", bench_history.run),
    ]
    for title, run in sections:
        print(f"\n== {title}")
        for line in run():
            print(line)


if __name__ == "__main__":
    main()
