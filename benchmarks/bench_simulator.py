"""Whole-catalog sweep: configurations per second, wall time and peak memory for Llama 2 70B."""

import time
import tracemalloc

from simulator.core import PRESETS, TrainingGoal, sweep
from simulator.services import catalog_gpu_specs, catalog_instances_frame, shipped_calibration

NODE_COUNTS = list(range(1, 65))


def run() -> list[str]:
    instances = catalog_instances_frame()
    workload = PRESETS["llama2-70b"]
    goal = TrainingGoal(tokens=2e12)
    cal, gpus = shipped_calibration(), catalog_gpu_specs()
    sweep(workload, goal, instances.head(5), [1], cal, gpus)  # warm-up
    walls = []
    for _ in range(3):
        start = time.perf_counter()
        result = sweep(workload, goal, instances, NODE_COUNTS, cal, gpus)
        walls.append(time.perf_counter() - start)
    best = min(walls)
    tracemalloc.start()
    sweep(workload, goal, instances, NODE_COUNTS, cal, gpus)
    peak_mib = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    statuses = result.configurations["calibration_status"].value_counts().to_dict()
    return [
        f"catalog: {len(instances)} instance types x {len(NODE_COUNTS)} node counts (1-64) "
        f"x layouts = {result.n_configurations:,} configurations",
        f"whole-catalog sweep, Llama 2 70B: wall {best:.2f} s best / {max(walls):.2f} s worst "
        f"of 3 (target < 2 s); {result.n_feasible:,} feasible (instance, nodes) rows",
        f"throughput: {result.n_configurations / best:,.0f} configurations/s "
        f"(target >= 500,000)",
        f"peak memory of one sweep (tracemalloc): {peak_mib:,.0f} MiB; calibration status of "
        f"the feasible rows: {statuses}",
    ]
