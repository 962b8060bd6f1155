"""Map the names that logs and users write to catalog entries: models, GPUs, quantization.

Logs name a checkpoint (``Qwen/Qwen3-14B-AWQ``, ``meta-llama/Llama-3.1-8B-Instruct``) or a device
(``NVIDIA H100 80GB HBM3``); the planner needs the catalog architecture, the weight format the
checkpoint implies, and the GPU. Fine-tune suffixes (-Instruct, -Chat, -it) keep the architecture.

>>> match_model("meta-llama/Llama-3.1-8B-Instruct").model.id
'meta-llama/Llama-3.1-8B'
>>> m = match_model("Qwen/Qwen3-14B-AWQ"); m.model.id, m.weight_format
('Qwen/Qwen3-14B', 'int4-awq')
>>> match_gpu("NVIDIA H100 80GB HBM3").id
'h100-sxm-80gb'
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from planner.catalog.lookup import list_gpus, list_models, list_weight_formats
from planner.catalog.schemas import GpuSpec, ModelSpec
from planner.facts import data_cache

_VARIANT_SUFFIXES = ("instruct", "chat", "it", "hf", "base", "chat-hf", "v1.0", "chat-v1.0")


class ModelMatch(BaseModel):
    model: ModelSpec
    weight_format: str | None
    exact: bool


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")


@data_cache
def _quant_suffixes() -> tuple[tuple[str, str], ...]:
    """Checkpoint-name suffixes of quantized formats (their ids and aliases in ``data/precisions.json``),
    longest first."""
    found = {_norm(spelling): f.id for f in list_weight_formats() if f.quantized for spelling in (f.id, *f.aliases)}
    return tuple(sorted(found.items(), key=lambda kv: -len(kv[0])))


def _strip(name: str) -> tuple[str, str | None]:
    """Drop quantization and fine-tune suffixes: returns (base name, weight format or None)."""
    fmt = None
    changed = True
    while changed:
        changed = False
        for suffix, value in _quant_suffixes():
            if name.endswith("-" + suffix):
                name, fmt, changed = name[: -len(suffix) - 1], fmt or value, True
        for suffix in _VARIANT_SUFFIXES:
            if name.endswith("-" + suffix):
                name, changed = name[: -len(suffix) - 1], True
    return name, fmt


def match_model(text: str) -> ModelMatch | None:
    """The catalog model a checkpoint name refers to, or None."""
    wanted = _norm(text)
    short = _norm(text.rsplit("/", 1)[-1])
    for model in list_models():
        if wanted in (_norm(model.id), _norm(model.short_name)) or short == _norm(model.short_name):
            return ModelMatch(model=model, weight_format=None, exact=True)
    base, fmt = _strip(short)
    for model in list_models():
        model_base, _ = _strip(_norm(model.short_name))
        if base in (model_base, _norm(model.short_name)):
            return ModelMatch(model=model, weight_format=fmt, exact=False)
    return None


def match_gpu(text: str) -> GpuSpec | None:
    """The catalog GPU a device name refers to (``NVIDIA GeForce RTX 4090`` -> rtx-4090-24gb), or None.

    Each GPU's ``name_patterns`` in data/gpus.json are tried in ``match_priority`` order.
    """
    lowered = text.lower()
    for gpu in sorted(list_gpus(), key=lambda g: g.match_priority):
        if any(re.search(pattern, lowered) for pattern in gpu.name_patterns):
            return gpu
    return None
