"""THE layout-knob table: every parallel-layout choice a user can fix, once.

Django-free. The plan's scenario fields (plans.core.fields: form, API schema, CLI options),
the simulation form (simulator.forms) and the simulation request parser (simulator.requests)
derive from LAYOUT_KNOBS; `tests/test_vocabulary.py` fails when a knob's bounds are written
out anywhere else. Blank means the simulator searches that knob. Choices must match the
simulator core's (simulator.core.layout.RECOMPUTE_MODES, simulator.core.hardware.PRECISIONS);
a test keeps them equal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

KNOB_KINDS = ("integer", "choice", "flag")


@dataclass(frozen=True)
class LayoutKnob:
    """One layout knob: `kind` integer (within [minimum, maximum]; every integer knob has
    both: the API schema refuses what is outside), choice (one of
    `choices`) or flag (yes/no). `label` names it in messages; `unit` follows numbers;
    `example` is a typical value. `is_on_forms`: offered on the plan and simulation forms
    (else only the JSON API takes it); `is_planned`: a plan may fix it too."""

    name: str
    kind: str
    label: str
    unit: str = ""
    example: str = ""
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    help: str = ""
    is_on_forms: bool = True
    is_planned: bool = True

    def __post_init__(self) -> None:
        if self.kind not in KNOB_KINDS:
            raise ValueError(f"{self.name}: unknown kind {self.kind!r}")
        if (self.kind == "choice") != bool(self.choices):
            raise ValueError(f"{self.name}: a choice knob, and only one, lists its choices")


LAYOUT_KNOBS: tuple[LayoutKnob, ...] = (
    LayoutKnob("tp", "integer", "Tensor parallel", "GPUs", "8", 1, 64),
    LayoutKnob("pp", "integer", "Pipeline parallel", "stages", "4", 1, 128),
    LayoutKnob("dp", "integer", "Data parallel", "replicas", "16", 1, 65_536,
               is_on_forms=False, is_planned=False),
    LayoutKnob("cp", "integer", "Context parallel", "GPUs", "2", 1, 64,
               is_on_forms=False, is_planned=False),
    LayoutKnob("zero_stage", "integer", "ZeRO stage", "", "1", 0, 3),
    LayoutKnob("recompute", "choice", "Activation recomputation",
               choices=("none", "selective", "full")),
    LayoutKnob("precision", "choice", "Precision", choices=("bf16", "fp16", "fp8", "tf32",
                                                            "fp32")),
    LayoutKnob("micro_batch", "integer", "Micro-batch", "samples per GPU", "2", 1, 4096,
               is_planned=False),
    LayoutKnob("virtual_stages", "integer", "Pipeline chunks per stage", "", "2", 1, 4,
               help="Interleaved 1F1B: each pipeline stage holds this many model chunks, so "
               "the bubble is (PP-1)/(chunks × micro-batches). Blank: the search chooses."),
    LayoutKnob("tp_comm_overlap", "flag", "Overlap tensor-parallel communication",
               help="Megatron-Core --tp-comm-overlap or PyTorch async TP: a share of the TP "
               "traffic, fitted on published runs, runs under the GEMMs. Off: all exposed."),
    LayoutKnob("fp8_rowwise", "flag", "fp8 with row-wise scaling",
               help="torchao \"rowwise\" fp8 recipes: tensor-parallel all-gathers stay in bf16. "
               "Off (Transformer Engine, torchao \"tensorwise\"): fp8 GEMM inputs are gathered "
               "in fp8, 1 byte per value. Only matters at fp8."),
    LayoutKnob("flash_attention", "flag", "Flash attention",
               help="On or blank: attention scores stay in on-chip memory (FlashAttention, "
               "PyTorch SDPA). Off: a stack without it (before mid-2022) moves each layer's "
               "heads × seq × seq scores through GPU memory.",
               is_on_forms=False, is_planned=False),
)
KNOBS_BY_NAME: dict[str, LayoutKnob] = {k.name: k for k in LAYOUT_KNOBS}
KNOB_NAMES: tuple[str, ...] = tuple(KNOBS_BY_NAME)


def zero_stage_as_run(pp: npt.ArrayLike, zero_stage: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """The ZeRO stage as it runs: with a pipeline, stages 2 and 3 cost and hold what 1 does.

    The one stack that combines weight or gradient sharding with pipelining, FSDP2 under
    torch.distributed.pipelining (torchtitan; DeepSpeed and Megatron-LM refuse or lack it),
    keeps the stage's weights gathered from the first forward to the last backward
    (torchtitan: reshard_after_forward=not pp_enabled) and turns gradient sync off for all
    but the last micro-batch: one all-gather and one reduce-scatter a step, with whole
    weights and gradients held meanwhile, like ZeRO 1's gradient all-reduce. Scalars or
    arrays (the simulator's ConfigArrays columns).
    """
    stage = np.asarray(zero_stage, dtype=np.float64)
    return np.where(np.asarray(pp) > 1, np.minimum(stage, 1.0), stage)
