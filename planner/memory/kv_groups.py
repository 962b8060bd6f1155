"""vLLM V1's hybrid KV-cache layout: layers grouped by attention kind, padded, one shared block pool.

When a model mixes attention kinds (full + sliding window, full + chunked local), vLLM V1's hybrid KV-cache
manager (``vllm/v1/core/kv_cache_utils.py`` ``_get_kv_cache_groups_uniform_page_size``, from v0.10.0) puts
the layers of each kind in a bucket, splits every bucket into groups of ``group_size`` layers (the smallest
bucket's count; the largest's when it is below ``ratio`` times the smallest), pads the last group of a bucket
with empty layers, and keeps ``group_size`` tensors that one layer of each group shares. So

* ``num_blocks = KV bytes // (block · layer bytes per token · group_size)`` (padding layers cost memory);
* the log's "GPU KV cache size" is ``num_blocks // num_groups · block`` tokens (``_report_kv_cache_config``);
* a request holds, per group, ``cdiv(max_model_len, block)`` blocks of a full layer,
  ``cdiv(min(window − 1 + max_num_batched_tokens, max_model_len), block) + 1`` of a sliding layer and
  ``cdiv(min(chunk + max_num_batched_tokens, max_model_len), block)`` of a chunked-local layer
  (``SlidingWindowSpec`` / ``ChunkedLocalAttentionSpec.max_memory_usage_bytes``); max concurrency is
  ``num_blocks`` over their sum (``get_max_concurrency_for_kv_cache_config``);
* start-up refuses a ``max_model_len`` whose window-limited bytes over every layer exceed the KV memory
  (``check_enough_kv_cache_memory``).

Source: https://github.com/vllm-project/vllm/blob/main/vllm/v1/core/kv_cache_utils.py and
https://github.com/vllm-project/vllm/blob/main/vllm/v1/kv_cache_interface.py.

Gemma-3-27B (10 full + 52 sliding layers, window 1,024): groups of 10, 8 padding layers, 7 groups.

>>> layers = [LayerKv("sliding_attention", 1024, 8192)] * 52 + [LayerKv("full_attention", None, 8192)] * 10
>>> layout = hybrid_layout(layers, ratio=1.5)
>>> layout.layers_per_group, layout.padding_layers, layout.num_groups
(10, 8, 7)
>>> layout.tokens(15_997, 16), layout.blocks_per_request(131_072, 8192, 16)
(36560, 11654)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

FULL = "full_attention"
SLIDING = "sliding_attention"
CHUNKED = "chunked_attention"


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class LayerKv:
    """One attention layer's KV cache on one GPU: its kind, window (or chunk) in tokens and bytes per token."""

    kind: str
    window: int | None
    bytes_per_token: int

    def max_blocks(self, max_model_len: int, max_num_batched_tokens: int, block: int) -> int:
        """Blocks one request of ``max_model_len`` tokens holds in this layer (vLLM's ``max_memory_usage``)."""
        if self.kind == SLIDING and self.window is not None:
            tokens = min(self.window - 1 + max_num_batched_tokens, max_model_len)
            return _cdiv(tokens, block) + 1
        if self.kind == CHUNKED and self.window is not None:
            return _cdiv(min(self.window + max_num_batched_tokens, max_model_len), block)
        return _cdiv(max_model_len, block)


@dataclass(frozen=True)
class KvLayout:
    """The groups vLLM forms: one representative layer per group, the layers per group and the padding."""

    groups: tuple[LayerKv, ...]
    layers_per_group: int
    padding_layers: int

    @property
    def num_groups(self) -> int:
        return len(self.groups)

    @property
    def bytes_per_token(self) -> int:
        """Pool bytes per reported token: every group's layers, padding included."""
        return self.groups[0].bytes_per_token * self.layers_per_group * self.num_groups

    def num_blocks(self, kv_bytes: int, block: int) -> int:
        page = block * self.groups[0].bytes_per_token * self.layers_per_group
        return max(0, kv_bytes // page)

    def tokens(self, num_blocks: int, block: int) -> int:
        """The tokens vLLM reports: ``num_blocks // num_groups · block``."""
        return num_blocks // self.num_groups * block

    def blocks_per_request(self, max_model_len: int, max_num_batched_tokens: int, block: int) -> int:
        return sum(g.max_blocks(max_model_len, max_num_batched_tokens, block) for g in self.groups)


def request_bytes(layers: Sequence[LayerKv], max_model_len: int, max_num_batched_tokens: int, block: int) -> int:
    """KV bytes one ``max_model_len`` request needs over every layer, windows applied (vLLM's start-up check)."""
    return sum(
        layer.max_blocks(max_model_len, max_num_batched_tokens, block) * block * layer.bytes_per_token
        for layer in layers
    )


def hybrid_layout(layers: Sequence[LayerKv], ratio: float | None) -> KvLayout | None:
    """vLLM's groups for ``layers``, or None when there is one kind only (one pool, every layer in full) or the
    layers' page sizes differ (vLLM then unifies page sizes first, which the planner does not model).

    ``ratio``: the group size is the largest bucket's count when it is below ``ratio`` times the smallest's
    (None: always the smallest).
    """
    buckets: dict[LayerKv, int] = {}
    for layer in layers:
        buckets[layer] = buckets.get(layer, 0) + 1
    if len(buckets) < 2 or len({layer.bytes_per_token for layer in buckets}) > 1:
        return None
    smallest, largest = min(buckets.values()), max(buckets.values())
    size = largest if ratio is not None and largest < smallest * ratio else smallest
    groups: list[LayerKv] = []
    padding = 0
    for layer, count in buckets.items():
        n = _cdiv(count, size)
        groups += [layer] * n
        padding += n * size - count
    return KvLayout(groups=tuple(groups), layers_per_group=size, padding_layers=padding)
