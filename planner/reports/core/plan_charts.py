"""The plan report's charts, from the plan document: the same options as the plan page's
charts (planner.core.chart_sets), each point carrying its option's row_index and each chart
a caption of the ranks it draws."""

from __future__ import annotations

from typing import Any

from planner.core.chart_sets import ChartSet, breakdown_set, carbon_set, memory_title, pareto_set
from planner.core.cloud import HOURS_PER_DAY
from planner.core.formatting import label
from planner.reports.core.model import Chart, Series, as_number


def as_days(hours: Any) -> float | None:
    """Hours of a plan document (a number, or null) as days; None when not a number."""
    number = as_number(hours)
    return None if number is None else number / HOURS_PER_DAY


def _scatter(chosen: ChartSet, x_key: str, group_key: str, *, in_days: bool
             ) -> tuple[Series, ...]:
    groups: dict[str, list[tuple[float, float, int]]] = {}
    for o in chosen.options:
        x = as_days(o.get(x_key)) if in_days else as_number(o.get(x_key))
        total = as_number(o.get("total_usd"))
        if x is not None and total is not None:
            row = int(o.get("row_index", -1))
            groups.setdefault(label(o.get(group_key)), []).append((x, total, row))
    return tuple(Series(name, tuple(p[0] for p in pts), tuple(p[1] for p in pts),
                        tuple(p[2] for p in pts)) for name, pts in sorted(groups.items()))


def pareto_chart(document: dict[str, Any]) -> Chart:
    chosen = pareto_set(document.get("options", []))
    return Chart("pareto", chosen.title, "scatter", "Expected time to train (days)",
                 "Expected total cost (USD)",
                 _scatter(chosen, "time_to_train_hours", "purchase_option", in_days=True),
                 caption=chosen.caption)


def cost_chart(document: dict[str, Any]) -> Chart:
    chosen = breakdown_set(document.get("options", []))
    top = [{**o, "steady_usd": (as_number(o.get("compute_usd")) or 0.0)
            - (as_number(o.get("overhead_usd")) or 0.0)} for o in chosen.options]
    parts = (("steady_usd", "Compute (useful steps)"),
             ("overhead_usd", "Failures, restarts and overhead"), ("storage_usd", "Storage"),
             ("egress_usd", "Egress"))
    ids = chosen.row_indexes
    series = tuple(Series(words, tuple(float(i) for i in range(len(top))),
                          tuple(as_number(o.get(key)) or 0.0 for o in top), ids)
                   for key, words in parts)
    return Chart("costs", chosen.title, "bar", "Option (rank in the table)",
                 "Expected cost (USD)", series,
                 categories=tuple(f"#{as_number(o.get('rank')) or 0:.0f}" for o in top),
                 caption=chosen.caption)


def carbon_chart(document: dict[str, Any]) -> Chart:
    chosen = carbon_set(document.get("options", []))
    return Chart("carbon", chosen.title, "scatter", "Expected emissions (kg CO2e)",
                 "Expected total cost (USD)",
                 _scatter(chosen, "co2e_kg", "provider", in_days=False), caption=chosen.caption)


def scaling_chart(document: dict[str, Any]) -> Chart:
    by_gpu: dict[str, list[tuple[float, float]]] = {}
    for point in document.get("scaling", []):
        gpus, rate = as_number(point.get("gpus")), as_number(point.get("tokens_per_second"))
        if gpus and rate is not None:
            by_gpu.setdefault(str(point.get("gpu")), []).append((gpus, rate))
    series = tuple(Series(gpu, tuple(p[0] for p in sorted(pts)), tuple(p[1] for p in sorted(pts)))
                   for gpu, pts in sorted(by_gpu.items()))
    return Chart("scaling", "Throughput vs GPU count, per GPU model", "line",
                 "GPUs (count, log scale)", "Throughput (tokens/s)", series, is_x_log=True)


MEMORY_PARTS = (("weights_gib", "Weights"), ("gradients_gib", "Gradients"),
                ("optimizer_gib", "Optimizer states"), ("activations_gib", "Activations"),
                ("overhead_gib", "Framework overhead"))


def memory_chart(document: dict[str, Any]) -> Chart | None:
    """Memory per GPU of the plan's pick by part, beside the GPU's capacity (the page's
    memory chart); None when the plan has no chosen option."""
    memory = document.get("chosen_memory")
    capacity = as_number((memory or {}).get("capacity_gib"))
    if not isinstance(memory, dict) or capacity is None:
        return None
    series = tuple(Series(words, (0.0, 1.0), (as_number(memory.get(key)) or 0.0, 0.0))
                   for key, words in MEMORY_PARTS)
    return Chart("memory", memory_title(document), "bar", "Per GPU", "Memory per GPU (GiB)",
                 (*series, Series("Capacity", (0.0, 1.0), (0.0, capacity))),
                 categories=("Needed", "Capacity"))
