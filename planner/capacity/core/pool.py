"""The trace-driven pool simulator: N committed GPUs, a queue, and bursting to the cloud.

Reference semantics (pinned by tests/planner/capacity/core/test_pool.py). At one instant:
1. jobs ending at or before it free their GPUs;
2. jobs submitted at it join the queue in submit order; a job asking for more GPUs than
   the pool holds bursts at once (wait 0) and never queues, so it blocks nobody;
3. the head of the queue starts while it fits (`fifo`: strict head-of-line blocking);
   `backfill` (EASY) then reserves the head's start at the earliest time enough GPUs free up
   (the shadow time, from the running jobs' actual ends) and starts later queued jobs that
   fit now and either end by the shadow time or use only GPUs the head will not need
   (at most BACKFILL_DEPTH queued jobs are looked at, Slurm's default bf_max_job_test);
4. queued jobs whose limit is reached (submit + limit <= now) burst one by one in queue
   order, and starting (step 3) is retried after each burst.
A burst job runs in the cloud for its whole duration from its burst time; its wait is from
submit to burst, a pool job's from submit to start. Durations are exact (a trace replay).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from planner.capacity.core.jobs import DISCIPLINES, PoolJobs

BACKFILL_DEPTH = 500
_QUEUED, _STARTED, _BURST = 1, 2, 3


@dataclass(frozen=True)
class PoolOutcome:
    """Per job (in PoolJobs order): `is_burst`, and `begin_s`, its start on the pool or its
    burst time (float64 seconds since epoch)."""

    pool_gpus: int
    discipline: str
    is_burst: np.ndarray
    begin_s: np.ndarray


def simulate_pool(
    jobs: PoolJobs, *, pool_gpus: int, discipline: str, wait_limits_s: np.ndarray
) -> PoolOutcome:
    """Replay `jobs` on a pool of `pool_gpus` GPUs; `wait_limits_s` per job (inf: forever)."""
    if discipline not in DISCIPLINES:
        raise ValueError(f"discipline: {discipline!r} is not one of {', '.join(DISCIPLINES)}")
    if pool_gpus < 0:
        raise ValueError(f"pool_gpus: {pool_gpus} is negative")
    if len(wait_limits_s) != jobs.n_jobs or bool((np.asarray(wait_limits_s) < 0).any()):
        raise ValueError("wait_limits_s: one limit >= 0 per job")
    deadline = jobs.submit_s + np.asarray(wait_limits_s, dtype=np.float64)
    is_burst, begin = _simulate(
        jobs.submit_s, jobs.duration_s, jobs.gpus, deadline, int(pool_gpus),
        discipline == "backfill", BACKFILL_DEPTH,
        # none and constant: deadlines follow queue order, so no deadline heap is needed
        bool((deadline[1:] >= deadline[:-1]).all()),
    )
    return PoolOutcome(int(pool_gpus), discipline, is_burst, begin)


@numba.njit(cache=True, nogil=True)
def _push(keys, values, size, key, value):  # type: ignore[no-untyped-def]
    i = size
    keys[i] = key
    values[i] = value
    while i > 0:
        parent = (i - 1) >> 1
        if keys[parent] <= keys[i]:
            break
        keys[parent], keys[i] = keys[i], keys[parent]
        values[parent], values[i] = values[i], values[parent]
        i = parent
    return size + 1


@numba.njit(cache=True, nogil=True)
def _pop(keys, values, size):  # type: ignore[no-untyped-def]
    size -= 1
    keys[0] = keys[size]
    values[0] = values[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and keys[child + 1] < keys[child]:
            child += 1
        if keys[i] <= keys[child]:
            break
        keys[child], keys[i] = keys[i], keys[child]
        values[child], values[i] = values[i], values[child]
        i = child
    return size


@numba.njit(cache=True, nogil=True)
def _unlink(nxt, prv, j):  # type: ignore[no-untyped-def]
    nxt[prv[j]] = nxt[j]
    prv[nxt[j]] = prv[j]


@numba.njit(cache=True, nogil=True)
def _shadow(run_end, run_gpus, run_size, free, need, scratch_key, scratch_at):  # type: ignore[no-untyped-def]
    """The head's reserved start (the earliest time `need` GPUs are free) and the GPUs spare
    then (every GPU free by that time, beyond the head's): the running jobs in order of their
    ends, read best-first off the running heap (only as many as needed, not a sort of all)."""
    if run_size == 0:
        return np.inf, 0
    avail = free
    shadow = np.inf
    size = _push(scratch_key, scratch_at, 0, run_end[0], 0)
    while size > 0:
        at = scratch_at[0]
        size = _pop(scratch_key, scratch_at, size)
        if avail >= need and run_end[at] > shadow:
            break  # every job ending at the shadow time is counted
        avail += run_gpus[at]
        if avail >= need and shadow == np.inf:
            shadow = run_end[at]
        for child in (2 * at + 1, 2 * at + 2):
            if child < run_size:
                size = _push(scratch_key, scratch_at, size, run_end[child], child)
    if shadow == np.inf:
        return np.inf, 0
    return shadow, avail - need


@numba.njit(cache=True, nogil=True)
def _schedule(now, duration, gpus, state, begin, nxt, prv, sentinel, run_end, run_gpus,  # type: ignore[no-untyped-def]
              run_size, free, is_backfill, depth, scratch_key, scratch_at):
    head = nxt[sentinel]
    while head != sentinel and gpus[head] <= free:
        state[head] = _STARTED
        begin[head] = now
        free -= gpus[head]
        run_size = _push(run_end, run_gpus, run_size, now + duration[head], gpus[head])
        _unlink(nxt, prv, head)
        head = nxt[sentinel]
    if not is_backfill or head == sentinel or free <= 0 or nxt[head] == sentinel:
        return run_size, free
    j = nxt[head]
    looked = 0
    while j != sentinel and looked < depth and gpus[j] > free:  # no fit: no shadow needed
        j = nxt[j]
        looked += 1
    if j == sentinel or looked >= depth:
        return run_size, free
    shadow, extra = _shadow(run_end, run_gpus, run_size, free, gpus[head], scratch_key,
                            scratch_at)
    while j != sentinel and looked < depth and free > 0:
        following = nxt[j]
        need = gpus[j]
        if need <= free and (now + duration[j] <= shadow or need <= extra):
            if now + duration[j] > shadow:
                extra -= need
            state[j] = _STARTED
            begin[j] = now
            free -= need
            run_size = _push(run_end, run_gpus, run_size, now + duration[j], need)
            _unlink(nxt, prv, j)
        j = following
        looked += 1
    return run_size, free


@numba.njit(cache=True, nogil=True)
def _simulate(submit, duration, gpus, deadline, pool, is_backfill, depth, is_monotone):  # type: ignore[no-untyped-def]
    n = len(submit)
    state = np.zeros(n, np.int8)
    begin = np.full(n, np.nan)
    run_end = np.empty(n, np.float64)
    run_gpus = np.empty(n, np.int64)
    dl_key = np.empty(n, np.float64)
    dl_job = np.empty(n, np.int64)
    due = np.empty(n, np.int64)
    scratch_key = np.empty(n + 1, np.float64)
    scratch_at = np.empty(n + 1, np.int64)
    nxt = np.empty(n + 1, np.int64)
    prv = np.empty(n + 1, np.int64)
    sentinel = n
    nxt[sentinel] = sentinel
    prv[sentinel] = sentinel
    run_size = 0
    dl_size = 0
    free = pool
    i = 0
    while i < n or nxt[sentinel] != sentinel:
        now = submit[i] if i < n else np.inf
        if nxt[sentinel] != sentinel:
            if run_size > 0 and run_end[0] < now:
                now = run_end[0]
            if is_monotone:  # the earliest deadline is the head's
                if deadline[nxt[sentinel]] < now:
                    now = deadline[nxt[sentinel]]
            else:
                while dl_size > 0 and state[dl_job[0]] != _QUEUED:
                    dl_size = _pop(dl_key, dl_job, dl_size)
                if dl_size > 0 and dl_key[0] < now:
                    now = dl_key[0]
        if now == np.inf:
            break  # unreachable: a queued head fits once the pool empties
        while run_size > 0 and run_end[0] <= now:
            free += run_gpus[0]
            run_size = _pop(run_end, run_gpus, run_size)
        while i < n and submit[i] <= now:
            if gpus[i] > pool:
                state[i] = _BURST
                begin[i] = now
            elif nxt[sentinel] == sentinel and gpus[i] <= free:
                # Nothing queued ahead and it fits: it starts now (the head-start step).
                state[i] = _STARTED
                begin[i] = now
                free -= gpus[i]
                run_size = _push(run_end, run_gpus, run_size, now + duration[i], gpus[i])
            else:
                state[i] = _QUEUED
                last = prv[sentinel]
                nxt[last] = i
                prv[i] = last
                nxt[i] = sentinel
                prv[sentinel] = i
                if not is_monotone and deadline[i] < np.inf:
                    dl_size = _push(dl_key, dl_job, dl_size, deadline[i], i)
            i += 1
        run_size, free = _schedule(now, duration, gpus, state, begin, nxt, prv, sentinel,
                                   run_end, run_gpus, run_size, free, is_backfill, depth,
                                   scratch_key, scratch_at)
        n_due = 0
        if is_monotone:
            j = nxt[sentinel]
            while j != sentinel and deadline[j] <= now:
                due[n_due] = j
                n_due += 1
                j = nxt[j]
        while dl_size > 0 and dl_key[0] <= now:
            if state[dl_job[0]] == _QUEUED:
                due[n_due] = dl_job[0]
                n_due += 1
            dl_size = _pop(dl_key, dl_job, dl_size)
        if n_due > 1 and not is_monotone:
            due[:n_due].sort()  # queue order is submit order, which is index order
        for k in range(n_due):
            j = due[k]
            if state[j] != _QUEUED:
                continue  # it started when an earlier burst was retried
            state[j] = _BURST
            begin[j] = now
            _unlink(nxt, prv, j)
            run_size, free = _schedule(now, duration, gpus, state, begin, nxt, prv, sentinel,
                                       run_end, run_gpus, run_size, free, is_backfill, depth,
                                   scratch_key, scratch_at)
    return state == _BURST, begin
