"""``static_fraction_after_weights`` (SGLang): the static region ``mem_fraction_static`` of the memory free before
loading holds the weights and the token pool: ``rest = free after the weights − free before loading · (1 −
mem_fraction_static)``. What the region holds depends on the release (``profile.draft_kv``):

* ``separate_pool_with_headroom`` (0.4 to 0.5.14): the pool is sized from the target's weights and bytes per token
  alone, ``tokens = rest // target bytes per token``; a draft (STANDALONE or EAGLE) gets its own pool beside it of
  ``tokens + max_running_requests · (K + K + 1) + 100`` tokens (draft and verify slots), allocated afterwards, with
  the draft's weights, out of what the static fraction leaves; it over-commits the GPU when that slack is too small.
  Source: ``model_runner.py`` profile_max_num_token and init_memory_pool (``draft_runner_cache_size``), v0.5.3
  (https://github.com/sgl-project/sglang/blob/v0.5.3/python/sglang/srt/model_executor/model_runner.py).
* ``static_region_by_layers`` (0.5.15 on): the draft's weights are loaded first and come out of the region, and the
  draft's KV lives inside it at the target's per-layer size: ``cell = target bytes per token · (1 + L_draft /
  L_target)``, ``tokens = rest // cell`` (``DefaultPoolConfigurator``, sgl-project/sglang PR #23862,
  https://github.com/sgl-project/sglang/pull/23862).

>>> round(draft_scaled_cell(131072, 32, 1))
135168
"""

from __future__ import annotations

from planner.memory.budget_rules.stage import StageBudget, StageInputs, stage_memory

POOLED = True
#: Extra draft slots SGLang's draft pool holds beyond ``max_running_requests · (2K + 1)``.
DRAFT_POOL_EXTRA_SLOTS = 100


def draft_scaled_cell(target_cell: int, target_layers: int, draft_layers: int) -> int:
    """SGLang's cell size with the draft inside the static region: ``int(cell · (1 + L_draft / L_target))``."""
    return int(target_cell * (1 + draft_layers / target_layers)) if target_layers else target_cell


def _draft_in_region(s: StageInputs) -> bool:
    return s.profile.draft_kv == "static_region_by_layers" and s.draft_kv_per_token > 0


def target_pool_bytes(s: StageInputs) -> int:
    """SGLang's ``rest_memory``: what the static region leaves after the weights it holds."""
    free_before_load = s.total_bytes - s.non_torch_increase_bytes
    held = s.target_weights_bytes + (s.draft_weights_bytes if s.draft_weights_in_region else 0)
    return round(free_before_load - held - free_before_load * (1 - s.limits.memory_fraction))


def apply(s: StageInputs) -> StageBudget:
    fraction = s.limits.memory_fraction
    free_before_load = s.total_bytes - s.non_torch_increase_bytes
    limit = s.non_torch_increase_bytes + round(fraction * free_before_load)
    rest = target_pool_bytes(s)
    draft_pool = 0
    if _draft_in_region(s):
        cell = draft_scaled_cell(s.target_kv_per_token, s.target_layers, s.draft_layers)
        tokens = max(0, rest // cell)
        draft_pool = tokens * (cell - s.target_kv_per_token)
        kv = max(rest, 0)
        outside = s.torch_peak_increase_bytes + s.cudagraph_bytes
    else:
        tokens = max(0, rest // s.target_kv_per_token) if s.target_kv_per_token else 0
        if s.draft_kv_per_token:
            headroom = s.limits.max_num_seqs * (s.k + (s.k + 1)) + DRAFT_POOL_EXTRA_SLOTS
            draft_pool = (tokens + headroom) * s.draft_kv_per_token
        kv = max(rest, 0) + draft_pool
        unbudgeted_draft = 0 if s.draft_weights_in_region else s.draft_weights_bytes
        outside = unbudgeted_draft + s.torch_peak_increase_bytes + s.cudagraph_bytes + draft_pool
    memory = stage_memory(s, limit=limit, kv=kv, outside=outside)
    return StageBudget(memory=memory, blocks=int(tokens), draft_pool_bytes=draft_pool)
