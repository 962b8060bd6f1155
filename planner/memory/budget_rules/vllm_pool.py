"""``fraction_of_total`` (vLLM): ``KV = gpu_memory_utilization · total − weights(target + draft) − torch peak
increase − non-torch increase (− CUDA-graph estimate from 0.20)``; the draft's layers share the block pool,
so a token costs target + draft bytes and ``blocks = KV // (block_size · bytes_per_token)``. vLLM V0 sized the
pool without the draft's weights (vLLM issue #9995), then split it so both models get the same number of
blocks: ``blocks · kv_t / (kv_t + kv_d)``. Models mixing attention kinds get vLLM V1's grouped layout
(:mod:`planner.memory.kv_groups`): ``blocks = KV // (block · layer bytes · layers per group)``.
Source: vLLM ``v1/worker/gpu_worker.py`` determine_available_memory (https://github.com/vllm-project/vllm/blob/main/vllm/v1/worker/gpu_worker.py).
"""

from __future__ import annotations

from planner.memory.budget_rules.stage import StageBudget, StageInputs, stage_memory

POOLED = True


def apply(s: StageInputs) -> StageBudget:
    return pooled(s, round(s.limits.memory_fraction * s.total_bytes))


def pooled(s: StageInputs, limit: int) -> StageBudget:
    """The block pool under an engine memory limit of ``limit`` bytes: what the limit leaves after the weights,
    the activation peak, non-torch memory and (where subtracted) the CUDA graphs."""
    p, block = s.profile, s.limits.block_size
    unbudgeted_draft = 0 if p.draft_weights_budgeted else s.draft_weights_bytes
    uncounted_graphs = 0 if p.subtracts_graphs(s.dep.gpu.vendor) else s.cudagraph_bytes
    counted = s.weights_bytes - unbudgeted_draft + s.torch_peak_increase_bytes + s.non_torch_increase_bytes
    kv = limit - counted - (s.cudagraph_bytes - uncounted_graphs)
    per_token = s.target_kv_per_token + s.draft_kv_per_token
    layout = s.kv_layout
    if layout is not None:
        blocks = layout.num_blocks(kv, block)
    elif p.draft_kv == "even_block_split":
        target_blocks = kv // (block * s.target_kv_per_token) if s.target_kv_per_token else 0
        blocks = int(target_blocks * s.target_kv_per_token / per_token) if per_token else 0
    else:
        blocks = kv // (block * per_token) if per_token else 0
    memory = stage_memory(s, limit=limit, kv=kv, outside=unbudgeted_draft + uncounted_graphs)
    return StageBudget(memory=memory, blocks=int(blocks))
