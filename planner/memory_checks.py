"""What is wrong with a memory plan, and what would make it fit (ranked).

Problems name the engine rule they come from; suggestions are re-planned variants of the same
deployment (higher TP, fp8 KV, a shorter max length, quantized weights, a bigger GPU, no draft),
fitting ones first, then by the concurrency they leave.
"""

from __future__ import annotations

from planner.catalog import get_gpu, list_nodes
from planner.deployment import Deployment
from planner.engines import EngineProfile
from planner.errors import PlannerError
from planner.parallelism import tp_problem
from planner.units import fmt_gib


def deployment_problems(dep: Deployment, plan, profile: EngineProfile) -> tuple[list[str], bool]:
    """Problems of ``plan`` and whether the deployment fits at all."""
    problems: list[str] = []
    gpu = plan.per_gpu
    weights = gpu.target_weights_bytes + gpu.draft_weights_bytes
    fits = True
    if weights > gpu.total_bytes:
        problems.append(f"weights need {fmt_gib(weights)} per GPU but the GPU reports {fmt_gib(gpu.total_bytes)}")
        fits = False
    elif gpu.kv_cache_bytes <= 0 or plan.num_blocks <= 0:
        problems.append(
            f"no memory is left for the KV cache: the {fmt_gib(gpu.budget_bytes)} budget is taken by weights "
            f"({fmt_gib(weights)}), activations ({fmt_gib(gpu.activation_bytes)}) and runtime overheads"
        )
        fits = False
    elif profile.budget_rule != "whole_device" and plan.kv_cache_tokens < plan.max_model_len:
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


def _draft_problems(dep: Deployment, profile: EngineProfile, plan) -> list[str]:
    """What the engine rejects about the pair (planner.compatibility), then the plan's own draft issues."""
    from planner.compatibility import check_pair

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
    if dep.pp > 1 and dep.engine == "vllm":
        problems.append("vLLM V1 does not run draft-model speculative decoding with pipeline parallelism")
    return problems


def _variant(dep: Deployment, **changes) -> Deployment | None:
    try:
        return Deployment.build(
            **{
                **dep.model_dump(exclude={"target", "draft", "gpu"}),
                "target": dep.target,
                "draft": dep.draft,
                "gpu": dep.gpu,
                **changes,
            }
        )
    except PlannerError:
        return None


def _nodes_by_gpu(min_gpus: int) -> dict[str, object]:
    """The smallest catalog node of each GPU type with at least ``min_gpus`` GPUs."""
    best: dict[str, object] = {}
    for node in list_nodes():
        if node.gpu_count >= min_gpus and (node.gpu not in best or node.gpu_count < best[node.gpu].gpu_count):
            best[node.gpu] = node
    return best


def _candidates(dep: Deployment) -> list[tuple[str, Deployment]]:
    out: list[tuple[str, Deployment]] = []
    arch = dep.target.architecture
    same_gpu_nodes = sorted((n for n in list_nodes() if n.gpu == dep.gpu.id), key=lambda n: n.gpu_count)
    max_gpus = max([dep.gpu_count, *(n.gpu_count for n in same_gpu_nodes)])
    raised = 0
    for tp in range(dep.tp + 1, max_gpus // dep.pp + 1):
        if tp_problem(arch, tp) is not None or raised == 2:
            continue
        where = {}
        if tp * dep.pp > dep.gpu_count:
            node = next((n for n in same_gpu_nodes if n.gpu_count >= tp * dep.pp), None)
            if node is None:
                continue
            where = {"gpu_count": node.gpu_count, "node_id": node.id}
        draft_tp = None if dep.draft_tp in (None, dep.tp) else dep.draft_tp
        variant = _variant(dep, tp=tp, draft_tp=draft_tp, **where)
        if variant:
            label = f" on {where['node_id']}" if where else ""
            out.append((f"raise tensor parallelism to {tp}{label}", variant))
            raised += 1
    if dep.kv.id != "fp8":
        variant = _variant(dep, kv_dtype="fp8")
        if variant:
            out.append(("store the KV cache in fp8", variant))
    for fmt in ("fp8", "int4-awq"):
        if dep.target_format.id not in (fmt, "int4-awq", "int4-gptq", "nvfp4", "mxfp4"):
            variant = _variant(dep, dtype=fmt)
            if variant:
                out.append((f"quantize the target's weights to {fmt}", variant))
    if dep.draft is not None:
        variant = _variant(dep, draft=None, draft_tp=None, draft_dtype=None)
        if variant:
            out.append(("serve without the draft", variant))
    if dep.gpu_memory_bytes is None:
        for gpu_id, node in _nodes_by_gpu(dep.tp * dep.pp).items():
            gpu = get_gpu(gpu_id)
            if gpu.marketed_memory_gb > dep.gpu.marketed_memory_gb:
                variant = _variant(dep, gpu=gpu, gpu_count=node.gpu_count, node_id=node.id)
                if variant:
                    out.append((f"use a GPU with more memory: {node.id}", variant))
    return out


def suggestions_for(dep: Deployment, plan) -> list:
    """Re-plan each candidate change; fitting changes first, most concurrency first."""
    from planner.memory import Suggestion, plan_memory

    found = []
    for change, variant in _candidates(dep):
        try:
            alt = plan_memory(variant, with_suggestions=False)
        except PlannerError:
            continue
        found.append(
            Suggestion(
                change=change,
                fits=alt.fits,
                kv_cache_tokens=alt.kv_cache_tokens,
                max_concurrency=alt.max_concurrency,
                detail=f"{alt.kv_cache_tokens:,} KV tokens, {alt.max_concurrency:g} concurrent requests at "
                f"{alt.max_model_len:,} tokens"
                if alt.fits
                else (alt.problems[0] if alt.problems else "still does not fit"),
            )
        )
    if plan.kv_cache_tokens > 0 and plan.kv_cache_tokens < plan.max_model_len:
        shorter = _variant(dep, max_model_len=max(16, plan.kv_cache_tokens - plan.lookahead_slots_per_seq))
        if shorter:
            alt = plan_memory(shorter, with_suggestions=False)
            found.append(
                Suggestion(
                    change=f"shorten max_model_len to {shorter.max_model_len:,}",
                    fits=alt.fits,
                    kv_cache_tokens=alt.kv_cache_tokens,
                    max_concurrency=alt.max_concurrency,
                    detail=f"{alt.kv_cache_tokens:,} KV tokens, {alt.max_concurrency:g} concurrent requests",
                )
            )
    found.sort(key=lambda s: (not s.fits, -s.max_concurrency))
    return found
