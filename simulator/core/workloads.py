"""Training workloads (what is trained) and goals (how much of it).

FLOP counts follow Megatron-LM / PaLM conventions: a forward pass costs 2 FLOPs per active
parameter per token plus 4·l·s²·h for attention scores and values (no causal halving). All
FLOP figures are per sample (one sequence, or one image); a "sample" of a transformer is
`seq_len` tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

WORKLOAD_KINDS: tuple[str, ...] = ("llm", "llm_moe", "llm_lora", "bert", "resnet50", "generic")
TRANSFORMER_KINDS: frozenset[str] = frozenset({"llm", "llm_moe", "llm_lora", "bert"})
# Korthikanti et al. 2022: bytes of 16-bit activations per token per layer are 34·h (+5·a·s).
ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN = 34.0
# Token permutation of a mixture of experts (Megatron-Core / MegaBlocks style): each of a
# token's top-k copies is gathered into expert order and scattered back, a 16-bit read and
# write of the hidden vector each way: 2 passes × 2 bytes = 4 bytes per hidden value per copy.
MOE_PERMUTE_BYTES_PER_COPY = 4.0
# The expert FFNs never hold all of an MoE's matmul FLOPs (attention projections, LM head).
MAX_EXPERT_GEMM_SHARE = 0.95


@dataclass(frozen=True)
class Workload:
    """A model to train. Transformer shape fields are 0 for non-transformer kinds.

    `forward_flops_per_sample` and `activation_bytes_per_sample` (16-bit, stored for backward)
    are used only by non-transformer kinds; transformers derive both from their shape.
    `gemm_rows_per_sample` is the GEMM row count one sample contributes (tokens, or output
    pixels of a typical convolution), which sets how well small batches fill the GPU.
    `token_fill` is the share of the seq_len positions that are real tokens when the
    framework skips padding (unpadded batches); linear compute and traffic scale with it,
    attention with its square. `has_fused_epilogues` marks CNN stacks that fuse batch norm,
    ReLU and the residual add into the convolutions (MLPerf-tuned NHWC kernels), which cuts
    their activation traffic. `is_channels_last` (CNNs): activations in NHWC, the layout
    tensor-core convolutions use (PyTorch channels_last, DeepLearningExamples' AMP configs,
    MLPerf); False for NCHW, whose 16-bit tensor-core convolutions transpose their inputs and
    outputs (timing.NCHW_TRANSPOSE_TRAFFIC_RATIO).
    """

    name: str
    kind: str
    params: float
    active_params: float
    trainable_params: float
    n_layers: int = 0
    hidden_size: int = 0
    n_heads: int = 0
    ffn_hidden_size: int = 0
    vocab_size: int = 0
    seq_len: int = 1
    forward_flops_per_sample: float = 0.0
    activation_bytes_per_sample: float = 0.0
    gemm_rows_per_sample: float = 1.0
    n_experts: int = 1
    token_fill: float = 1.0
    has_fused_epilogues: bool = False
    is_channels_last: bool = True
    expert_ffn_hidden_size: int = 0
    experts_per_token: int = 0

    def __post_init__(self) -> None:
        if self.kind not in WORKLOAD_KINDS:
            raise ValueError(f"unknown workload kind {self.kind!r}")
        if not (self.params > 0 and 0 < self.active_params <= self.params * (1 + 1e-9)):
            raise ValueError("need params > 0 and 0 < active_params <= params")
        if not 0 < self.trainable_params <= self.params * (1 + 1e-9):
            raise ValueError("need 0 < trainable_params <= params")
        if self.is_transformer and min(self.n_layers, self.hidden_size, self.seq_len) <= 0:
            raise ValueError("transformer workloads need n_layers, hidden_size and seq_len")
        if not 0 < self.token_fill <= 1:
            raise ValueError("token_fill must be in (0, 1]")
        if not self.is_transformer and self.forward_flops_per_sample <= 0:
            raise ValueError("non-transformer workloads need forward_flops_per_sample")

    @property
    def is_transformer(self) -> bool:
        return self.kind in TRANSFORMER_KINDS

    @property
    def tokens_per_sample(self) -> int:
        return self.seq_len if self.is_transformer else 1

    def linear_forward_flops_per_sample(self) -> float:
        """Forward FLOPs of all weight matmuls (incl. the LM head) for one sample."""
        if not self.is_transformer:
            return self.forward_flops_per_sample
        return 2.0 * self.active_params * self.seq_len * self.token_fill

    def attention_forward_flops_per_sample(self) -> float:
        """Forward FLOPs of attention scores and weighted values (4·l·s²·h) for one sample.

        Without padding a sample attends over its fill·seq_len real tokens only, so the
        quadratic term scales with token_fill squared.
        """
        if not self.is_transformer:
            return 0.0
        tokens = self.seq_len * self.token_fill
        return 4.0 * self.n_layers * tokens**2 * self.hidden_size

    def head_forward_flops_per_sample(self) -> float:
        """Forward FLOPs of the output projection, which recomputation never repeats."""
        return 2.0 * self.vocab_size * self.hidden_size * self.seq_len * self.token_fill

    def head_training_flops_per_sample(self) -> float:
        """Forward plus backward FLOPs of the output projection (0 without one); a frozen
        LoRA head has no weight gradient."""
        if not self.is_transformer:
            return 0.0
        return (2.0 if self.kind == "llm_lora" else 3.0) * self.head_forward_flops_per_sample()

    def model_flops_per_sample(self) -> float:
        """Model FLOPs per trained sample (PaLM MFU convention; no recomputation)."""
        attention = 3.0 * self.attention_forward_flops_per_sample()
        return self.linear_training_flops_per_sample() + attention

    def linear_training_flops_per_sample(self) -> float:
        """Forward plus backward matmul FLOPs; LoRA skips weight gradients of frozen weights."""
        linear = self.linear_forward_flops_per_sample()
        if self.kind == "llm_lora":
            return 2.0 * linear + 4.0 * self.trainable_params * self.seq_len * self.token_fill
        return 3.0 * linear

    def traffic_bytes_per_sample(self) -> float:
        """16-bit activation bytes written in a forward pass (drives the bandwidth term).

        A mixture of experts with a known shape also permutes every token to its experts and
        back (MoE_PERMUTE_BYTES_PER_COPY per hidden value of each of its top-k copies).
        """
        if not self.is_transformer:
            return self.activation_bytes_per_sample
        tokens = self.seq_len * self.token_fill
        per_hidden = ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN
        if self.has_expert_shape:
            per_hidden += MOE_PERMUTE_BYTES_PER_COPY * self.experts_per_token
        return per_hidden * tokens * self.hidden_size * self.n_layers

    @property
    def has_expert_shape(self) -> bool:
        """A mixture of experts whose expert FFN width and top-k are known."""
        return (self.kind == "llm_moe" and self.expert_ffn_hidden_size > 0
                and 0 < self.experts_per_token <= self.n_experts)

    def expert_gemm_share(self) -> float:
        """Share of the matmul FLOPs in the expert FFNs (gated: 3 matrices of hidden × expert
        width per active expert and layer); 0 without an expert shape."""
        if not self.has_expert_shape:
            return 0.0
        expert = (3.0 * self.hidden_size * self.expert_ffn_hidden_size * self.experts_per_token
                  * self.n_layers)
        return min(MAX_EXPERT_GEMM_SHARE, expert / self.active_params)

    def expert_token_fraction(self) -> float:
        """Share of a micro-batch's tokens each expert multiplies (top-k / experts); 1 dense."""
        return self.experts_per_token / self.n_experts if self.has_expert_shape else 1.0


@dataclass(frozen=True)
class TrainingGoal:
    """How much to train: exactly one of tokens, samples, or epochs over `dataset_samples`.

    `global_batch_samples` is the optimizer batch in samples (sequences or images); None lets
    the simulator use `default_global_batch`.
    """

    tokens: float | None = None
    samples: float | None = None
    epochs: float | None = None
    dataset_samples: float | None = None
    global_batch_samples: int | None = None

    def __post_init__(self) -> None:
        given = [v for v in (self.tokens, self.samples, self.epochs) if v is not None]
        if len(given) != 1 or given[0] <= 0:
            raise ValueError("give exactly one positive goal: tokens, samples or epochs")
        if self.epochs is not None and not (self.dataset_samples and self.dataset_samples > 0):
            raise ValueError("an epoch goal needs dataset_samples > 0")
        if self.global_batch_samples is not None and self.global_batch_samples < 1:
            raise ValueError("global_batch_samples must be >= 1")

    def total_samples(self, workload: Workload) -> float:
        """Samples to process for this goal."""
        if self.tokens is not None:
            return self.tokens / workload.tokens_per_sample
        if self.samples is not None:
            return self.samples
        return float(self.epochs or 0.0) * float(self.dataset_samples or 0.0)

    def global_batch(self, workload: Workload) -> int:
        """Global batch in samples, the given one or the workload's default."""
        return self.global_batch_samples or default_global_batch(workload)


# Published-practice global batch in tokens by total parameters (upper bound, tokens): GPT-3
# (Brown et al. 2020, Table 2.1) 0.5-1M below 3B; Pythia, TinyLlama and SmolLM2 ~2M at 1-2B;
# Llama 2 (7-70B), StableLM-3B and Granite 3.0 4M; Llama 3 405B 4M rising to 16M.
DEFAULT_BATCH_TOKENS: tuple[tuple[float, int], ...] = (
    (1e9, 2**20), (3e9, 2**21), (1e11, 2**22), (math.inf, 2**23))


def default_batch_tokens(params: float) -> int:
    """Published-practice global batch in tokens for a decoder of `params` parameters."""
    return next(tokens for limit, tokens in DEFAULT_BATCH_TOKENS if params < limit)


def default_global_batch(workload: Workload) -> int:
    """A conventional batch: the published-practice tokens for the model size
    (DEFAULT_BATCH_TOKENS) for LLMs, 4096 sequences for BERT, 2048 images else."""
    if workload.kind in ("llm", "llm_moe"):
        tokens = default_batch_tokens(workload.params)
        return int(max(1, 2 ** round(math.log2(tokens / workload.seq_len))))
    if workload.kind == "llm_lora":
        return 64
    return 4096 if workload.kind == "bert" else 2048


def decoder_params(
    n_layers: int, hidden_size: int, ffn_hidden_size: int, vocab_size: int,
    n_kv_heads_fraction: float = 1.0, is_gated_mlp: bool = False, is_tied_embedding: bool = True,
) -> float:
    """Parameter count of a decoder: attention, MLP and embeddings (norms and biases ignored)."""
    attention = 2 * hidden_size**2 * (1 + n_kv_heads_fraction)
    mlp = (3 if is_gated_mlp else 2) * hidden_size * ffn_hidden_size
    embeddings = vocab_size * hidden_size * (1 if is_tied_embedding else 2)
    return float(n_layers * (attention + mlp) + embeddings)


def dense_llm(
    name: str, *, n_layers: int, hidden_size: int, n_heads: int, seq_len: int, vocab_size: int,
    ffn_hidden_size: int | None = None, params: float | None = None,
) -> Workload:
    """A dense decoder LLM given by its architecture; `params` defaults to decoder_params."""
    ffn = ffn_hidden_size or 4 * hidden_size
    total = params or decoder_params(n_layers, hidden_size, ffn, vocab_size)
    return Workload(name, "llm", total, total, total, n_layers, hidden_size, n_heads, ffn,
                    vocab_size, seq_len, gemm_rows_per_sample=float(seq_len))


# Published decoder shapes (params, layers, hidden, heads): GPT-3 (Brown et al. 2020, Table
# 2.1) and Llama 1/2/3 (Touvron et al. 2023; Dubey et al. 2024).
STANDARD_SHAPES: tuple[tuple[float, int, int, int], ...] = (
    (125e6, 12, 768, 12), (350e6, 24, 1024, 16), (760e6, 24, 1536, 16),
    (1.3e9, 24, 2048, 16), (2.7e9, 32, 2560, 32), (6.7e9, 32, 4096, 32),
    (13e9, 40, 5120, 40), (32.5e9, 60, 6656, 52), (70e9, 80, 8192, 64),
    (175e9, 96, 12288, 96), (405e9, 126, 16384, 128),
)


def standard_shape(params: float) -> tuple[int, int, int]:
    """(layers, hidden, heads) of a standard decoder of `params` parameters.

    Takes the published shape nearest in log-parameters; off its size, the width scales with
    sqrt(params ratio), rounded so heads of 128 (64 below hidden 2048) come in multiples of 8
    (4 for small models) and tensor parallelism up to 8 divides them.
    """
    if params <= 0:
        raise ValueError("params must be positive")
    ref, layers, hidden, heads = min(STANDARD_SHAPES, key=lambda s: abs(math.log(params / s[0])))
    if abs(math.log(params / ref)) <= math.log(1.25):
        return layers, hidden, heads
    width = hidden * math.sqrt(params / ref)
    head_dim = 128 if width >= 2048 else 64
    step = head_dim * (8 if width >= 4096 else 4)
    new_hidden = max(step, step * round(width / step))
    return layers, new_hidden, new_hidden // head_dim


def llm_from_params(name: str, params: float, *, seq_len: int = 2048,
                    vocab_size: int = 51200) -> Workload:
    """A dense decoder of `params` parameters with a standard published shape (see
    standard_shape; FFN 4·hidden). The parameter count is kept as given."""
    n_layers, hidden, heads = standard_shape(params)
    return dense_llm(name, n_layers=n_layers, hidden_size=hidden, n_heads=heads,
                     seq_len=seq_len, vocab_size=vocab_size, params=params)


def moe_llm(base: Workload, *, total_params: float, n_experts: int, name: str = "") -> Workload:
    """A mixture-of-experts variant of `base`: `base.params` active, `total_params` stored."""
    return replace(base, name=name or base.name, kind="llm_moe", params=total_params,
                   active_params=base.active_params, trainable_params=total_params,
                   n_experts=n_experts)


def lora(base: Workload, *, rank: int = 16, adapted_matrices_per_layer: int = 4) -> Workload:
    """LoRA fine-tuning of `base`: frozen weights, trainable rank-`rank` adapters."""
    if rank < 1 or not base.is_transformer:
        raise ValueError("LoRA needs rank >= 1 and a transformer base")
    adapters = base.n_layers * adapted_matrices_per_layer * 2 * rank * base.hidden_size
    return replace(base, name=f"{base.name} LoRA r{rank}", kind="llm_lora",
                   trainable_params=float(adapters))


def bert(name: str, *, n_layers: int, hidden_size: int, n_heads: int, seq_len: int = 512,
         vocab_size: int = 30522, params: float | None = None) -> Workload:
    """A BERT-style encoder (bidirectional attention, same FLOP counting as decoders)."""
    total = params or decoder_params(n_layers, hidden_size, 4 * hidden_size, vocab_size)
    return Workload(name, "bert", total, total, total, n_layers, hidden_size, n_heads,
                    4 * hidden_size, vocab_size, seq_len, gemm_rows_per_sample=float(seq_len))


def resnet50() -> Workload:
    """ResNet-50 v1.5 at 224x224: 25,557,032 params (torchvision), 4.1 GMAC forward.

    Activations: about 23M stored values per image (conv, BN and ReLU outputs), 2 bytes each.
    """
    return Workload("ResNet-50", "resnet50", 25_557_032.0, 25_557_032.0, 25_557_032.0,
                    forward_flops_per_sample=8.2e9, activation_bytes_per_sample=46e6,
                    gemm_rows_per_sample=196.0)


def generic(name: str, *, params: float, forward_flops_per_sample: float,
            activation_bytes_per_sample: float, gemm_rows_per_sample: float = 256.0) -> Workload:
    """Any model given by parameters and forward FLOPs / stored activation bytes per sample."""
    return Workload(name, "generic", params, params, params,
                    forward_flops_per_sample=forward_flops_per_sample,
                    activation_bytes_per_sample=activation_bytes_per_sample,
                    gemm_rows_per_sample=gemm_rows_per_sample)


def _llama(name: str, layers: int, hidden: int, heads: int, ffn: int, vocab: int, seq: int,
           params: float) -> Workload:
    return dense_llm(name, n_layers=layers, hidden_size=hidden, n_heads=heads, seq_len=seq,
                     vocab_size=vocab, ffn_hidden_size=ffn, params=params)


def _mpt(size: str, layers: int, hidden: int, heads: int) -> Workload:
    return dense_llm(f"MPT-{size}", n_layers=layers, hidden_size=hidden, n_heads=heads,
                     seq_len=2048, vocab_size=50368)


PRESETS: dict[str, Workload] = {
    "gpt3-175b": dense_llm("GPT-3 175B", n_layers=96, hidden_size=12288, n_heads=96,
                           seq_len=2048, vocab_size=50257, params=175e9),
    "llama2-7b": _llama("Llama 2 7B", 32, 4096, 32, 11008, 32000, 4096, 6.74e9),
    "llama2-13b": _llama("Llama 2 13B", 40, 5120, 40, 13824, 32000, 4096, 13.0e9),
    "llama2-70b": _llama("Llama 2 70B", 80, 8192, 64, 28672, 32000, 4096, 68.98e9),
    "llama3-8b": _llama("Llama 3 8B", 32, 4096, 32, 14336, 128256, 8192, 8.03e9),
    "llama3-70b": _llama("Llama 3 70B", 80, 8192, 64, 28672, 128256, 8192, 70.55e9),
    "llama3-405b": _llama("Llama 3 405B", 126, 16384, 128, 53248, 128256, 8192, 405.0e9),
    "mpt-125m": _mpt("125M", 12, 768, 12),
    "mpt-350m": _mpt("350M", 24, 1024, 16),
    "mpt-1b": _mpt("1B", 24, 2048, 16),
    "mpt-3b": _mpt("3B", 32, 2560, 20),
    "mpt-7b": _mpt("7B", 32, 4096, 32),
    "mpt-13b": _mpt("13B", 40, 5120, 40),
    "mpt-30b": _mpt("30B", 48, 7168, 56),
    "mpt-70b": _mpt("70B", 80, 8192, 64),
    "bert-base": bert("BERT-base", n_layers=12, hidden_size=768, n_heads=12, params=110e6),
    "bert-large": bert("BERT-large", n_layers=24, hidden_size=1024, n_heads=16, params=340e6),
    "resnet50": resnet50(),
}
