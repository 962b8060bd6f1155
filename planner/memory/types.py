"""What a memory plan is made of: one GPU's memory by component, the plan, and a suggested fix."""

from __future__ import annotations

from pydantic import BaseModel

from planner.engines.profiles import Limits

#: The per-GPU components that add up to the total, in display order, with the labels the UI shows.
COMPONENT_LABELS = {
    "target_weights_bytes": "target weights",
    "draft_weights_bytes": "draft weights",
    "activation_bytes": "activation peak",
    "non_torch_bytes": "non-torch (NCCL, context)",
    "cudagraph_bytes": "CUDA graphs",
    "kv_cache_bytes": "KV cache",
    "free_bytes": "free / outside budget",
}


class GpuMemory(BaseModel):
    """One GPU's memory by component; the components add up to ``total_bytes``."""

    total_bytes: int
    budget_bytes: int
    target_weights_bytes: int
    draft_weights_bytes: int
    activation_bytes: int
    non_torch_bytes: int
    cudagraph_bytes: int
    kv_cache_bytes: int
    free_bytes: int


class Suggestion(BaseModel):
    change: str
    fits: bool
    kv_cache_tokens: int
    max_concurrency: float
    detail: str


class MemoryPlan(BaseModel):
    engine: str
    engine_profile: str
    engine_versions: str
    limits: Limits
    per_gpu: GpuMemory
    stages: list[GpuMemory]
    binding_stage: int
    kv_bytes_per_token_per_gpu: int
    target_kv_bytes_per_token_per_gpu: int
    draft_kv_bytes_per_token_per_gpu: int
    block_size: int
    num_blocks: int
    kv_cache_tokens: int
    max_model_len: int
    max_concurrency: float
    lookahead_slots_per_seq: int
    draft_kv_share_frac: float
    kv_cache_tokens_without_draft: int | None = None
    max_concurrency_without_draft: float | None = None
    fits: bool
    problems: list[str]
    suggestions: list[Suggestion] = []
    assumptions: list[str]
