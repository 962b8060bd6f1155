"""What would make a deployment fit and start, searched as combinations and ranked best first.

A fix changes one or more of: the GPUs (more of the same type at a higher tensor parallelism, pipeline stages
across several nodes, or a GPU type with more memory), the target's weight precision (fp8, int4-awq), the KV-cache
dtype (fp8), the draft (served without it), the max model length (shortened to what the cache holds) and, for
what stops the engine from starting, the fix of each reason (a draft padded to the target's vocabulary, a TP both
models split over, a release that runs the method). Every combination is re-planned with the engine's own
budget (:func:`planner.memory.budget.plan_budget`), and only those that fit and start are offered: for each
precision, KV dtype and draft choice the smallest layout of the user's GPU type that fits, and for other GPU
types (a different purchase, listed after, the best few) the smallest layout with the model as it is. Best
first: fewest changes to what the model computes (precision, KV dtype, draft, max length), then fewest GPUs per
replica, then fewest changes, then most concurrency. An empty list means no combination searched fits.
"""

from __future__ import annotations

from planner.catalog.lookup import get_gpu, list_nodes
from planner.catalog.schemas import NodeType
from planner.deployment import Deployment
from planner.engines.releases import engine_releases, method_support
from planner.errors import PlannerError
from planner.memory.budget import plan_budget
from planner.memory.types import MemoryPlan, Suggestion
from planner.model.parallelism import tp_problem, valid_tp_degrees
from planner.units import fmt_counted


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


#: The most nodes a fix spreads one replica over (pipeline stages across nodes, vLLM's multi-node serving:
#: https://docs.vllm.ai/en/latest/serving/parallelism_scaling.html).
MAX_NODES_PER_REPLICA = 4
#: Pipeline degrees a fix tries.
PIPELINE_DEGREES = (1, 2, 3, 4, 8)
#: At most this many fixes are offered, of which at most ``OTHER_GPU_FIXES`` on another GPU type.
MAX_FIXES = 8
OTHER_GPU_FIXES = 3


def _layouts(dep: Deployment, gpu_id: str) -> list[tuple[int, int, NodeType]]:
    """(tp, pp, node) layouts of ``gpu_id`` up to ``MAX_NODES_PER_REPLICA`` nodes, in the order a fix tries them
    (fewest nodes, then fewest pipeline stages, then the lowest TP); each on the smallest catalog node that holds it
    (or several of the largest)."""
    nodes = sorted((n for n in list_nodes() if n.gpu == gpu_id), key=lambda n: n.gpu_count)
    if not nodes:
        return []
    largest = nodes[-1]
    arch = dep.target.architecture
    out = []
    for tp in valid_tp_degrees(arch, largest.gpu_count):
        for pp in PIPELINE_DEGREES:
            gpus = tp * pp
            if pp > arch.num_layers or gpus > largest.gpu_count * MAX_NODES_PER_REPLICA:
                continue
            node = next((n for n in nodes if n.gpu_count >= gpus), largest)
            out.append((tp, pp, node))
    # fewest nodes first, then tensor parallelism within a node before pipeline stages (the layout engines
    # document for one node), then fewest GPUs
    return sorted(
        out, key=lambda t: (-(-(t[0] * t[1]) // t[2].gpu_count) if t[0] * t[1] > t[2].gpu_count else 1, t[1], t[0])
    )


def _placed(dep: Deployment, tp: int, pp: int, node: NodeType) -> dict:
    gpus = tp * pp
    count = node.gpu_count * -(-gpus // node.gpu_count)
    changes = {"gpu": get_gpu(node.gpu), "gpu_count": count, "node_id": node.id, "tp": tp, "pp": pp}
    if dep.draft is not None:
        changes["draft_tp"] = None if dep.draft_tp in (None, dep.tp) else min(dep.draft_tp, tp)
    return changes


def _layout_words(tp: int, pp: int, node: NodeType) -> str:
    gpus = tp * pp
    nodes = -(-gpus // node.gpu_count)
    where = f"{nodes} x {node.id} nodes" if nodes > 1 else node.id
    across = ", pipeline stages across nodes" if nodes > 1 else ""
    return f"{fmt_counted(gpus, 'GPU')} on {where} at TP {tp}" + (f" x PP {pp}" if pp > 1 else "") + across


def _combinations(dep: Deployment) -> list[tuple[str, Deployment, int]]:
    """For each GPU type, precision, KV dtype and draft choice, the smallest layout that fits and starts:
    (label, deployment, changes to what the model computes)."""
    gpu_ids = [dep.gpu.id]
    if dep.gpu_memory_bytes is None:
        more = {n.gpu for n in list_nodes() if get_gpu(n.gpu).marketed_memory_gb > dep.gpu.marketed_memory_gb}
        gpu_ids += sorted(more)
    formats = [None] + [
        fmt
        for fmt in ("fp8", "int4-awq")
        if dep.target_format.id not in (fmt, "int4-awq", "int4-gptq", "nvfp4", "mxfp4")
    ]
    kvs = [None] + (["fp8"] if dep.kv.id != "fp8" else [])
    drafts = [True, False] if dep.is_speculative else [True]
    found = []
    weights = {fmt: _total_weights_bytes(dep, fmt) for fmt in formats}
    for gpu_id in gpu_ids:
        layouts = _layouts(dep, gpu_id)
        # the marketed size is above what software sees, so skipping by it never drops a layout that fits
        device = dep.gpu_memory_bytes if gpu_id == dep.gpu.id and dep.gpu_memory_bytes else None
        device = device or get_gpu(gpu_id).marketed_memory_gb * 10**9
        other = gpu_id != dep.gpu.id  # another GPU type is a different purchase: offered with the model as it is
        for fmt in formats[:1] if other else formats:
            for kv in kvs[:1] if other else kvs:
                for keep in drafts[:1] if other else drafts:
                    base = {"dtype": fmt} if fmt else {}
                    base |= {"kv_dtype": kv} if kv else {}
                    if not keep:
                        base |= {"draft": None, "draft_tp": None, "draft_dtype": None, "method": None}
                    for tp, pp, node in layouts:
                        if weights[fmt] is not None and weights[fmt] > device * tp * pp:
                            continue  # the weights alone are larger than these GPUs together: no plan needed
                        same = gpu_id == dep.gpu.id and (tp, pp) == (dep.tp, dep.pp)
                        if same and not base:
                            continue
                        changes = _placed(dep, tp, pp, node) | base
                        if not keep:
                            changes["draft_tp"] = None
                        variant = _variant(dep, **changes)
                        if variant is None or not _fits_and_starts(variant):
                            continue
                        words = [] if same else [_layout_words(tp, pp, node)]
                        words += [f"quantize the target's weights to {fmt}"] if fmt else []
                        words += ["store the KV cache in fp8"] if kv else []
                        words += ["serve without speculation"] if not keep else []
                        found.append(("; ".join(words), variant, bool(fmt) + bool(kv) + (not keep)))
                        break
    return found


def _total_weights_bytes(dep: Deployment, fmt: str | None) -> int | None:
    """The target's weights on one GPU in ``fmt`` (every shard together), a lower bound for any layout."""
    variant = _variant(dep, dtype=fmt, tp=1, pp=1, draft_tp=None) if fmt else _variant(dep, tp=1, pp=1, draft_tp=None)
    try:
        return None if variant is None else plan_budget(variant).per_gpu.target_weights_bytes
    except PlannerError:
        return None


def _fits_and_starts(dep: Deployment) -> bool:
    try:
        plan = plan_budget(dep)
    except PlannerError:
        return False
    return plan.fits and plan.starts


def _suggestion(base: Deployment, change: str, variant: Deployment, quality_changes: int) -> Suggestion | None:
    try:
        alt = plan_budget(variant)
    except PlannerError:
        return None
    return Suggestion(
        change=change,
        fits=alt.fits,
        starts=alt.starts,
        remaining_start_problems=len(alt.start_problems),
        kv_cache_tokens=alt.kv_cache_tokens,
        max_concurrency=alt.max_concurrency,
        gpus_per_replica=variant.gpus_per_replica,
        model_changes=quality_changes,
        other_gpu=variant.gpu.id != base.gpu.id,
        detail=f"{alt.kv_cache_tokens:,} KV tokens, {alt.max_concurrency:g} concurrent requests at "
        f"{alt.max_model_len:,} tokens"
        if alt.fits and alt.starts
        else ((alt.start_problems or alt.problems or ["still does not fit"])[0]),
    )


def suggestions_for(dep: Deployment, plan: MemoryPlan) -> list[Suggestion]:
    """The fixes that fit and start, best first (the ranking of the module docstring); empty when none does."""
    candidates: list[tuple[str, Deployment, int]] = []
    if dep.is_speculative and dep.speculator is not None:
        candidates += [(label, variant, 0) for label, variant in _start_fixes(dep)]
    if not plan.fits or plan.start_problems:
        candidates += _combinations(dep)
    if plan.kv_cache_tokens > 0 and plan.kv_cache_tokens < plan.max_model_len:
        shorter = _variant(dep, max_model_len=max(16, plan.kv_cache_tokens - plan.lookahead_slots_per_seq))
        if shorter:
            candidates.append((f"shorten max_model_len to {shorter.max_model_len:,}", shorter, 1))
    found, seen = [], set()
    for change, variant, quality in candidates:
        # the draft's architecture is not in the deployment's JSON: a padded vocabulary is a different variant
        key = variant.model_dump_json() + (variant.draft.architecture.model_dump_json() if variant.draft else "")
        if key in seen:
            continue
        seen.add(key)
        suggestion = _suggestion(dep, change, variant, quality)
        if suggestion is not None and suggestion.fits and suggestion.starts:
            found.append(suggestion)

    # the user's own GPU type first; other GPU types (a different purchase) after, the best few of them
    def order(s: Suggestion) -> tuple:
        return (s.model_changes, s.gpus_per_replica, s.change.count(";"), -s.max_concurrency, s.change)

    # a fix that only adds a change to another fix, on as many GPUs, is no better: left out
    found = [
        s
        for s in found
        if not any(s.change.startswith(o.change + "; ") and s.gpus_per_replica >= o.gpus_per_replica for o in found)
    ]
    same_gpu = sorted((s for s in found if not s.other_gpu), key=order)
    other_gpu = sorted((s for s in found if s.other_gpu), key=order)[:OTHER_GPU_FIXES]
    return (same_gpu + other_gpu)[:MAX_FIXES]
