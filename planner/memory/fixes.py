"""What would make a deployment fit, ranked: re-planned variants of the same deployment (higher TP, fp8 KV,
quantized weights, no draft, a GPU with more memory, a shorter max length), fitting ones first, then by the
concurrency they leave.
"""

from __future__ import annotations

from planner.catalog.lookup import get_gpu, list_nodes
from planner.catalog.schemas import NodeType
from planner.deployment import Deployment
from planner.errors import PlannerError
from planner.memory.budget import plan_budget
from planner.memory.types import MemoryPlan, Suggestion
from planner.model.parallelism import tp_problem


def _variant(dep: Deployment, **changes) -> Deployment | None:
    try:
        return dep.replace(**changes)
    except PlannerError:
        return None


def _nodes_by_gpu(min_gpus: int) -> dict[str, NodeType]:
    """The smallest catalog node of each GPU type with at least ``min_gpus`` GPUs."""
    best: dict[str, NodeType] = {}
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


def suggestions_for(dep: Deployment, plan: MemoryPlan) -> list[Suggestion]:
    """Re-plan each candidate change; fitting changes first, most concurrency first."""

    found = []
    for change, variant in _candidates(dep):
        try:
            alt = plan_budget(variant)
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
            alt = plan_budget(shorter)
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
