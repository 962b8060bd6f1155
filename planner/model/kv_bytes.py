"""KV-cache bytes per token, whole model and per GPU, and the bytes a context of N tokens holds.

Per layer and token (the tensors a serving engine or ``transformers.DynamicCache`` stores):

* standard, GQA and MQA attention: ``2 · kv_heads · head_dim · bytes`` (a K and a V vector per head);
* under tensor parallelism each rank keeps ``max(1, kv_heads // tp)`` heads: KV heads are
  replicated when ``tp > kv_heads`` (vLLM ``ModelConfig.get_num_kv_heads``);
* MLA (DeepSeek-V2/V3): one latent of ``kv_lora_rank + qk_rope_head_dim`` values, not split by TP
  (vLLM ``MLAAttentionSpec``; SGLang ``profile_max_num_token``);
* sliding-window layers hold at most ``window + slack`` tokens of a sequence (transformers keeps
  ``window - 1``; vLLM sizes ``window - 1 + max_num_batched_tokens``), full layers hold all of them.

>>> from planner.catalog.lookup import get_model
>>> arch = get_model("Llama-3.1-70B").architecture
>>> kv_bytes_per_token(arch, 2), kv_bytes_per_token(arch, 2, tp=8)
(327680, 40960)
"""

from __future__ import annotations

from collections.abc import Iterable

from planner.errors import CatalogError, InputError
from planner.model.dtypes import KvDtype, WeightFormat, element_bytes
from planner.model.geometry import Architecture


def kv_element_bytes(kv_dtype: KvDtype, arch: Architecture, weight_format: WeightFormat | None = None) -> int:
    """Bytes per cached element; ``auto`` follows the model's activation dtype, as vLLM does.

    The activation dtype is the weight format's (fp32 runs cache in fp32; quantized formats
    compute in their ``unquantized_dtype``), else the config's ``torch_dtype``.
    """
    if kv_dtype.bytes is not None:
        return kv_dtype.bytes
    if weight_format is not None:
        return element_bytes(weight_format.activation_dtype)
    try:
        return element_bytes(arch.torch_dtype)
    except CatalogError:  # a torch_dtype the catalog does not know: 16-bit, as most checkpoints ship
        return 2


def kv_heads_per_gpu(arch: Architecture, tp: int) -> int:
    """KV heads one rank caches: ``max(1, kv_heads // tp)`` (replicated when tp exceeds them)."""
    if tp < 1:
        raise InputError("tp", tp, "an integer >= 1")
    return max(1, arch.num_kv_heads // tp)


def layer_kv_bytes_per_token(arch: Architecture, element_bytes: int, tp: int = 1) -> int:
    """Bytes one layer caches per token on one GPU."""
    if arch.mla is not None:
        return (arch.mla.kv_lora_rank + arch.mla.qk_rope_head_dim) * element_bytes
    return 2 * kv_heads_per_gpu(arch, tp) * arch.head_dim * element_bytes


def kv_bytes_per_token(arch: Architecture, element_bytes: int, tp: int = 1, layers: Iterable[int] | None = None) -> int:
    """Bytes each new token adds to the cache on one GPU, every layer counted in full.

    ``layers`` restricts the sum to one pipeline stage's layers (default: all of them).
    """
    n_layers = arch.num_layers if layers is None else len(list(layers))
    return n_layers * layer_kv_bytes_per_token(arch, element_bytes, tp)


def sliding_layers_kept_tokens(arch: Architecture, context_tokens: int, slack_tokens: int = 0) -> int:
    """Tokens a sliding-window layer keeps for a sequence of ``context_tokens`` tokens."""
    if arch.sliding_window is None:
        return context_tokens
    return max(0, min(context_tokens, arch.sliding_window + slack_tokens))


def kv_bytes_for_context(
    arch: Architecture,
    element_bytes: int,
    context_tokens: int,
    tp: int = 1,
    slack_tokens: int = 0,
    layers: Iterable[int] | None = None,
) -> int:
    """Bytes one sequence of ``context_tokens`` tokens holds, sliding layers capped at their window.

    >>> from planner.catalog.lookup import get_model
    >>> arch = get_model("gemma-2-9b").architecture        # 21 sliding + 21 global layers
    >>> kv_bytes_for_context(arch, 2, 8192) == 21 * 8192 * 8192 + 21 * 4096 * 8192
    True
    """
    if context_tokens < 0:
        raise InputError("context_tokens", context_tokens, "an integer >= 0")
    chosen = range(arch.num_layers) if layers is None else layers
    per_layer = layer_kv_bytes_per_token(arch, element_bytes, tp)
    kept_sliding = sliding_layers_kept_tokens(arch, context_tokens, slack_tokens)
    total = 0
    for layer in chosen:
        sliding = arch.layer_types[layer] == "sliding_attention"
        total += per_layer * (kept_sliding if sliding else context_tokens)
    return total
