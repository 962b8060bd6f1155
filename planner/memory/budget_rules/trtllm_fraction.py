"""``fraction_of_free_after_weights`` (TensorRT-LLM): ``KV = free_gpu_memory_fraction · (total − weights −
activations − runtime)`` in blocks of ``tokens_per_block`` tokens; the process may use the whole device.
Source: https://nvidia.github.io/TensorRT-LLM/reference/memory.html ("KV cache will by default allocate 90% of
the remaining free GPU memory").
"""

from __future__ import annotations

from planner.memory.budget_rules.stage import StageBudget, StageInputs, stage_memory

POOLED = True


def apply(s: StageInputs) -> StageBudget:
    available = s.total_bytes - s.weights_bytes - s.torch_peak_increase_bytes - s.non_torch_increase_bytes
    kv = round(s.limits.memory_fraction * available)
    per_token = s.target_kv_per_token + s.draft_kv_per_token
    blocks = kv // (s.limits.block_size * per_token) if per_token else 0
    memory = stage_memory(s, limit=s.total_bytes, kv=kv, outside=0, kv_fraction_base=available)
    return StageBudget(memory=memory, blocks=int(blocks))
