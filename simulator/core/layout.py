"""Parallel layouts: how a workload is split over GPUs, and at which precision."""

from __future__ import annotations

from dataclasses import dataclass

from planner.core.layout_knobs import zero_stage_as_run
from simulator.core.hardware import PRECISIONS

RECOMPUTE_MODES: tuple[str, ...] = ("none", "selective", "full")
ZERO_STAGES: tuple[int, ...] = (0, 1, 2, 3)


def searched_zero_stages(pp: int, fixed: int | None = None) -> tuple[int, ...]:
    """ZeRO stages a layout search tries at pipeline degree `pp`: the `fixed` one, else every
    stage that runs as itself (under a pipeline 2 and 3 run as 1, zero_stage_as_run, so
    trying them would only repeat stage 1's layouts)."""
    if fixed is not None:
        return (fixed,)
    return tuple(z for z in ZERO_STAGES if zero_stage_as_run(pp, z) == z)


@dataclass(frozen=True)
class Layout:
    """Degrees of parallelism and training settings of one configuration.

    GPUs used = tp·pp·dp·cp. The global batch in samples is micro_batch·dp·grad_accum;
    with pipeline parallelism grad_accum is the number of pipeline micro-batches.
    Tensor parallelism is assumed to use sequence parallelism (Megatron-LM, Korthikanti 2022).
    tp_comm_overlap: the tensor-parallel collectives are split into chunks that run under the
    neighbouring GEMMs (Megatron-Core --tp-comm-overlap, PyTorch async TP).
    fp8_rowwise: fp8 with row-wise scaling (torchao "rowwise" recipes): the tensor-parallel
    all-gathers stay in bf16. Otherwise (per-tensor scaling: Transformer Engine, torchao
    "tensorwise") fp8 GEMM inputs are cast before they are gathered, so TP all-gathers move
    1 byte per value (see tp_gather_bytes). Ignored at other precisions.
    """

    tp: int = 1
    pp: int = 1
    dp: int = 1
    cp: int = 1
    zero_stage: int = 0
    recompute: str = "none"
    precision: str = "bf16"
    micro_batch: int = 1
    grad_accum: int = 1
    virtual_stages: int = 1
    is_flash_attention: bool = True
    tp_comm_overlap: bool = False
    fp8_rowwise: bool = False

    def __post_init__(self) -> None:
        degrees = (self.tp, self.pp, self.dp, self.cp, self.micro_batch, self.grad_accum,
                   self.virtual_stages)
        if min(degrees) < 1:
            raise ValueError("parallel degrees, micro_batch and grad_accum must be >= 1")
        if self.zero_stage not in ZERO_STAGES:
            raise ValueError(f"zero_stage must be 0-3, got {self.zero_stage}")
        if self.recompute not in RECOMPUTE_MODES:
            raise ValueError(f"recompute must be one of {RECOMPUTE_MODES}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}")

    @property
    def is_fp8_rowwise(self) -> bool:
        """fp8 with row-wise scaling (the flag means nothing at other precisions)."""
        return self.fp8_rowwise and self.precision == "fp8"

    @property
    def n_gpus(self) -> int:
        return self.tp * self.pp * self.dp * self.cp

    @property
    def global_batch(self) -> int:
        return self.micro_batch * self.dp * self.grad_accum


@dataclass(frozen=True)
class LayoutConstraints:
    """A partial layout: None fields are chosen by `best_layout`."""

    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    cp: int | None = None
    zero_stage: int | None = None
    recompute: str | None = None
    precision: str | None = None
    micro_batch: int | None = None
    tp_comm_overlap: bool | None = None
    virtual_stages: int | None = None  # model chunks per pipeline stage (interleaved 1F1B)
    fp8_rowwise: bool | None = None
    # False for runs without flash attention (the attention scores go through HBM: runs
    # before mid-2022); None or True: flash attention (the simulator's default).
    flash_attention: bool | None = None


def bytes_per_value(precision: str) -> tuple[float, float, float, float]:
    """(activation, weight, gradient, optimizer) bytes per value for Adam training.

    Mixed precision (fp16/bf16/fp8) keeps 16-bit weights and gradients plus fp32 master
    weights, momentum and variance (K = 12, ZeRO paper). fp32/tf32 keep 4+4 and Adam's 8.
    """
    if precision in ("fp32", "tf32"):
        return 4.0, 4.0, 4.0, 8.0
    return 2.0, 2.0, 2.0, 12.0


def tp_gather_bytes(precision: str, fp8_rowwise: bool = False) -> float:
    """Bytes per value of the tensor-parallel all-gathers (sequence parallelism).

    At fp8 with per-tensor scaling the inputs of the fp8 GEMMs are cast to fp8 before the
    all-gather (Transformer Engine; torchao/torchtitan "float8 all-gather with TP", supported
    for tensorwise scaling only); row-wise recipes gather in bf16. Reduce-scatters of the
    GEMM outputs stay at the activation width either way.
    """
    if precision == "fp8" and not fp8_rowwise:
        return 1.0
    return bytes_per_value(precision)[0]
