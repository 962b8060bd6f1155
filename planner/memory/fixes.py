"""What would make a deployment fit and start, ranked: re-planned variants of the same deployment (higher TP, fp8
KV, quantized weights, no draft, a GPU with more memory, a shorter max length) and, for what stops the engine from
starting, the fix of each reason (a draft padded to the target's vocabulary, a TP both models split over, a
release that runs the method), alone and together, with the memory change that makes the combination fit where
it would not. Variants that start and fit come first, then those that leave fewer reasons to refuse, then by the
concurrency they leave. When the deployment fits but the engine would refuse it, a change that removes none of the
engine's reasons is no fix and is left out.
"""

from __future__ import annotations

from planner.catalog.lookup import get_gpu, list_nodes
from planner.catalog.schemas import NodeType
from planner.deployment import Deployment
from planner.engines.releases import engine_releases, method_support
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
    out += [(label, variant) for label, changes in _memory_changes(dep) if (variant := _variant(dep, **changes))]
    if dep.is_speculative:
        if dep.speculator is not None:
            out += _start_fixes(dep)
        variant = _variant(dep, draft=None, draft_tp=None, draft_dtype=None, method=None)
        if variant:
            out.append(("serve without the draft" if dep.draft is not None else "serve without speculation", variant))
    return out


def _memory_changes(dep: Deployment) -> list[tuple[str, dict]]:
    """Changes that free memory without touching the pair: fp8 KV, quantized target weights, a larger GPU."""
    out: list[tuple[str, dict]] = []
    if dep.kv.id != "fp8":
        out.append(("store the KV cache in fp8", {"kv_dtype": "fp8"}))
    for fmt in ("fp8", "int4-awq"):
        if dep.target_format.id not in (fmt, "int4-awq", "int4-gptq", "nvfp4", "mxfp4"):
            out.append((f"quantize the target's weights to {fmt}", {"dtype": fmt}))
    if dep.gpu_memory_bytes is None:
        for gpu_id, node in _nodes_by_gpu(dep.tp * dep.pp).items():
            gpu = get_gpu(gpu_id)
            if gpu.marketed_memory_gb > dep.gpu.marketed_memory_gb:
                changes = {"gpu": gpu, "gpu_count": node.gpu_count, "node_id": node.id}
                out.append((f"use a GPU with more memory: {node.id}", changes))
    return out


def _start_fixes(dep: Deployment) -> list[tuple[str, Deployment]]:
    """Variants that remove what stops the engine from starting with this pair."""
    out: list[tuple[str, Deployment]] = []
    target, draft = dep.target.architecture, dep.speculator.architecture
    combined, labels = dep, []
    releases = engine_releases(dep.engine)
    method = dep.speculative_method
    if method == "draft_model" and releases.rejects_unequal_vocab and target.vocab_size != draft.vocab_size:
        padded_arch = draft.model_copy(update={"vocab_size": target.vocab_size})
        padded = dep.draft.model_copy(update={"architecture": padded_arch})
        variant = _variant(dep, draft=padded)
        combined, labels = _variant(combined, draft=padded) or combined, [*labels, "pad the draft's vocabulary"]
        if variant:
            out.append(
                (
                    f"pad the draft's vocabulary to {target.vocab_size:,} (resize its embedding and lm_head and set "
                    f"vocab_size in its config.json; ids above the tokenizer's are unused padding): "
                    f"{releases.vocab_padding_source}",
                    variant,
                )
            )
    support = method_support(dep.engine, dep.engine_version, method)
    if not support.supported and support.first_release:
        variant = _variant(dep, engine_version=support.first_release)
        combined = _variant(combined, engine_version=support.first_release) or combined
        labels.append(f"use {dep.engine} {support.first_release}")
        if variant:
            out.append((f"use {dep.engine} {support.first_release} or later ({support.source})", variant))
    for tp in range(dep.tp, 0, -1):
        if tp_problem(target, tp) is None and tp_problem(draft, tp) is None:
            if tp != dep.tp or dep.resolved_draft_tp != dep.tp:
                variant = _variant(dep, tp=tp, draft_tp=tp)
                combined = _variant(combined, tp=tp, draft_tp=tp) or combined
                labels.append(f"TP {tp} for both models")
                if variant:
                    out.append((f"run target and draft at tensor parallelism {tp}, which both split over", variant))
            break
    if len(labels) > 1 and combined is not dep:
        out.append(("; ".join(labels), combined))
    if labels and combined is not dep and not _fits(combined):
        # the pair starts only at a layout that no longer fits: add the memory change that makes it fit
        for label, changes in _memory_changes(combined):
            stacked = _variant(combined, **changes)
            if stacked is not None and _fits(stacked):
                out.append(("; ".join([*labels, label]), stacked))
                break
    return out


def _fits(dep: Deployment) -> bool:
    try:
        return plan_budget(dep).fits
    except PlannerError:
        return False


def suggestions_for(dep: Deployment, plan: MemoryPlan) -> list[Suggestion]:
    """Re-plan each candidate change; those that start and fit first, then fewest reasons to refuse, then most
    concurrency (the ranking of the module docstring)."""

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
                starts=alt.starts,
                remaining_start_problems=len(alt.start_problems),
                kv_cache_tokens=alt.kv_cache_tokens,
                max_concurrency=alt.max_concurrency,
                detail=f"{alt.kv_cache_tokens:,} KV tokens, {alt.max_concurrency:g} concurrent requests at "
                f"{alt.max_model_len:,} tokens"
                if alt.fits and alt.starts
                else ((alt.start_problems or alt.problems or ["still does not fit"])[0]),
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
                    starts=alt.starts,
                    remaining_start_problems=len(alt.start_problems),
                    kv_cache_tokens=alt.kv_cache_tokens,
                    max_concurrency=alt.max_concurrency,
                    detail=f"{alt.kv_cache_tokens:,} KV tokens, {alt.max_concurrency:g} concurrent requests",
                )
            )
    if plan.fits and not plan.starts:  # memory is fine: a change that removes none of the engine's reasons is no fix
        found = [s for s in found if s.remaining_start_problems < len(plan.start_problems)]
    found.sort(key=lambda s: (not (s.fits and s.starts), s.remaining_start_problems, not s.fits, -s.max_concurrency))
    return found
