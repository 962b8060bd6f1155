"""``whole_device`` (transformers ``generate``): no pool; the process holds exactly what it uses, weights + the
KV of ``hf_batch_size`` sequences of ``max_model_len + K`` tokens (``DynamicCache``: sliding layers keep
``window − 1`` tokens) + activations, and fits when that is at most the device.
"""

from __future__ import annotations

from planner.memory.budget_rules.stage import StageBudget, StageInputs, stage_memory

POOLED = False


def apply(s: StageInputs) -> StageBudget:
    kv = s.sequence_bytes(s.dep.resolved_max_model_len + s.k) * s.dep.hf_batch_size
    used = s.weights_bytes + s.torch_peak_increase_bytes + s.non_torch_increase_bytes + kv
    blocks = 1 if used <= s.total_bytes else 0
    return StageBudget(memory=stage_memory(s, limit=s.total_bytes, kv=kv, outside=0), blocks=blocks)
