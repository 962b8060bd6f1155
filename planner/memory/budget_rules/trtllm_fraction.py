"""``fraction_of_free_after_weights`` (TensorRT-LLM): ``KV = free_gpu_memory_fraction · (total − peak)`` in blocks
of ``tokens_per_block`` tokens, where ``peak`` is what the estimation run measured: weights, the torch activation
peak of its context-only dummy requests, and everything outside torch (CUDA context, NCCL and the CUDA graphs
already captured). Graphs and NCCL are therefore charged once, inside ``peak``; the ``1 − fraction`` rest of
``total − peak`` stays free beside the KV cache (reported as outside the budget).

Source: TensorRT-LLM ``tensorrt_llm/_torch/pyexecutor/_util.py`` KvCacheCreator.configure_kv_cache_capacity and
_cal_max_tokens ("Memory used outside torch (e.g., NCCL and CUDA graphs) in memory usage profiling";
``available_kv_mem = (total_gpu_memory - peak_memory + allocated_bytes) * fraction``), introduced by PR #3092
(https://github.com/NVIDIA/TensorRT-LLM/pull/3092, merged April 2025) and logged apart since PR #3467
(https://github.com/NVIDIA/TensorRT-LLM/pull/3467); https://nvidia.github.io/TensorRT-LLM/reference/memory.html
("KV cache will by default allocate 90% of the remaining free GPU memory").
"""

from __future__ import annotations

from planner.memory.budget_rules.stage import StageBudget, StageInputs, stage_memory

POOLED = True


def apply(s: StageInputs) -> StageBudget:
    peak = s.weights_bytes + s.torch_peak_increase_bytes + s.non_torch_increase_bytes + s.cudagraph_bytes
    available = s.total_bytes - peak
    kv = round(s.limits.memory_fraction * available)
    per_token = s.target_kv_per_token + s.draft_kv_per_token
    blocks = kv // (s.limits.block_size * per_token) if per_token else 0
    memory = stage_memory(s, limit=s.total_bytes, kv=kv, outside=0, kv_fraction_base=available)
    return StageBudget(memory=memory, blocks=int(blocks))
