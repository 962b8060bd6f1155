"""The engines' budget rules, one module each, dispatched by ``profile.budget_rule`` (data/engines.json).

Each rule module has ``apply(StageInputs) -> StageBudget`` and ``POOLED`` (the engine preallocates a KV pool
of blocks, rather than holding exactly the batch it runs).
"""

from __future__ import annotations

from types import ModuleType

from planner.engines.profiles import EngineProfile
from planner.memory.budget_rules import sglang_static, trtllm_fraction, vllm_measured, vllm_pool, whole_device
from planner.memory.budget_rules.stage import StageBudget, StageInputs

RULES: dict[str, ModuleType] = {
    "fraction_of_total": vllm_pool,
    "measured_after_warmup": vllm_measured,
    "fraction_of_free_after_weights": trtllm_fraction,
    "static_fraction_after_weights": sglang_static,
    "whole_device": whole_device,
}


def budget_rule(profile: EngineProfile) -> ModuleType:
    """The module applying ``profile``'s budget rule."""
    return RULES[profile.budget_rule]


__all__ = ["RULES", "StageBudget", "StageInputs", "budget_rule"]
