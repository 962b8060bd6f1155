"""Which tensor/pipeline parallel degrees a model admits, with the reason when it does not.

vLLM shards attention heads across ranks, so ``tp`` must divide ``num_attention_heads``; KV heads
are either split (``kv_heads % tp == 0``) or replicated (``tp % kv_heads == 0``); pipeline stages
need at least one layer each (vLLM ``ModelConfig.verify_with_parallel_config``).

>>> from planner.catalog.lookup import get_model
>>> valid_tp_degrees(get_model("Llama-3.1-70B").architecture, up_to=8)
[1, 2, 4, 8]
"""

from __future__ import annotations

from planner.errors import InputError
from planner.model.geometry import Architecture


def tp_problem(arch: Architecture, tp: int) -> str | None:
    """Why ``tp`` does not fit ``arch``, or None when it does."""
    if tp < 1:
        return "tensor parallel size must be an integer >= 1"
    if arch.num_attention_heads % tp:
        return f"{arch.num_attention_heads} attention heads do not split evenly over {tp} GPUs"
    if arch.mla is None and arch.num_kv_heads % tp and tp % arch.num_kv_heads:
        return f"{arch.num_kv_heads} KV heads can neither be split over nor replicated onto {tp} GPUs"
    return None


def valid_tp_degrees(arch: Architecture, up_to: int) -> list[int]:
    """Every valid degree up to ``up_to`` (a valid one divides the heads, so the loop stops there)."""
    return [tp for tp in range(1, min(up_to, arch.num_attention_heads) + 1) if tp_problem(arch, tp) is None]


def check_tp(arch: Architecture, tp: int, field: str = "tp") -> None:
    problem = tp_problem(arch, tp)
    if problem:
        options = ", ".join(str(t) for t in valid_tp_degrees(arch, max(8, tp)))
        raise InputError(field, tp, f"one of {options} ({problem})")


def check_pp(arch: Architecture, pp: int, field: str = "pp") -> None:
    if pp < 1 or pp > arch.num_layers:
        raise InputError(field, pp, f"an integer from 1 to the {arch.num_layers} layers")
