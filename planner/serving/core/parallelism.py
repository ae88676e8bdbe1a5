"""The parallel layouts a serving replica may take on one offer's instances, and how whole
instances hold them.

A layout is tensor parallelism (TP) inside one instance, pipeline parallelism (PP) that may
span instances, and, for a mixture of experts, expert parallelism (EP) over all the replica's
GPUs. The candidates of an offer with G GPUs per instance, bounded so a plan over the whole
catalog stays fast:

- every TP degree of TP_DEGREES that divides G, with pp = 1 (replicas share an instance);
- at the largest such TP, pipelines of PP_DEGREES (2, 4, 8 stages): a replica of tp x pp GPUs
  holds G / (tp x pp) per instance when it fits in one, or spans tp x pp / G whole instances
  (at most MAX_INSTANCES_PER_REPLICA). Depths run from 1 up to the first that holds the model
  and one request, plus the next when the KV cache, not the scheduler's cap, bounds the first's
  batch: a deeper pipeline adds KV cache (a larger batch) but no speed, since stages run one
  after another;
- for a mixture of experts, each of those also with ep = tp x pp (the experts spread over every
  GPU of the replica), beside ep = 1.

A layout whose replica would not fit, or whose tp x pp neither divides G nor is a multiple of
it, never appears; ep never exceeds tp x pp.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from planner.core.formatting import serving_layout_label
from planner.serving.core.traffic import hourly_instances

TP_DEGREES: tuple[int, ...] = (1, 2, 4, 8)
PP_DEGREES: tuple[int, ...] = (2, 4, 8)
MAX_INSTANCES_PER_REPLICA = 8


@dataclass(frozen=True)
class Layout:
    """tp x pp GPUs hold one copy of the model; its experts are split over ep of them."""

    tp: int
    pp: int = 1
    ep: int = 1

    def __post_init__(self) -> None:
        if min(self.tp, self.pp, self.ep) < 1:
            raise ValueError("tp, pp and ep must be >= 1")
        if self.ep > self.gpus_per_replica:
            raise ValueError("ep cannot exceed the replica's GPUs (tp x pp)")

    @property
    def gpus_per_replica(self) -> int:
        return self.tp * self.pp

    @property
    def label(self) -> str:
        return layout_label(self.tp, self.pp, self.ep)

    def replicas_per_instance(self, gpus_per_instance: int) -> int:
        """Replicas one instance holds (1 when a replica spans instances)."""
        return max(1, gpus_per_instance // self.gpus_per_replica)

    def instances_per_replica(self, gpus_per_instance: int) -> int:
        """Whole instances one replica needs (1 when it fits in one)."""
        return max(1, math.ceil(self.gpus_per_replica / gpus_per_instance))

    def spans_instances(self, gpus_per_instance: int) -> bool:
        return self.gpus_per_replica > gpus_per_instance

    def instances_for(self, replicas: int, gpus_per_instance: int) -> int:
        """Whole instances that hold `replicas` replicas."""
        packed = math.ceil(replicas / self.replicas_per_instance(gpus_per_instance))
        return packed * self.instances_per_replica(gpus_per_instance)

    def hourly_instances(self, rates_per_s: tuple[float, ...], goodput_per_replica_per_s: float,
                         gpus_per_instance: int) -> tuple[int, ...]:
        """Whole instances each hour's rate needs (the plan's fleet and the purchase mix's
        history read the same packing)."""
        return hourly_instances(rates_per_s, goodput_per_replica_per_s,
                                self.replicas_per_instance(gpus_per_instance),
                                self.instances_per_replica(gpus_per_instance))

    def replicas_in(self, instances: int, gpus_per_instance: int) -> int:
        """Replicas that `instances` whole instances run (spare slots of the last serve)."""
        whole = instances // self.instances_per_replica(gpus_per_instance)
        return whole * self.replicas_per_instance(gpus_per_instance)


def layout_label(tp: int, pp: int = 1, ep: int = 1) -> str:
    """'TP8 PP2 EP16' (planner.core.formatting.serving_layout_label)."""
    return serving_layout_label({"tp": tp, "pp": pp, "ep": ep})


def _is_whole(gpus_per_replica: int, gpus_per_instance: int) -> bool:
    """A replica fills whole instances, or whole slots of one."""
    if gpus_per_replica <= gpus_per_instance:
        return gpus_per_instance % gpus_per_replica == 0
    return (gpus_per_replica % gpus_per_instance == 0
            and gpus_per_replica // gpus_per_instance <= MAX_INSTANCES_PER_REPLICA)


def candidate_layouts(gpus_per_instance: int, is_moe: bool, fits: Callable[[Layout], bool],
                      is_kv_bound: Callable[[Layout], bool]) -> list[Layout]:
    """The layouts to rank on instances of `gpus_per_instance` GPUs (see the module doc);
    `fits(layout)`: the replica holds the weights and at least one request;
    `is_kv_bound(layout)`: its KV cache holds fewer sequences than the scheduler would run."""
    if gpus_per_instance < 1:
        raise ValueError("an instance has at least one GPU")
    tps = [tp for tp in TP_DEGREES if tp <= gpus_per_instance and gpus_per_instance % tp == 0]
    dense = [Layout(tp) for tp in tps if fits(Layout(tp))]
    widest = max(tps)
    first_fit = 1 if fits(Layout(widest)) else 0
    for pp in PP_DEGREES:
        layout = Layout(widest, pp)
        if first_fit and (pp > 2 * first_fit or not is_kv_bound(Layout(widest, first_fit))):
            break
        if not _is_whole(layout.gpus_per_replica, gpus_per_instance) or not fits(layout):
            continue
        dense.append(layout)
        first_fit = first_fit or pp
    if not is_moe:
        return dense
    wide = [Layout(lay.tp, lay.pp, lay.gpus_per_replica) for lay in dense
            if lay.gpus_per_replica > 1]
    return dense + wide
