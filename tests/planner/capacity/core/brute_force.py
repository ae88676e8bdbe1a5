"""An independent, deliberately naive replay of the pool semantics (lists, no heaps), for
comparing with planner.capacity.core.pool on small traces."""

from __future__ import annotations

import math


def brute_force(submit: list[float], duration: list[float], gpus: list[int],
                limits: list[float], pool: int, discipline: str, depth: int = 500
                ) -> tuple[list[bool], list[float]]:
    n = len(submit)
    begin: list[float] = [math.nan] * n
    burst = [False] * n
    queue: list[int] = []
    running: list[tuple[float, int]] = []
    arrived = 0

    def start(j: int, now: float) -> None:
        queue.remove(j)
        begin[j] = now
        running.append((now + duration[j], gpus[j]))

    def free_now() -> int:
        return pool - sum(g for _, g in running)

    def start_phase(now: float) -> None:
        while queue and gpus[queue[0]] <= free_now():
            start(queue[0], now)
        if discipline != "backfill" or len(queue) < 2 or free_now() <= 0:
            return
        head = queue[0]
        free = free_now()
        shadow, total = math.inf, free
        for end, g in sorted(running):
            total += g
            if total >= gpus[head]:
                shadow = end
                break
        extra = free + sum(g for e, g in running if e <= shadow) - gpus[head]
        for j in list(queue[1:1 + depth]):
            if free_now() <= 0:
                break
            if gpus[j] <= free_now() and (now + duration[j] <= shadow or gpus[j] <= extra):
                if now + duration[j] > shadow:
                    extra -= gpus[j]
                start(j, now)

    while arrived < n or queue:
        times = [submit[arrived]] if arrived < n else []
        if queue:
            times += [end for end, _ in running] + [submit[j] + limits[j] for j in queue]
        now = min(times)
        running[:] = [(end, g) for end, g in running if end > now]
        while arrived < n and submit[arrived] <= now:
            if gpus[arrived] > pool:
                burst[arrived], begin[arrived] = True, now
            else:
                queue.append(arrived)
            arrived += 1
        start_phase(now)
        for j in [j for j in queue if submit[j] + limits[j] <= now]:
            if j in queue:
                queue.remove(j)
                burst[j], begin[j] = True, now
                start_phase(now)
    return burst, begin
