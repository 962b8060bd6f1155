"""What a budget rule gets for one GPU of one pipeline stage, and what it returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from planner.deployment import Deployment
from planner.engines.profiles import EngineProfile, Limits
from planner.memory.kv_groups import KvLayout, LayerKv, hybrid_layout
from planner.memory.types import GpuMemory


@dataclass(frozen=True)
class StageInputs:
    """One GPU of pipeline stage ``stage``: its components before the KV cache and its KV bytes per token."""

    dep: Deployment
    profile: EngineProfile
    limits: Limits
    total_bytes: int
    target_weights_bytes: int
    draft_weights_bytes: int
    torch_peak_increase_bytes: int
    non_torch_increase_bytes: int
    cudagraph_bytes: int
    target_kv_per_token: int
    draft_kv_per_token: int
    k: int
    #: KV bytes one sequence of ``n`` tokens holds on this GPU (sliding layers capped as the engine sizes them).
    sequence_bytes: Callable[[int], int]
    #: Every attention layer this GPU caches (target stage, then the draft's), for hybrid grouping.
    layers_kv: tuple[LayerKv, ...] = ()
    #: Attention layers of the target on this stage and of the draft beside it (SGLang scales its cell by them).
    target_layers: int = 0
    draft_layers: int = 0
    #: The hybrid layout already worked out for these layers (plans sharing a stage's fixed inputs ask once).
    known_layout: Callable[[], KvLayout | None] | None = None

    @property
    def draft_weights_in_region(self) -> bool:
        """The engine loads the draft before sizing its pool (SGLang from 0.5.15), so its weights are budgeted."""
        return bool(getattr(self.profile, "draft_weights_in_static_region", False))

    @property
    def weights_bytes(self) -> int:
        return self.target_weights_bytes + self.draft_weights_bytes

    @cached_property
    def kv_layout(self) -> KvLayout | None:
        """The engine's hybrid KV groups, when it groups them and the layers mix attention kinds (computed once:
        the budget rule and the plan each ask)."""
        if self.known_layout is not None:
            return self.known_layout()
        rule = self.profile.hybrid_kv_groups
        return None if rule is None else hybrid_layout(self.layers_kv, rule.largest_group_below_ratio)


@dataclass(frozen=True)
class StageBudget:
    """The rule's result: the GPU's memory, the KV blocks it holds and the draft's own pool (SGLang)."""

    memory: GpuMemory
    blocks: int
    draft_pool_bytes: int = 0


def stage_memory(
    s: StageInputs, *, limit: int, kv: int, outside: int, kv_fraction_base: int | None = None
) -> GpuMemory:
    """The GPU's memory: ``outside`` is what the engine holds beyond its limit without counting it."""
    used = s.weights_bytes + s.torch_peak_increase_bytes + s.non_torch_increase_bytes + s.cudagraph_bytes + kv
    unused, beyond = limit - (used - outside), s.total_bytes - limit - outside
    # a budget short of any KV cache and an over-committed device are stated as shortfalls, never as negatives
    kv_short = max(-kv, 0)
    over = max(-unused, 0) + max(-beyond, 0)
    return GpuMemory(
        total_bytes=s.total_bytes,
        memory_limit_bytes=limit,
        kv_fraction_base_bytes=kv_fraction_base,
        target_weights_bytes=s.target_weights_bytes,
        draft_weights_bytes=s.draft_weights_bytes,
        torch_peak_increase_bytes=s.torch_peak_increase_bytes,
        non_torch_increase_bytes=s.non_torch_increase_bytes,
        cudagraph_bytes=s.cudagraph_bytes,
        kv_cache_bytes=max(kv, 0),
        unused_budget_bytes=max(unused, 0),
        outside_budget_bytes=max(beyond, 0),
        kv_shortfall_bytes=kv_short,
        over_commit_bytes=over,
    )
