"""Turn rows of reference_runs.csv into simulator inputs (workload, hardware, constraints).

Blank cells stay blank here; the simulator fills them later with its own choice, and every
assumption made for a row is recorded in its note.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from simulator.core.hardware import GpuSpec, Hardware, lookup_gpu, make_hardware
from simulator.core.layout import LayoutConstraints
from simulator.core.search import default_precision
from simulator.core.whole_runs import is_whole_runs_frame, whole_runs_as_reference
from simulator.core.workloads import (
    TrainingGoal,
    Workload,
    bert,
    default_global_batch,
    dense_llm,
    llm_from_params,
    lora,
    resnet50,
)

# Modern decoder LLMs pretrain at 4,096 tokens (Llama 2, Granite 3.0, SmolLM3, Phi-3).
DEFAULT_SEQ_LEN = 4096
DEFAULT_VOCAB = 51200
# MLPerf BERT from round v1.0 on runs unpadded/packed sequences; about half of the 512
# positions of the phase-2 Wikipedia data are padding (Krell et al. 2021, sequence packing).
MLPERF_BERT_TOKEN_FILL = 0.5
# An MLPerf Training round: group 1 the version ("2.1"), group 2 its major number.
MLPERF_ROUND = re.compile(r"MLPerf Training v((\d+)\.\d+)")
# The year each MLPerf Training round was published (v0.5 December 2018 ... v5.0 June 2025).
MLPERF_ROUND_YEARS: dict[str, int] = {"0.5": 2018, "0.6": 2019, "0.7": 2020, "1.0": 2021,
                                      "1.1": 2021, "2.0": 2022, "2.1": 2022, "3.0": 2023,
                                      "3.1": 2023, "4.0": 2024, "4.1": 2024, "5.0": 2025}
YEAR_PATTERNS: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"\bSC(\d\d)\b"), 2000),            # a Supercomputing paper: "SC21"
    (re.compile(r"\barXiv (\d\d)\d\d\.\d"), 2000),  # an arXiv id starts yymm
    (re.compile(r"\b(20[12]\d)\b"), 0))               # a year written out
# GPU-hours barely depend on the GPU count; without one, plan the best layout at this scale.
DEFAULT_GPU_COUNT = 256
# The columns every row is read by (measured_runs.REQUIRED_COLUMNS and the row's source).
REQUIRED_COLUMNS = ("run_id", "source", "workload_kind", "params_billion", "gpu", "gpu_count",
                    "metric", "value")


@dataclass(frozen=True)
class RunInputs:
    """Simulator inputs for one reference run; `notes` lists assumptions made."""

    workload: Workload
    hardware: Hardware
    constraints: LayoutConstraints
    goal: TrainingGoal
    notes: tuple[str, ...]


def load_reference_runs(*paths: str) -> pd.DataFrame:
    """Read one or more reference-runs CSVs into one frame, in order.

    A file in the whole_runs.csv schema is mapped onto the reference-runs columns first
    (metric gpu_hours, see whole_runs.py); its rows carry `whole_run_usable`.
    """
    if not paths:
        raise ValueError("give at least one reference-runs file")
    frames = []
    for path in paths:
        frame = pd.read_csv(path)
        frame = whole_runs_as_reference(frame) if is_whole_runs_frame(frame) else frame
        missing = [name for name in REQUIRED_COLUMNS if name not in frame.columns]
        if missing:
            raise ValueError(f"{os.path.basename(path)} has no {', '.join(missing)} column"
                             f"{'s' * (len(missing) > 1)} (reference-runs and whole_runs.csv "
                             "files have them)")
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def run_family(source: str) -> str:
    """Validation family of a row: its `source` up to the first ": ".

    One paper, one repository's benchmark table or one MLPerf round ("MLPerf Training v2.1
    results: <system>" -> "MLPerf Training v2.1 results"; both Lambda csv tables and both
    DeepLearningExamples READMEs become one repository each). Sources without ": " are their
    own family (each torchtitan benchmark file, the llm-foundry README).
    """
    return str(source).split(": ", 1)[0].strip()


def run_year(row: Mapping[str, Any]) -> int:
    """Year of a run (its software era): the row's `run_year` when given, else read from its
    source (an MLPerf round, "SC21", an arXiv id, a year written out); 0 when unknown."""
    given = _num(row, "run_year")
    if not math.isnan(given):
        return int(given)
    source = str(row.get("source", ""))
    mlperf = MLPERF_ROUND.search(source)
    if mlperf is not None:
        return MLPERF_ROUND_YEARS.get(mlperf.group(1), 0)
    for pattern, offset in YEAR_PATTERNS:
        match = pattern.search(source)
        if match is not None:
            return offset + int(match.group(1))
    return 0


def _num(row: Mapping[str, Any], key: str) -> float:
    value = row.get(key)
    return math.nan if value is None or pd.isna(value) else float(value)


def _int_or_none(row: Mapping[str, Any], key: str) -> int | None:
    value = _num(row, key)
    return None if math.isnan(value) else int(value)


def _str_or_none(row: Mapping[str, Any], key: str) -> str | None:
    value = row.get(key)
    return None if value is None or pd.isna(value) or str(value) == "" else str(value)


def row_workload(row: Mapping[str, Any]) -> tuple[Workload, list[str]]:
    """Workload of a reference row. Raises ValueError when essentials are missing."""
    kind, params = str(row.get("workload_kind")), _num(row, "params_billion") * 1e9
    if math.isnan(params):
        raise ValueError("missing params_billion")
    if kind == "resnet50":
        if _is_mlperf(str(row.get("source", ""))):
            return replace(resnet50(), has_fused_epilogues=True), [
                "MLPerf-tuned CNN: fused convolution epilogues"]
        if _str_or_none(row, "memory_format") == "nchw":
            return replace(resnet50(), is_channels_last=False), [
                "NCHW activations: 16-bit convolutions transpose them"]
        return resnet50(), []
    if kind not in ("llm", "llm_moe", "llm_lora", "bert"):
        raise ValueError(f"workload kind {kind!r} has no model in the simulator")
    notes: list[str] = []
    seq = _int_or_none(row, "seq_len")
    if seq is None:
        seq = DEFAULT_SEQ_LEN
        notes.append(f"seq_len assumed {DEFAULT_SEQ_LEN} (modern decoder LLM default)")
    active = _num(row, "active_params_billion") * 1e9
    is_moe = kind == "llm_moe" and not math.isnan(active)
    # An MoE without its shape is shaped like its active model (the experts widen only the FFN).
    workload = _transformer(row, kind, active if is_moe else params, seq, notes)
    if is_moe:
        workload = _with_expert_shape(
            replace(workload, kind="llm_moe", params=params, trainable_params=params,
                    active_params=active), row, notes)
    if kind == "llm_lora":
        workload = lora(workload)
        notes.append("LoRA rank 16 assumed")
    if kind == "bert" and _is_unpadded_mlperf(str(row.get("source", ""))):
        workload = replace(workload, token_fill=MLPERF_BERT_TOKEN_FILL)
        notes.append(f"unpadded MLPerf BERT: token fill {MLPERF_BERT_TOKEN_FILL}")
    return workload, notes


def _with_expert_shape(workload: Workload, row: Mapping[str, Any],
                       notes: list[str]) -> Workload:
    """An MoE row's workload with its expert shape (optional columns expert_ffn_hidden_size,
    n_experts, moe_top_k); unchanged when any is blank (the experts run at the dense shape)."""
    width, experts, top_k = (_int_or_none(row, k)
                             for k in ("expert_ffn_hidden_size", "n_experts", "moe_top_k"))
    if width is None or experts is None or top_k is None:
        return workload
    if not 0 < top_k <= experts or width <= 0:
        raise ValueError(f"moe_top_k {top_k} must be between 1 and n_experts {experts} and "
                         f"expert_ffn_hidden_size {width} positive")
    notes.append(f"{experts} experts of FFN {width}, top-{top_k}")
    return replace(workload, expert_ffn_hidden_size=width, n_experts=experts,
                   experts_per_token=top_k)


def _is_unpadded_mlperf(source: str) -> bool:
    match = MLPERF_ROUND.search(source)
    return match is not None and int(match.group(2)) >= 1


def _is_mlperf(source: str) -> bool:
    return MLPERF_ROUND.search(source) is not None


def _transformer(row: Mapping[str, Any], kind: str, params: float, seq: int,
                 notes: list[str]) -> Workload:
    layers, hidden = _int_or_none(row, "n_layers"), _int_or_none(row, "hidden_size")
    if layers is None or hidden is None:
        notes.append("shape derived from parameter count")
        return llm_from_params(str(row.get("model_name")), params, seq_len=seq)
    heads = _int_or_none(row, "n_heads") or max(1, hidden // 128)
    vocab = _int_or_none(row, "vocab_size") or DEFAULT_VOCAB
    name = str(row.get("model_name"))
    if kind == "bert":
        return bert(name, n_layers=layers, hidden_size=hidden, n_heads=heads, seq_len=seq,
                    vocab_size=vocab, params=params)
    return dense_llm(name, n_layers=layers, hidden_size=hidden, n_heads=heads, seq_len=seq,
                     vocab_size=vocab, ffn_hidden_size=_int_or_none(row, "ffn_hidden_size"),
                     params=params)


def _gpu_name(row: Mapping[str, Any]) -> str:
    """The row's GPU; rows whose notes flag the 500 W Grand Teton H100 use its alias."""
    name, notes = str(row.get("gpu")), str(row.get("notes", ""))
    if name == "H100 SXM5-80GB" and "Grand Teton" in notes and "500 W" in notes:
        return "H100 SXM 500W (Grand Teton)"
    return name


def row_hardware(row: Mapping[str, Any], gpus: Mapping[str, GpuSpec]) -> tuple[Hardware, list[str]]:
    """Hardware of a reference row; single-GPU runs use a one-GPU 'node'."""
    gpu = lookup_gpu(dict(gpus), _gpu_name(row))
    count = _int_or_none(row, "gpu_count")
    notes: list[str] = []
    degrees = [_int_or_none(row, k) for k in ("tp", "pp", "dp", "cp")]
    if count is None and row.get("metric") == "gpu_hours":
        if degrees[2] is not None:
            count = math.prod(d or 1 for d in degrees)
            notes.append(f"gpu_count not given: {count} GPUs from the parallel degrees")
        else:
            count = DEFAULT_GPU_COUNT
            notes.append(f"gpu_count not given: best layout planned at {count} GPUs "
                         "(GPU-hours barely depend on it)")
    if count is None or count < 1:
        raise ValueError("missing gpu_count")
    per_node = min(_int_or_none(row, "gpus_per_node") or 8, count)
    if count % per_node:
        raise ValueError(f"gpu_count {count} is not a multiple of gpus_per_node {per_node}")
    inter = _num(row, "inter_node_gbps_per_node")
    if math.isnan(inter) and count > per_node:
        notes.append("inter-node bandwidth assumed")
    hardware = make_hardware(gpu, gpus_per_node=per_node, n_nodes=count // per_node,
                             intra_node=_str_or_none(row, "intra_node") or "unknown",
                             inter_node_gbits_per_s=None if math.isnan(inter) else inter)
    return hardware, notes


def row_constraints(row: Mapping[str, Any],
                    hardware: Hardware) -> tuple[LayoutConstraints, list[str]]:
    """Given layout fields of a row; blank ones are left to the layout search."""
    precision = _str_or_none(row, "precision")
    notes = []
    if precision is None:
        precision = default_precision(hardware)
        notes.append(f"precision chosen: {precision}")
    constraints = LayoutConstraints(
        tp=_int_or_none(row, "tp"), pp=_int_or_none(row, "pp"), dp=_int_or_none(row, "dp"),
        cp=_int_or_none(row, "cp"), zero_stage=_int_or_none(row, "zero_stage"),
        recompute=_str_or_none(row, "activation_recompute"), precision=precision,
        micro_batch=_int_or_none(row, "micro_batch"),
        virtual_stages=_int_or_none(row, "virtual_stages"),
        tp_comm_overlap=_str_or_none(row, "tp_comm_overlap") == "yes",
        fp8_rowwise=_str_or_none(row, "fp8_rowwise") == "yes",
        flash_attention=False if _str_or_none(row, "flash_attention") == "no" else None)
    if constraints.flash_attention is False:
        notes.append("no flash attention: attention scores through HBM")
    return constraints, notes


def batch_note(workload: Workload) -> str:
    """How the default global batch was chosen, for a row or a plan without one."""
    batch = default_global_batch(workload)
    if workload.kind in ("llm", "llm_moe"):
        return (f"global batch assumed {batch:,} sequences ({batch * workload.seq_len:,} "
                f"tokens, published practice for {workload.params / 1e9:.3g}B parameters)")
    return f"global batch assumed {batch:,} samples"


def row_goal(row: Mapping[str, Any], workload: Workload) -> TrainingGoal:
    """Goal from tokens_or_samples_total (one sample when blank) and the global batch."""
    total = _num(row, "tokens_or_samples_total")
    batch = _int_or_none(row, "global_batch")
    if math.isnan(total):
        return TrainingGoal(samples=1.0, global_batch_samples=batch)
    if workload.kind in ("llm", "llm_moe", "llm_lora"):
        return TrainingGoal(tokens=total, global_batch_samples=batch)
    return TrainingGoal(samples=total, global_batch_samples=batch)


TIME_METRICS: tuple[str, ...] = ("time_to_train_minutes", "gpu_hours")


def run_inputs(row: Mapping[str, Any], gpus: Mapping[str, GpuSpec]) -> RunInputs:
    """All simulator inputs for one reference row. Raises ValueError when not predictable.

    A time metric needs the run's work: without tokens_or_samples_total the row is refused.
    """
    if row.get("metric") in TIME_METRICS and math.isnan(_num(row, "tokens_or_samples_total")):
        raise ValueError("missing tokens_or_samples_total")
    workload, w_notes = row_workload(row)
    hardware, h_notes = row_hardware(row, gpus)
    constraints, c_notes = row_constraints(row, hardware)
    goal = row_goal(row, workload)
    g_notes = [batch_note(workload)] if goal.global_batch_samples is None else []
    return RunInputs(workload, hardware, constraints, goal,
                     tuple(w_notes + g_notes + h_notes + c_notes))
