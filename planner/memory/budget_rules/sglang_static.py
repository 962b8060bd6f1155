"""``static_fraction_after_weights`` (SGLang): the static region ``mem_fraction_static`` of the memory free before
loading holds the target's weights and the target's token pool, sized from the target's bytes per token alone:
``rest = free after the target's weights − free before loading · (1 − mem_fraction_static)``,
``tokens = rest // target bytes per token``. A draft (STANDALONE or EAGLE) gets its own pool beside it of
``tokens + max_running_requests · (K + K + 1) + 100`` tokens (draft and verify slots), allocated afterwards, with
the draft's weights, out of what the static fraction leaves; it over-commits the GPU when that slack is too small.

Source: SGLang ``python/sglang/srt/model_executor/model_runner.py`` ModelRunner.profile_max_num_token and
init_memory_pool (``draft_runner_cache_size``), release v0.5.3
(https://github.com/sgl-project/sglang/blob/v0.5.3/python/sglang/srt/model_executor/model_runner.py).
"""

from __future__ import annotations

from planner.memory.budget_rules.stage import StageBudget, StageInputs, stage_memory

POOLED = True
#: Extra draft slots SGLang's draft pool holds beyond ``max_running_requests · (2K + 1)``.
DRAFT_POOL_EXTRA_SLOTS = 100


def target_pool_bytes(s: StageInputs) -> int:
    """SGLang's ``rest_memory``: what the static region leaves after the target's weights."""
    free_before_load = s.total_bytes - s.non_torch_increase_bytes
    return round(free_before_load - s.target_weights_bytes - free_before_load * (1 - s.limits.memory_fraction))


def apply(s: StageInputs) -> StageBudget:
    fraction = s.limits.memory_fraction
    free_before_load = s.total_bytes - s.non_torch_increase_bytes
    limit = s.non_torch_increase_bytes + round(fraction * free_before_load)
    rest = target_pool_bytes(s)
    tokens = max(0, rest // s.target_kv_per_token) if s.target_kv_per_token else 0
    draft_pool = 0
    if s.draft_kv_per_token:
        headroom = s.limits.max_num_seqs * (s.k + (s.k + 1)) + DRAFT_POOL_EXTRA_SLOTS
        draft_pool = (tokens + headroom) * s.draft_kv_per_token
    kv = max(rest, 0) + draft_pool
    outside = s.draft_weights_bytes + s.torch_peak_increase_bytes + s.cudagraph_bytes + draft_pool
    memory = stage_memory(s, limit=limit, kv=kv, outside=outside)
    return StageBudget(memory=memory, blocks=int(tokens), draft_pool_bytes=draft_pool)
