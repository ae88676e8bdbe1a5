"""JSON-safe conversion of core results (dataclasses, frames, numpy values)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd


def frame_to_dict(frame: pd.DataFrame) -> dict[str, Any]:
    """{"hours": [ISO-8601 UTC], "series": {column: [values]}} with NaN as null."""
    hours = [stamp.isoformat() for stamp in frame.index]
    series = {
        str(name): [json_safe(value) for value in frame[name].to_numpy()] for name in frame.columns
    }
    return {"hours": hours, "series": series}


_PLAIN = frozenset({str, int, bool, type(None)})  # exact types passed through as they are


def finite_list(values: Any) -> list[float | None]:
    """A float array as a list of Python floats, None where not finite (JSON has none)."""
    array = np.asarray(values, dtype=np.float64)
    boxed = array.astype(object)
    boxed[~np.isfinite(array)] = None
    return list(boxed.tolist())


def frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON-safe dicts (what json.loads(frame.to_json(orient="records")) gives, with
    floats exact): missing values and non-finite floats as None, a column at a time."""
    columns: list[list[Any]] = []
    for name in frame.columns:
        column = frame[name]
        kind = column.dtype.kind if isinstance(column.dtype, np.dtype) else ""
        if kind == "f":
            columns.append(finite_list(column.to_numpy()))
        elif kind in ("b", "i", "u"):
            columns.append(column.tolist())
        else:
            present = column.astype(object).where(column.notna(), None).tolist()
            columns.append(present if kind == "" else [json_safe(v) for v in present])
    names = [str(name) for name in frame.columns]
    return [dict(zip(names, values, strict=True)) for values in zip(*columns, strict=True)]


def json_safe(value: Any) -> Any:
    """Recursively turn a result into JSON-compatible builtins; non-finite floats become None."""
    kind = type(value)
    if kind is float:
        return value if math.isfinite(value) else None
    if kind in _PLAIN:
        return value
    if kind is dict:
        return {str(key): json_safe(item) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: json_safe(getattr(value, field.name)) for field in dataclasses.fields(value)
        }
    if isinstance(value, pd.DataFrame):
        return frame_to_dict(value)
    if isinstance(value, pd.Series):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, Mapping):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [json_safe(item) for item in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    return value


def frame_to_table(frame: pd.DataFrame) -> dict[str, Any]:
    """A frame as JSON-safe {"columns", "dtypes", "rows"} that frame_from_table restores with
    the same values and dtypes (floats round-trip exactly; NaN is stored as null)."""
    return {
        "columns": [str(name) for name in frame.columns],
        "dtypes": [str(dtype) for dtype in frame.dtypes],
        "rows": [[json_safe(value) for value in row] for row in frame.itertuples(index=False)],
    }


def frame_from_table(table: Mapping[str, Any]) -> pd.DataFrame:
    """The frame frame_to_table stored (null back to NaN in float columns)."""
    columns = list(table["columns"])
    frame = pd.DataFrame(table["rows"], columns=columns)
    return frame.astype(dict(zip(columns, table["dtypes"], strict=True)))
