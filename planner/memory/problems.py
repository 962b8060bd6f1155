"""What is wrong with a memory plan: each problem names the engine rule it comes from."""

from __future__ import annotations

from planner.deployment import Deployment
from planner.engines.profiles import EngineProfile
from planner.memory.budget_rules import budget_rule
from planner.memory.types import MemoryPlan
from planner.pairs.compatibility import check_pair
from planner.units import fmt_gib


def deployment_problems(dep: Deployment, plan: MemoryPlan, profile: EngineProfile) -> tuple[list[str], bool]:
    """Problems of ``plan`` and whether the deployment fits at all."""
    problems: list[str] = []
    gpu = plan.per_gpu
    weights = gpu.weights_bytes
    fits = True
    if weights > gpu.total_bytes:
        problems.append(f"weights need {fmt_gib(weights)} per GPU but the GPU reports {fmt_gib(gpu.total_bytes)}")
        fits = False
    elif gpu.kv_cache_bytes <= 0 or plan.num_blocks <= 0:
        problems.append(
            f"no memory is left for the KV cache: the {fmt_gib(gpu.memory_limit_bytes)} budget is taken by weights "
            f"({fmt_gib(weights)}), activations ({fmt_gib(gpu.torch_peak_increase_bytes)}) and runtime overheads"
        )
        fits = False
    elif budget_rule(profile).POOLED and plan.kv_cache_tokens < plan.max_model_len:
        problems.append(
            f"one request of max_model_len {plan.max_model_len:,} tokens needs more KV cache than the "
            f"{plan.kv_cache_tokens:,} tokens available (the engine refuses to start); "
            f"at most about {plan.kv_cache_tokens:,} tokens fit"
        )
        fits = False
    if gpu.free_bytes < 0:
        problems.append(f"the plan over-commits the GPU by {fmt_gib(-gpu.free_bytes)} (out of memory at start-up)")
        fits = False
    if dep.draft is not None:
        problems += _draft_problems(dep, profile, plan)
    if dep.target_format.id == "bf16" and not dep.gpu.supports_bf16:
        problems.append(f"{dep.gpu.name} has no bf16 support: use --dtype fp16")
        fits = False
    return problems, fits


def _draft_problems(dep: Deployment, profile: EngineProfile, plan: MemoryPlan) -> list[str]:
    """What the engine rejects about the pair (planner.pairs.compatibility), then the plan's own draft issues."""
    problems = []
    verdict = check_pair(dep.target, dep.draft, engine=dep.engine, target_tp=dep.tp, draft_tp=dep.resolved_draft_tp)
    problems += [
        f"{c.name}: {c.detail}"
        for c in verdict.checks
        if c.status == "fail" and c.name in ("tokenizer", "vocab_size", "engine")
    ]
    draft = dep.draft.architecture
    if draft.max_position_embeddings and draft.max_position_embeddings < plan.max_model_len:
        problems.append(
            f"the draft's context ({draft.max_position_embeddings:,}) is shorter than max_model_len "
            f"({plan.max_model_len:,}); vLLM crashes on longer requests (issue #57941)"
        )
    if not profile.draft_weights_budgeted:
        problems.append(
            f"{profile.id} does not count the draft's {fmt_gib(plan.per_gpu.draft_weights_bytes)} of weights in "
            "its budget (issue #9995): keep gpu_memory_utilization low enough to leave room for them"
        )
    if dep.pp > 1 and not profile.draft_with_pipeline_parallel:
        problems.append(
            f"{profile.engine_name} does not run draft-model speculative decoding with pipeline parallelism"
        )
    return problems
