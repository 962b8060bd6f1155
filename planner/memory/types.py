"""What a memory plan is made of: one GPU's memory by component, the plan, and a suggested fix."""

from __future__ import annotations

from pydantic import BaseModel

from planner.engines.profiles import Limits

#: The memory components as vLLM's profiler names them (``vllm/utils/mem_utils.py`` MemoryProfilingResult:
#: weights, torch peak increase, non-torch increase; ``gpu_worker.py``: CUDA graphs, KV cache). Planned,
#: logged and measured memory use these names, each as a ``<name>_bytes`` figure, so a comparison is a loop.
MEMORY_COMPONENTS: tuple[str, ...] = ("weights", "torch_peak_increase", "non_torch_increase", "cudagraph", "kv_cache")

#: The per-GPU parts that add up to the total, in display order, with the labels the UI shows.
COMPONENT_LABELS = {
    "target_weights_bytes": "target weights",
    "draft_weights_bytes": "draft weights",
    "torch_peak_increase_bytes": "activation peak (torch peak increase)",
    "non_torch_increase_bytes": "non-torch increase (NCCL, context)",
    "cudagraph_bytes": "CUDA graphs",
    "kv_cache_bytes": "KV cache",
    "unused_budget_bytes": "unused budget",
    "outside_budget_bytes": "free outside the budget",
}


class GpuMemory(BaseModel):
    """One GPU's memory by component; the parts of ``COMPONENT_LABELS`` add up to ``total_bytes``.

    ``memory_limit_bytes`` is what the engine's memory knob lets it use (vLLM ``gpu_memory_utilization`` and
    SGLang ``mem_fraction_static`` times the total; the whole device for TensorRT-LLM and transformers);
    TensorRT-LLM takes its KV fraction of the free memory left after weights and runtime, which is
    ``kv_fraction_base_bytes``. What no component uses is split into ``unused_budget_bytes`` (inside the
    limit) and ``outside_budget_bytes`` (the rest of the device, less what the engine puts there without
    counting it, such as vLLM 0.10-0.19's CUDA graphs). No field is negative: what the plan lacks is stated
    apart, ``kv_shortfall_bytes`` (the budget is short of any KV cache by this much) and ``over_commit_bytes``
    (the components need this much more than the device or the budget holds), so the parts add up to
    ``total_bytes + kv_shortfall_bytes + over_commit_bytes``.
    """

    total_bytes: int
    memory_limit_bytes: int
    kv_fraction_base_bytes: int | None = None
    target_weights_bytes: int
    draft_weights_bytes: int
    torch_peak_increase_bytes: int
    non_torch_increase_bytes: int
    cudagraph_bytes: int
    kv_cache_bytes: int
    unused_budget_bytes: int
    outside_budget_bytes: int
    kv_shortfall_bytes: int = 0
    over_commit_bytes: int = 0

    @property
    def weights_bytes(self) -> int:
        return self.target_weights_bytes + self.draft_weights_bytes

    @property
    def free_bytes(self) -> int:
        """Memory no component uses (negative: over-committed by that much)."""
        return self.unused_budget_bytes + self.outside_budget_bytes - self.over_commit_bytes


class Suggestion(BaseModel):
    """A change that makes the deployment fit and start, re-planned: what it leaves and what it costs."""

    change: str
    fits: bool
    starts: bool = True
    remaining_start_problems: int = 0
    kv_cache_tokens: int
    max_concurrency: float
    detail: str
    #: GPUs one replica then needs (tp x pp).
    gpus_per_replica: int = 1
    #: Changes to what the model computes (weight precision, KV dtype, no draft, a shorter max length).
    model_changes: int = 0
    #: The fix moves to another GPU type (a different purchase).
    other_gpu: bool = False


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
    #: One request of ``max_model_len`` tokens fits the KV cache (vLLM's admission check; hybrid models count
    #: each KV-cache group's window-limited blocks).
    admits_max_model_len: bool = True
    fits: bool
    #: The engine would start: nothing in ``start_problems`` (the engine's own reasons for refusing).
    starts: bool = True
    start_problems: list[str] = []
    problems: list[str]
    suggestions: list[Suggestion] = []
    assumptions: list[str]
