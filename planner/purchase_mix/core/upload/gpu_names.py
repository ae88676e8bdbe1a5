"""Match the GPU names found in job histories ("A100", "a100-80gb", "Tesla V100-SXM2-32GB")
to catalog accelerators. Pure string logic; the caller passes the catalog rows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)(?:g|gb|gib)$")
_FORMS = ("sxm5", "sxm4", "sxm3", "sxm2", "sxm", "pcie", "nvl", "hgx", "oam")


@dataclass(frozen=True)
class CatalogGpu:
    """One catalog accelerator as the matcher sees it (memory in GB)."""

    slug: str
    model: str
    variant: str
    memory_gb: float


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _tokens(name: str) -> list[str]:
    return [token for token in re.split(r"[\s_\-/:]+", name.lower()) if token]


def _model_matches(token: str, gpu: CatalogGpu) -> bool:
    model = _key(gpu.model)
    return model == token or (len(token) >= 3 and model.endswith(token))


def _narrow(candidates: list[CatalogGpu], keep: list[CatalogGpu]) -> list[CatalogGpu]:
    """Apply a filter only when something survives it: extra words never erase a match."""
    return keep or candidates


def match_accelerators(name: str, catalog: Sequence[CatalogGpu]) -> tuple[str, ...]:
    """Slugs of the catalog accelerators a history's GPU name can mean (best guesses first).

    An exact slug wins; otherwise the first word that names a model (A100, H100, L40S,
    MI300X, RTX4090 ...) picks the candidates, and a memory size ("80GB") or form factor
    ("SXM4", "PCIe") in the name narrows them. Returns () when nothing matches.
    """
    wanted = name.strip().lower()
    exact = [gpu.slug for gpu in catalog if gpu.slug == wanted]
    if exact:
        return tuple(exact)
    tokens = _tokens(name)
    candidates: list[CatalogGpu] = []
    for token in (_key(token) for token in tokens):
        candidates = [gpu for gpu in catalog if token and _model_matches(token, gpu)]
        if candidates:
            break
    for token in tokens:
        memory = _MEMORY.match(token)
        if memory:
            size = float(memory.group(1))
            candidates = _narrow(candidates, [g for g in candidates if g.memory_gb == size])
        form = next((f for f in _FORMS if token.startswith(f)), None)
        if form:
            candidates = _narrow(
                candidates, [g for g in candidates if g.variant.lower().startswith(token)]
            )
            candidates = _narrow(
                candidates, [g for g in candidates if g.variant.lower().startswith(form)]
            )
    return tuple(gpu.slug for gpu in candidates)
