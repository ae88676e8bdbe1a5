"""File-level checks on parsed rows: timestamp bounds, the history's span, duplicate job ids.

Times are int64 epoch seconds (UTC). The caller passes "now" (the core never reads the clock).
Each refusal names the file line and the column, so a user can find the row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from planner.purchase_mix.core.upload.jobs import ParseError

EARLIEST_EPOCH_S = 946_684_800  # 2000-01-01T00:00:00Z: no GPU training history is older
MAX_AHEAD_SECONDS = 365 * 86_400  # at most a year ahead of "now" (scheduled reservations)
MAX_SPAN_SECONDS = 10 * 365 * 86_400 + 2 * 86_400  # ten years, leap days included
DUPLICATE_POLICIES: tuple[str, ...] = ("refuse", "merge")


@dataclass(frozen=True)
class TimeBounds:
    """Accepted timestamps: [earliest_epoch_s, latest_epoch_s]; latest None = no upper bound."""

    earliest_epoch_s: int = EARLIEST_EPOCH_S
    latest_epoch_s: int | None = None

    @classmethod
    def around(cls, now_epoch_s: int | None) -> TimeBounds:
        latest = None if now_epoch_s is None else now_epoch_s + MAX_AHEAD_SECONDS
        return cls(EARLIEST_EPOCH_S, latest)

    def out_of_range(self, epoch_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(too early mask, too late mask)."""
        early = epoch_s < self.earliest_epoch_s
        late = np.zeros(len(epoch_s), dtype=bool)
        if self.latest_epoch_s is not None:
            late = epoch_s > self.latest_epoch_s
        return early, late


def stamp(epoch_s: int) -> str:
    return pd.Timestamp(int(epoch_s), unit="s", tz="UTC").strftime("%Y-%m-%d %H:%M UTC")


@dataclass
class SpanTracker:
    """Earliest start and latest end seen so far, with their file lines."""

    first_s: int | None = None
    first_line: int = 0
    last_s: int | None = None
    last_line: int = 0

    def add(self, starts: np.ndarray, ends: np.ndarray, lines: np.ndarray) -> None:
        if len(starts) == 0:
            return
        i, j = int(np.argmin(starts)), int(np.argmax(ends))
        if self.first_s is None or int(starts[i]) < self.first_s:
            self.first_s, self.first_line = int(starts[i]), int(lines[i])
        if self.last_s is None or int(ends[j]) > self.last_s:
            self.last_s, self.last_line = int(ends[j]), int(lines[j])

    def check(self, start_field: str, end_field: str) -> None:
        """Raise ValueError when the history spans more than ten years."""
        if self.first_s is None or self.last_s is None:
            return
        span_s = self.last_s - self.first_s
        if span_s > MAX_SPAN_SECONDS:
            raise ValueError(
                f"the history spans {span_s / (365.25 * 86_400):,.1f} years, from line "
                f"{self.first_line} ({start_field} {stamp(self.first_s)}) to line "
                f"{self.last_line} ({end_field} {stamp(self.last_s)}); at most 10 years are "
                "accepted: check the time unit and origin, or split the file"
            )


@dataclass(frozen=True)
class Duplicates:
    """Rows whose job id appeared on an earlier line: positions in the concatenated rows."""

    positions: np.ndarray  # rows after the first of each id
    first_positions: np.ndarray  # the first row of the same id, aligned with `positions`


DUPLICATE_BLOCK_ROWS = 1 << 20  # sorted ids compared a block at a time: bounds the copy


def find_duplicates(job_ids: pa.Array | pa.ChunkedArray) -> Duplicates:
    """Positions of repeated job ids (every occurrence after the first).

    Sort-based (a stable sort, then equal neighbours): about a third of the memory of a hash
    table of every id, which matters at 10M jobs. Neighbours are compared
    DUPLICATE_BLOCK_ROWS at a time, so the ids are never copied whole in sorted order.
    """
    n_rows = len(job_ids)
    empty = np.zeros(0, dtype=np.int64)
    if n_rows < 2:
        return Duplicates(empty, empty)
    order = pc.array_sort_indices(job_ids, order="ascending") if isinstance(
        job_ids, pa.Array) else pc.sort_indices(job_ids, sort_keys=[("", "ascending")])
    is_repeat = np.zeros(n_rows, dtype=bool)
    for low in range(0, n_rows - 1, DUPLICATE_BLOCK_ROWS):
        block = order.slice(low, DUPLICATE_BLOCK_ROWS + 1)
        ordered = job_ids.take(block) if isinstance(job_ids, pa.Array) else _take_chunked(
            job_ids, np.asarray(block.to_numpy(zero_copy_only=False), dtype=np.int64))
        size = len(ordered)
        same = pc.equal(ordered.slice(1), ordered.slice(0, size - 1))
        is_repeat[low + 1:low + size] = np.asarray(
            same.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
    if not is_repeat.any():
        return Duplicates(empty, empty)
    positions = np.asarray(order.to_numpy(zero_copy_only=False), dtype=np.int64)
    group_start = np.maximum.accumulate(np.where(~is_repeat, np.arange(n_rows), 0))
    return Duplicates(positions[is_repeat], positions[group_start[is_repeat]])


def _take_chunked(values: pa.ChunkedArray, positions: np.ndarray) -> pa.Array:
    """values[positions] as one array, taken chunk by chunk (ChunkedArray.take joins every
    chunk first: a copy of all the ids)."""
    bounds = np.cumsum([0] + [len(chunk) for chunk in values.chunks])
    chunk_of = np.searchsorted(bounds, positions, side="right") - 1
    by_chunk = np.argsort(chunk_of, kind="stable")
    ordered = positions[by_chunk]
    cuts = np.searchsorted(chunk_of[by_chunk], np.arange(values.num_chunks + 1))
    pieces = [values.chunk(c).take(pa.array(ordered[cuts[c]:cuts[c + 1]] - bounds[c]))
              for c in range(values.num_chunks) if cuts[c] < cuts[c + 1]]
    where = np.empty_like(by_chunk)
    where[by_chunk] = np.arange(len(by_chunk))
    return pa.concat_arrays(pieces).take(pa.array(where))


def duplicate_errors(
    dups: Duplicates,
    job_ids: Sequence[str],
    lines: np.ndarray,
    field_name: str,
    max_errors: int,
) -> list[ParseError]:
    return [
        ParseError(
            int(lines[pos]),
            field_name,
            f"job id {job_ids[i]!r} already on line {int(lines[first])}: choose “merge "
            "duplicate job ids” to count it once, or fix the file",
        )
        for i, (pos, first) in enumerate(
            zip(dups.positions[:max_errors], dups.first_positions[:max_errors], strict=True)
        )
    ]


def merge_duplicate_jobs(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per job id: earliest submit and start, latest end, largest GPU count; other
    columns from the first row. Rows are the same job listed more than once (re-exports,
    requeues)."""
    is_dup = frame["job_id"].duplicated(keep=False).to_numpy()
    if not is_dup.any():
        return frame
    dups = frame[is_dup]
    submit = {"submit_epoch_s": "min"} if "submit_epoch_s" in dups.columns else {}
    merged = dups.groupby("job_id", sort=False, observed=True).agg(
        {
            **submit,
            "start_epoch_s": "min",
            "end_epoch_s": "max",
            "gpu_count": "max",
            **{c: "first" for c in dups.columns if c not in _MERGED and c != "job_id"},
        }
    )
    merged = merged.reset_index()[list(frame.columns)]
    for name in frame.columns:
        merged[name] = merged[name].astype(frame[name].dtype)
    return pd.concat([frame[~is_dup], merged], ignore_index=True)


_MERGED = ("submit_epoch_s", "start_epoch_s", "end_epoch_s", "gpu_count")
