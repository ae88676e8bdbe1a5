"""Hand freed memory back to the operating system between the large steps of an upload or an
analysis, so a worker's resident size follows what it holds, not what it once held.

Two allocators keep freed memory for reuse: pyarrow's pool (mimalloc) holds the buffers of
parsed chunks and decoded files, and glibc's heap holds the many small numpy arrays of a
chunked read (below its mmap threshold), whose holes it only returns on malloc_trim. At 10M
jobs each held 300 to 400 MB that the next step could not use (numpy never allocates from
pyarrow's pool, and an 80 MB array does not fit a hole of 2 MB).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache
from typing import Any

import pyarrow as pa


@cache
def _libc() -> Any:
    name = ctypes.util.find_library("c")
    try:
        library = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return library if library is not None and hasattr(library, "malloc_trim") else None


def release_freed_memory() -> None:
    """Return pyarrow's unused pool memory and glibc's free heap pages (a few ms; a no-op
    where there is no glibc, e.g. musl or macOS)."""
    pa.default_memory_pool().release_unused()
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
