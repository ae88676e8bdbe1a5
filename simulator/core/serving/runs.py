"""Published serving measurements (inference_runs.csv columns) -> cases the model can answer.

A case is one row read as: which model on which GPUs at which parallelism and precision, the
load (offline, a request rate, a fixed concurrency, a static batch, or a burst of requests), the
prompt and output lengths, and the measured metrics. A row the model cannot answer gets the
reason instead. What a row leaves blank is filled only by a stated rule, recorded in the case's
`assumptions` (see RULES below), never silently.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pandas as pd

from simulator.core.hardware import GpuSpec
from simulator.core.serving.models import SERVING_PRESETS, WEIGHT_BYTES

METRICS: tuple[str, ...] = ("throughput_tokens_per_s", "ttft_ms", "tpot_ms")
REQUIRED_COLUMNS: tuple[str, ...] = (
    "row_id", "source_url", "benchmark", "model", "gpu", "n_gpus", "tp", "pp", "ep",
    "precision", "framework", "scenario", "input_tokens", "output_tokens",
    "concurrency_or_qps", "concurrency_or_qps_kind", "ttft_ms", "tpot_ms", "latency_stat",
    "latency_constraint", "throughput_tokens_per_s", "throughput_basis", "quote", "caveats",
)
# (pattern on the `model` column, preset). First match wins.
MODEL_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"llama-?2-70b|llama 70b", "llama2-70b"), (r"llama-?2-13b", "llama2-13b"),
    (r"llama-3\.1-405b", "llama3.1-405b"), (r"llama-3\.1-70b", "llama3.1-70b"),
    (r"llama-3\.1-8b", "llama3.1-8b"), (r"mixtral-8x7b", "mixtral-8x7b"),
    (r"mistral-7b", "mistral-7b"), (r"gpt-j", "gptj-6b"), (r"deepseek", "deepseek-v3"),
)
# Row GPU names -> catalog names; "form factor not stated" rows are read as the SXM part,
# the only H200/H100 form factor TensorRT-LLM's tables were run on elsewhere in the file.
GPU_NAMES: dict[str, str] = {
    "H200 141GB (form factor not stated)": "H200 SXM-141GB",
    "H200 (form factor not stated)": "H200 SXM-141GB",
    "H100 80GB (form factor not stated)": "H100 SXM5-80GB",
    "GH200 144GB": "GH200 Superchip-144GB",
    "GH200 96GB": "GH200 Superchip-96GB",
    "GH200 480GB": "GH200 Superchip-96GB",
}
# Mean prompt lengths of MLPerf datasets, which the rows do not state (tokens). Assumptions:
# the reference implementations cap Llama 2 70B prompts at 1,024 tokens (OpenOrca) and GPT-J
# articles at 1,919 tokens (CNN/DailyMail); the means used here are round figures inside those
# caps, and every prediction that uses one lists it.
MLPERF_PROMPT_TOKENS: dict[str, float] = {"llama2-70b": 300.0, "mixtral-8x7b": 300.0,
                                          "gptj-6b": 800.0}
BURST_REQUESTS = re.compile(r"(\d+) requests per point")
# MLPerf GPT-J decodes with beam search: mlcommons/inference language/gpt-j/backend.py gen_kwargs
# {"num_beams": 4, "max_new_tokens": 128, "min_new_tokens": 30}; one beam's tokens are counted.
MLPERF_BEAMS: dict[str, int] = {"gptj-6b": 4}


@dataclass(frozen=True)
class ServingCase:
    """One row as the model reads it. `load` is requests/s for the whole system ("rate"),
    clients ("concurrency"), sequences ("static"), requests ("burst"), or 0 ("offline")."""

    row_id: str
    source: str
    model_key: str
    gpu_name: str
    n_gpus: int
    tp: int
    pp: int
    ep: int
    precision: str
    kv_bytes: float
    framework: str
    load_kind: str
    load: float
    prompt_tokens: float
    output_tokens: float  # NaN when unknown: throughput cannot be answered
    latency_stat: str  # "p99" or "mean"
    is_per_gpu: bool
    ttft_limit_s: float
    tpot_limit_s: float
    e2e_limit_s: float
    measured: tuple[tuple[str, float], ...]
    assumptions: tuple[str, ...]
    n_requests: int = 0  # requests per benchmark point when the source states it
    beams: int = 1  # sequences decoded per request (beam search)
    is_batch_tuned: bool = False  # the submitter sized the scheduler's batch to the benchmark
    unanswered: tuple[str, ...] = ()  # "metric: why" for measured values the model cannot answer

    @property
    def replicas(self) -> int:
        return max(self.n_gpus // (self.tp * self.pp), 1)

    def measured_value(self, metric: str) -> float:
        return dict(self.measured).get(metric, math.nan)


@dataclass(frozen=True)
class RowReading:
    """A row turned into a case, or the reason it cannot be."""

    row_id: str
    case: ServingCase | None
    reason: str


def source_of(url: str, scenario: str) -> str:
    """The publication a row comes from (the leave-one-source-out group)."""
    if "mlcommons" in url:
        return "mlperf-v4.1"
    if "perf-overview" in url:
        return "trtllm-online" if scenario == "server" else "trtllm-perf-overview"
    if "H100vsA100" in url or "H200launch" in url:
        return "trtllm-blogs"
    if "oracle" in url:
        return "oracle-mi300x"
    if "aiconfigurator" in url:
        return "aiconfigurator"
    if "lmsys" in url:
        return "lmsys-sglang"
    return re.sub(r"^https?://", "", url).split("/")[0] or "unknown"


def _number(value: object) -> float:
    try:
        out = float(str(value).strip())
    except ValueError:
        return math.nan
    return out


def _model_key(name: str) -> str | None:
    lowered = name.lower()
    for pattern, key in MODEL_PATTERNS:
        if re.search(pattern, lowered):
            return key
    return None


def _framework(text: str) -> str:
    lowered = text.lower()
    if "vllm" in lowered:
        return "vllm"
    if "sglang" in lowered:
        return "sglang"
    if "tensorrt" in lowered or "trtllm" in lowered or "trt-llm" in lowered:
        return "trtllm"
    return "other"


def _precision(row: pd.Series, gpu: GpuSpec, notes: list[str]) -> str | None:
    stated = str(row["precision"]).strip().lower()
    caveats = str(row["caveats"])
    if "qformat fp8" in caveats:
        notes.append("precision fp8: the row's caveat quotes the submitter's --qformat fp8")
        return "fp8"
    if (row["benchmark"] == "mlperf" and _framework(str(row["framework"])) == "trtllm"
            and gpu.supports("fp8") and stated in ("fp16", "bf16")):
        notes.append("precision fp8: NVIDIA's MLPerf v4.1 TensorRT code quantizes to fp8 on "
                     "GPUs with fp8 math (caveat of D001-D004; the L40S rows quote its "
                     "--tp_size=4 for quantization); the row states weight_data_types fp16")
        return "fp8"
    if stated in ("fp16", "bf16", "fp8"):
        return stated
    return None


def _smallest_tp(key: str, gpu: GpuSpec, precision: str, n_gpus: int) -> int:
    """Smallest power-of-two TP whose weights fit in 90 % of the GPUs' memory with room."""
    model = SERVING_PRESETS[key]
    tp = 1
    while tp < n_gpus:
        per_gpu = model.params_total * WEIGHT_BYTES[precision] / tp / 1024**3
        if per_gpu < 0.7 * gpu.memory_gib:
            break
        tp *= 2
    return min(tp, n_gpus)


def _mlperf_output_tokens(row: pd.Series) -> float:
    """Output tokens per sample: tokens/s over samples/s, both quoted from the run log."""
    match = re.search(r"samples per second\s*:?\s*([\d.]+)", str(row["quote"]), re.IGNORECASE)
    throughput = _number(row["throughput_tokens_per_s"])
    if match and throughput > 0:
        return throughput / float(match.group(1))
    return math.nan


def _limits(text: str) -> tuple[float, float, float]:
    def find(name: str) -> float:
        match = re.search(rf"{name} \(ns\): (\d+)", text)
        return float(match.group(1)) / 1e9 if match else math.inf
    return find("ttft_latency"), find("tpot_latency"), find("target_latency")


def _requests_per_point(caveats: str) -> int:
    match = BURST_REQUESTS.search(caveats)
    return int(match.group(1)) if match else 0


def _load(row: pd.Series, source: str) -> tuple[str, float] | None:
    scenario = str(row["scenario"])
    kind = str(row["concurrency_or_qps_kind"]).lower()
    value = _number(row["concurrency_or_qps"])
    if scenario == "offline":
        return "offline", 0.0
    if scenario == "server":
        if math.isinf(value):
            match = BURST_REQUESTS.search(str(row["caveats"]))
            return ("burst", float(match.group(1))) if match else None
        return ("rate", value) if value > 0 else None
    if "static batch" in kind:
        return ("static", value) if value > 0 else None
    if "concurrency" in kind:
        return ("concurrency", value) if value > 0 else None
    return None


def read_row(row: pd.Series, gpus: dict[str, GpuSpec]) -> RowReading:
    """One inference_runs.csv row -> RowReading (a case, or why not)."""
    row_id = str(row["row_id"])
    source = source_of(str(row["source_url"]), str(row["scenario"]))
    key = _model_key(str(row["model"]))
    if key is None:
        return RowReading(row_id, None, f"model {row['model']!r} has no serving preset")
    gpu_name = GPU_NAMES.get(str(row["gpu"]), str(row["gpu"]))
    if gpu_name not in gpus:
        return RowReading(row_id, None, f"GPU {row['gpu']!r} is not in the catalog")
    gpu = gpus[gpu_name]
    notes: list[str] = []
    if gpu_name != str(row["gpu"]):
        notes.append(f"GPU read as {gpu_name}")
    if ("separate nodes" in str(row["caveats"])
            or "disaggregation" in str(row["framework"]).lower()):
        return RowReading(row_id, None, "prefill/decode disaggregation across nodes is not "
                          "modelled (one replica serves both phases)")
    precision = _precision(row, gpu, notes)
    if precision is None:
        return RowReading(row_id, None, "precision not stated in the row")
    load = _load(row, source)
    if load is None:
        return RowReading(row_id, None, f"load {row['concurrency_or_qps']!r} "
                          f"({row['concurrency_or_qps_kind']}) cannot be read")
    n_gpus = int(_number(row["n_gpus"]))
    tp = _number(row["tp"])
    if math.isnan(tp):
        if "whole 8-GPU instance" in str(row["throughput_basis"]):
            tp = float(n_gpus)
            notes.append(f"tp {n_gpus}: one instance on all {n_gpus} GPUs (source)")
        else:
            tp = float(_smallest_tp(key, gpu, precision, n_gpus))
            notes.append(f"tp {int(tp)}: not stated, smallest power of two the weights fit")
    pp = _number(row["pp"])
    ep = _number(row["ep"])
    prompt = _number(row["input_tokens"])
    if math.isnan(prompt) and row["benchmark"] == "mlperf" and key in MLPERF_PROMPT_TOKENS:
        prompt = MLPERF_PROMPT_TOKENS[key]
        notes.append(f"prompt {prompt:.0f} tokens: MLPerf mean not stated (assumption)")
    if math.isnan(prompt):
        return RowReading(row_id, None, "prompt length not stated")
    output = _number(row["output_tokens"])
    if math.isnan(output) and row["benchmark"] == "mlperf":
        output = _mlperf_output_tokens(row)
        if not math.isnan(output):
            notes.append(f"output {output:.1f} tokens: quoted tokens/s over samples/s")
    stat = str(row["latency_stat"]).lower()
    kv_bytes = 2.0
    if "kv_cache_dtype fp8" in str(row["caveats"]):
        kv_bytes = 1.0
    elif precision == "fp8":
        kv_bytes = 1.0
        notes.append("KV cache fp8: the default with fp8 weights (not stated in the row)")
    beams = MLPERF_BEAMS.get(key, 1) if row["benchmark"] == "mlperf" else 1
    if beams > 1:
        notes.append(f"beam search, {beams} beams: the MLPerf reference's gen_kwargs "
                     "(language/gpt-j/backend.py)")
    is_batch_tuned = row["benchmark"] == "mlperf"
    if is_batch_tuned:
        notes.append("batch limited by the KV cache only: MLPerf closed-division submitters "
                     "size the scheduler's batch to the benchmark")
    ttft_limit, tpot_limit, e2e_limit = _limits(str(row["latency_constraint"]))
    measured = tuple((m, _number(row[m])) for m in METRICS if not math.isnan(_number(row[m])))
    unanswered: tuple[str, ...] = ()
    if math.isnan(output) and any(m == "throughput_tokens_per_s" for m, _ in measured):
        # Output tokens/s of a run whose output length the source leaves out ("-"): no guess.
        measured = tuple((m, v) for m, v in measured if m != "throughput_tokens_per_s")
        unanswered = ("throughput_tokens_per_s: output length not stated",)
    case = ServingCase(
        row_id, source, key, gpu_name, n_gpus, int(tp), 1 if math.isnan(pp) else int(pp),
        1 if math.isnan(ep) else int(ep), precision, kv_bytes, _framework(str(row["framework"])),
        load[0], load[1], prompt, output, "p99" if stat.startswith("p99") else "mean",
        "PER GPU" in str(row["throughput_basis"]), ttft_limit, tpot_limit, e2e_limit,
        measured, tuple(notes), _requests_per_point(str(row["caveats"])), beams,
        is_batch_tuned, unanswered,
    )
    return RowReading(row_id, case, "")


def read_runs(frame: pd.DataFrame, gpus: dict[str, GpuSpec]) -> list[RowReading]:
    """Every row of a file with the inference_runs.csv columns; ValueError naming missing
    columns."""
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"missing columns: {', '.join(missing)}")
    return [read_row(row, gpus) for _, row in frame.iterrows()]
