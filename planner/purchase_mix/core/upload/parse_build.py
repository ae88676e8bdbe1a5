"""Concatenate converted chunks into a JobHistory or UsageHistory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from planner.purchase_mix.core.upload.jobs import JobHistory, UsageHistory
from planner.purchase_mix.core.upload.memory import release_freed_memory
from planner.purchase_mix.core.upload.parse_checks import merge_duplicate_jobs
from planner.purchase_mix.core.upload.parse_formats import ChunkRows

CATEGORY_COLUMNS = ("gpu_type", "team", "user", "provider", "region")


def _concat(parts: Sequence[ChunkRows], name: str) -> pd.Series:
    pieces = [part.columns[name] for part in parts]
    if isinstance(pieces[0], np.ndarray):
        return pd.Series(np.concatenate(pieces))
    if pa.types.is_dictionary(pieces[0].type):  # encoded chunk by chunk (compact_rows)
        return pd.Series(pa.chunked_array(pieces).unify_dictionaries().to_pandas())
    if pa.types.is_large_string(pieces[0].type):  # the chunks become the column's chunks
        return pd.Series(pa.chunked_array(pieces).to_pandas())
    joined = pa.concat_arrays(pieces)
    if name in CATEGORY_COLUMNS:
        return pd.Series(pc.dictionary_encode(joined).to_pandas())
    return pd.Series(joined.to_pandas())


def compact_rows(rows: ChunkRows) -> ChunkRows:
    """Shrink one chunk's kept rows, held until the whole file is read: text columns that
    become categories are dictionary-encoded (GPU types and teams take 4 bytes a row instead
    of their text, about 200 MB less at 10M jobs; categories keep the order of first
    appearance in the file), job ids become large_string and line numbers int32."""
    for name in CATEGORY_COLUMNS:
        values = rows.columns.get(name)
        if isinstance(values, pa.Array) and not pa.types.is_dictionary(values.type):
            rows.columns[name] = pc.dictionary_encode(values)
    job_id = rows.columns.get("job_id")
    if isinstance(job_id, pa.Array) and job_id.type == pa.string():
        # pandas keeps text as large_string: cast now, a chunk at a time, and the joined
        # column needs no copy of all the ids at once
        rows.columns["job_id"] = job_id.cast(pa.large_string())
    if len(rows.lines) and rows.lines[-1] <= np.iinfo(np.int32).max:
        rows.lines = rows.lines.astype(np.int32)  # file line numbers, rising
    return rows


def _no_rows_message(ignored: Mapping[str, int]) -> str:
    if not ignored:
        return "the file has no data rows"
    reasons = ", ".join(f"{count} {reason}" for reason, count in ignored.items())
    return f"the file has no GPU demand rows (ignored: {reasons})"


def build_history(
    parts: Sequence[ChunkRows],
    fmt: str,
    ignored: Mapping[str, int],
    *,
    drop_positions: np.ndarray | None = None,
    is_merging: bool = False,
) -> JobHistory | UsageHistory:
    """One frame from the kept rows; `drop_positions` (repeated job ids when skipping bad
    rows) are removed, and with `is_merging` each job id becomes one job."""
    parts = [part for part in parts if _n_rows(part) > 0]
    if not parts:
        raise ValueError(_no_rows_message(ignored))
    names = list(parts[0].columns)
    columns: dict[str, pd.Series] = {}
    for name in names:
        columns[name] = _concat(parts, name)
        for part in parts:  # release each chunk's copy as soon as it is joined: peak memory
            del part.columns[name]
        release_freed_memory()  # and hand it back: the next column's join needs the room
    frame = pd.DataFrame(columns, copy=False)
    del columns
    if drop_positions is not None and len(drop_positions) > 0:
        frame = frame.drop(index=frame.index[drop_positions]).reset_index(drop=True)
    if fmt == "usage":
        return UsageHistory(samples=frame)
    if is_merging:
        frame = merge_duplicate_jobs(frame)
    if "team" not in frame.columns:
        frame["team"] = pd.Categorical([None] * len(frame), categories=pd.Index([], dtype="str"))
    return JobHistory(jobs=frame)


def _n_rows(part: ChunkRows) -> int:
    first = next(iter(part.columns.values()))
    return len(first)
