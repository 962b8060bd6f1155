"""``static_fraction_after_weights`` (SGLang): ``rest = free after the target's weights − total · (1 −
mem_fraction_static)`` holds the target's token pool; a draft gets its own pool of ``tokens + headroom`` beside
it (``max_num_seqs · (K + K + 1) + 100`` draft/verify slots), both out of the static region, the draft's
weights out of the slack. Source: SGLang ``model_runner.py`` profile_max_num_token
(https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/model_executor/model_runner.py).
"""

from __future__ import annotations

from planner.memory.budget_rules.stage import StageBudget, StageInputs, stage_memory

POOLED = True
#: Extra draft slots SGLang's draft pool holds beyond ``max_num_seqs · (2K + 1)``.
DRAFT_POOL_EXTRA_SLOTS = 100


def apply(s: StageInputs) -> StageBudget:
    total, fraction = s.total_bytes, s.limits.memory_fraction
    limit = round(fraction * total)
    rest = total - s.non_torch_increase_bytes - s.target_weights_bytes - round(total * (1 - fraction))
    draft_kv = s.draft_kv_per_token
    headroom = s.limits.max_num_seqs * (s.k + (s.k + 1)) + DRAFT_POOL_EXTRA_SLOTS if draft_kv else 0
    per_token = s.target_kv_per_token + draft_kv
    blocks = max(0, (rest - headroom * draft_kv) // per_token) if per_token else 0
    draft_pool = (blocks + headroom) * draft_kv if draft_kv else 0
    outside = s.draft_weights_bytes + s.torch_peak_increase_bytes + s.cudagraph_bytes
    memory = stage_memory(s, limit=limit, kv=rest, outside=outside)
    return StageBudget(memory=memory, blocks=int(blocks), draft_pool_bytes=draft_pool)
