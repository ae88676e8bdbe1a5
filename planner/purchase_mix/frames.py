"""Parquet files of the stored histories (the parsed jobs, the hourly demand): written through
a temporary file, read back a column at a time.

Memory is the point: a 10M-job history is about 400 MB in memory. Reading the whole file at
once held the decoded table, its decompression buffers and the frame together (880 MB); column
by column, with pyarrow's freed buffers handed back to the system after each, the load peaks
about 200 MB above the frame it returns.
"""

from __future__ import annotations

import tempfile
from typing import IO

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from django.core.files import File
from django.core.files.storage import default_storage

from planner.purchase_mix.core.upload.memory import release_freed_memory


def frame_save(name: str, frame: pd.DataFrame) -> str:
    """Write the frame to a temporary parquet file and stream it into storage (no in-memory
    copy of the file: at 10M jobs that copy is a few hundred MB); the stored name.

    A RangeIndex is kept as metadata (index=None), not as a column of 80 MB per 10M rows;
    any other index (the demand's hours) is stored as a column, as before.
    """
    with tempfile.TemporaryFile() as handle:
        frame.to_parquet(handle, index=None)
        handle.seek(0)
        return str(default_storage.save(name, File(handle)))


def frame_load(handle: IO[bytes]) -> pd.DataFrame:
    """The frame frame_save stored (same columns, dtypes, index and attrs as
    pandas.read_parquet gives), read one column at a time."""
    parquet = pq.ParquetFile(handle, pre_buffer=False)
    schema = parquet.schema_arrow
    columns = {}
    for name in schema.names:
        columns[name] = parquet.read(columns=[name], use_threads=False).column(0)
        release_freed_memory()  # the page and decompression buffers go back now, not later
    table = pa.table(columns, schema=schema)
    del columns
    frame = table.to_pandas(self_destruct=True, split_blocks=True)
    del table
    release_freed_memory()
    return frame
