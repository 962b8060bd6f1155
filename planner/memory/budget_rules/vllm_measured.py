"""``measured_after_warmup`` (vLLM from 0.34, its extensible KV cache): the cache is sized from the memory
measured after warm-up and CUDA-graph capture, not from a profiling estimate under a fixed fraction.

``KV = min(f · total − resident, free at start − resident − margin) − peak``, where ``resident`` is what stays
allocated after warm-up (weights, non-torch memory, CUDA graphs), ``peak`` the transient activation peak, ``free at
start = total − in use at start`` (the CUDA context) and ``margin = max(1 GiB (3 GiB on ROCm), 0.75 · peak)``;
``f`` (``gpu_memory_utilization``) is 1.0 unless set. So the engine memory limit is
``min(f · total, total − in use at start − margin)`` and the pool is the one :mod:`vllm_pool` builds under it.

Example: Llama-3.1-8B on one H100 (79.19 GiB), 14.99 GiB of weights, 0.25 GiB non-torch, 0.9 GiB of graphs and a
2 GiB peak: the limit is 79.19 − 0.51 − max(1, 1.5) = 77.18 GiB and the cache 77.18 − 14.99 − 0.25 − 0.9 − 2 =
59.04 GiB, where 0.92 of the device under the fraction rule leaves 54.71 GiB.

Source: vLLM 0.34.0 ``vllm/v1/worker/extensible_kv_cache.py`` measure_kv_cache_bytes and measure_kv_cache_blocks
(KV_CACHE_MARGIN_FLOOR_BYTES, KV_CACHE_MARGIN_FRACTION), ``vllm/v1/worker/utils.py`` request_memory and
``vllm/config/cache.py`` CacheConfig.resolved_gpu_memory_utilization (https://pypi.org/project/vllm/0.34.0/).
"""

from __future__ import annotations

from planner.memory.budget_rules.stage import StageBudget, StageInputs
from planner.memory.budget_rules.vllm_pool import pooled

POOLED = True


def apply(s: StageInputs) -> StageBudget:
    sizing = s.profile.measured_kv_sizing
    assert sizing is not None  # the profile's validator pairs the rule with its sizing
    kept_free = sizing.kept_free_bytes(s.dep.gpu.vendor, s.torch_peak_increase_bytes)
    limit = min(round(s.limits.memory_fraction * s.total_bytes), s.total_bytes - kept_free)
    return pooled(s, limit)
