"""Published whole-run GPU-hours (whole_runs.csv) as reference rows with metric gpu_hours.

whole_runs.csv (see simulator/data/whole_runs.md) has its own schema: one published training
run per row, its GPU-time figure as the source wrote it, and a curation verdict
`usable_for_goodput_calibration` (yes / partial / no). `whole_runs_as_reference` maps each row
onto the reference-runs schema (runs.py) so validation, cross-validation and fitting treat it
like any other row:
- metric gpu_hours, value = the published GPU-hours ("<" upper bounds keep the bound);
- the family is the model family (one family per model builder's series);
- `whole_run_usable` carries the verdict: only "yes" rows are predicted; "partial" (upper
  bounds, loose scope) and "no" rows are listed as not predicted, with the verdict;
- `whole_run_scope` is "steady" when the source computed the figure as iteration time ×
  steps (Nemotron-4 15B: no run losses in it, so no production overhead is added), else
  "wall_clock";
- cells written as text ("32 (8 KV)", "~576 sequences", "768 -> 1536 -> 2304 (ramp)") are
  read to the number they state, and every reading that is not verbatim goes into `notes`;
- the optional `tp`, `pp`, `dp` and `micro_batch` columns (our additions) are the layout a
  source states; blank ones are left to the layout search;
- an MoE's "512 per expert; 32 experts, top-8" FFN cell gives `expert_ffn_hidden_size`,
  `n_experts` and `moe_top_k` (the expert GEMMs' shape, see calibration.expert_gemm_efficiency).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

WHOLE_RUN_COLUMNS: tuple[str, ...] = (
    "run_id", "family", "model_name", "params_billion", "active_params_billion", "n_layers",
    "hidden_size", "n_heads", "ffn_hidden_size", "vocab_size", "seq_len", "global_batch",
    "tokens_total", "gpu", "gpu_count", "precision", "gpu_hours", "source_title", "source_url",
    "usable_for_goodput_calibration")
USABLE_VERDICTS: tuple[str, ...] = ("yes", "partial", "no")
# Optional columns GPU Planner added to its copy: the layout a source states (blank: the
# layout search chooses, as for any reference row).
LAYOUT_COLUMNS: tuple[str, ...] = ("tp", "pp", "dp", "micro_batch")
# Columns only the mapped whole runs carry (blank for the other reference and measured runs).
WHOLE_RUN_ONLY_COLUMNS: tuple[str, ...] = (
    "expert_ffn_hidden_size", "n_experts", "moe_top_k", "whole_run_usable", "whole_run_scope")
# Whole-run GPU names -> catalog names. Where the source leaves memory or form factor open the
# 80 GB SXM part is read (the common cluster part of its era); the note of the row says so.
GPU_PATTERNS: tuple[tuple[str, str, str], ...] = (
    (r"H100", "H100 SXM5-80GB", "H100 read as H100 SXM5-80GB"),
    (r"A100.*40\s*GB", "A100 SXM4-40GB", ""),
    (r"A100", "A100 SXM4-80GB", "A100 read as A100 SXM4-80GB"),
    (r"V100", "V100 SXM2-32GB", "V100 read as V100 SXM2-32GB"),
    (r"MI250X", "Instinct MI250X OAM-128GB", ""),
    (r"MI250", "Instinct MI250 OAM-128GB", ""),
    (r"NVIDIA GPUs", "H100 SXM5-80GB", "GPU type not stated: H100 SXM5-80GB assumed"),
)
PRECISIONS = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16",
              "fp8": "fp8"}
# "512 per expert; 32 experts, top-8" (Granite 3.0 MoE rows): expert FFN width, experts, top-k.
EXPERT_SHAPE = re.compile(r"(\d+)\s*per expert;\s*(\d+)\s*experts,\s*top-(\d+)")
NUMBER = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?(?:[eE][+-]?\d+)?)(?:\s*([kKMB])\b)?")
SCALE = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9}


def is_whole_runs_frame(frame: pd.DataFrame) -> bool:
    """True for a frame in the whole_runs.csv schema (it has the curation verdict column)."""
    return "usable_for_goodput_calibration" in frame.columns and "gpu_hours" in frame.columns


def _text(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _numbers(text: str) -> list[float]:
    """Every number in `text` before any parenthesis, with k/M/B suffixes applied."""
    head = text.split("(", 1)[0]
    return [float(m.group(1).replace(",", "")) * SCALE.get(m.group(2) or "", 1.0)
            for m in NUMBER.finditer(head)]


def _first_number(value: Any) -> float:
    found = _numbers(_text(value))
    return found[0] if found else math.nan


def _gpu(value: Any) -> tuple[str, str]:
    """(catalog GPU name, note) of a whole-run `gpu` cell; ("", note) when unknown."""
    text = _text(value)
    for pattern, name, note in GPU_PATTERNS:
        if re.search(pattern, text):
            return name, note
    return "", f"GPU {text!r} not in the catalog"


def _gpu_count(value: Any) -> tuple[float, str]:
    """GPU count; a ramp ("768 -> 1536 -> 2304") is read at its largest stage."""
    text = _text(value)
    found = _numbers(text)
    if "->" in text and len(found) > 1:
        return max(found), f"GPU count ramp read at its largest stage ({max(found):,.0f})"
    return (found[0], "") if found else (math.nan, "")


def _global_batch(value: Any, seq_len: float) -> tuple[float, str]:
    """Global batch in sequences: "2M tokens (...)" is converted, a ramp read at its end."""
    text = _text(value)
    head = text.split("(", 1)[0]
    found = _numbers(text)
    if not found:
        return math.nan, ""
    if "token" in head and not math.isnan(seq_len):
        return round(found[0] / seq_len), f"global batch {found[0]:,.0f} tokens / seq_len"
    if "->" in head and len(found) > 1:
        return found[-1], "global batch ramp read at its final value"
    return found[0], ""


def _usable(value: Any) -> str:
    verdict = _text(value).strip().split(" ", 1)[0].lower()
    if verdict not in USABLE_VERDICTS:
        raise ValueError(f"usable_for_goodput_calibration {value!r}: must start with yes, "
                         "partial or no")
    return verdict


def whole_run_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """One whole_runs.csv row in the reference-runs schema (see module docstring)."""
    notes: list[str] = []
    gpu, gpu_note = _gpu(row.get("gpu"))
    count, count_note = _gpu_count(row.get("gpu_count"))
    seq_text = _text(row.get("seq_len")).strip()
    seq = float(seq_text) if re.fullmatch(r"\d+", seq_text) else math.nan
    if seq_text and math.isnan(seq):
        notes.append(f"seq_len {seq_text!r} not read as one length")
    batch, batch_note = _global_batch(row.get("global_batch"), seq)
    total, active = _first_number(row.get("params_billion")), _first_number(
        row.get("active_params_billion"))
    if "x" in _text(row.get("params_billion")).split("(", 1)[0]:
        total = math.nan  # "16x3.8B (total not stated)": no total parameter count
    hours_text = _text(row.get("gpu_hours"))
    notes += [n for n in (gpu_note, count_note, batch_note) if n]
    if hours_text.startswith("<"):
        notes.append("GPU-hours is an upper bound")
    # A figure the source computed as iteration time × steps is steady state: no run losses.
    is_steady = "iteration-time x steps" in _text(row.get("notes"))
    if is_steady:
        notes.append("figure is iteration time x steps: steady state, no production overhead")
    precision = PRECISIONS.get(_text(row.get("precision")).split(" ", 1)[0].lower(), "")
    is_moe = not math.isnan(active) and not math.isnan(total) and active < total
    expert = EXPERT_SHAPE.search(_text(row.get("ffn_hidden_size"))) if is_moe else None
    expert_ffn, n_experts, top_k = ((float(g) for g in expert.groups()) if expert
                                    else (math.nan, math.nan, math.nan))
    return {
        "run_id": row["run_id"], "source": f"{row['family']} (whole runs): {row['source_title']}",
        "source_url": row.get("source_url"), "workload_kind": "llm_moe" if is_moe else "llm",
        "model_name": row.get("model_name"), "params_billion": total,
        "active_params_billion": active, "n_layers": _first_number(row.get("n_layers")),
        "hidden_size": _first_number(row.get("hidden_size")),
        "n_heads": _first_number(row.get("n_heads")),
        "ffn_hidden_size": _first_number(row.get("ffn_hidden_size")) if not is_moe else math.nan,
        "expert_ffn_hidden_size": expert_ffn, "n_experts": n_experts, "moe_top_k": top_k,
        "vocab_size": _first_number(row.get("vocab_size")), "seq_len": seq,
        "global_batch": batch, "tokens_or_samples_total": _first_number(row.get("tokens_total")),
        "gpu": gpu or _text(row.get("gpu")), "gpu_count": count,
        **{column: _first_number(row.get(column)) for column in LAYOUT_COLUMNS},
        "precision": precision or math.nan, "metric": "gpu_hours",
        "value": _first_number(hours_text), "derived": "yes" if notes else "",
        "notes": "; ".join(notes),
        "whole_run_usable": _usable(row.get("usable_for_goodput_calibration")),
        "whole_run_scope": "steady" if is_steady else "wall_clock",
    }


def whole_runs_as_reference(frame: pd.DataFrame) -> pd.DataFrame:
    """whole_runs.csv rows in the reference-runs schema plus `whole_run_usable`.

    Raises ValueError naming the first missing column or the row with a bad verdict.
    """
    missing = [c for c in WHOLE_RUN_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"whole-runs file: missing columns {missing}")
    rows = []
    for line, raw in enumerate(frame.to_dict("records"), start=2):
        record = {str(k): v for k, v in raw.items()}
        try:
            rows.append(whole_run_row(record))
        except ValueError as exc:
            raise ValueError(f"whole-runs file line {line} ({record.get('run_id')}): {exc}"
                             ) from None
    return pd.DataFrame(rows)
