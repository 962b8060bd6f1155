"""Per-GPU memory plan of a target (and optional draft) co-located on a node, as the engine sizes it.

Budget rules (see planner/engines/profiles.py and data/engines.json for sources):

* vLLM V1: ``KV = gpu_memory_utilization · total − weights(target + draft) − activation peak −
  non-torch (− CUDA-graph estimate from v0.21)``; draft layers share the block pool, so a token costs
  target + draft bytes; ``num_blocks = KV // (block_size · bytes_per_token)``, the minimum over stages.
* vLLM V0: the same pool sized without the draft's weights (vLLM issue #9995), then split so both models
  get the same number of blocks: ``blocks · kv_t / (kv_t + kv_d)``.
* SGLang: ``rest = free after target weights − total · (1 − mem_fraction_static)`` for the target's
  tokens; a draft gets its own pool of ``tokens + headroom`` beside it (its weights live in the slack).
* TensorRT-LLM: ``KV = free_gpu_memory_fraction · (total − weights − activations − runtime)``, 32-token blocks.
* transformers: no pool; weights + KV of ``hf_batch_size`` sequences of ``max_model_len`` + activations.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> plan = plan_budget(Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8,
...                                       draft=get_model("Llama-3.2-1B")))
>>> plan.fits, plan.kv_bytes_per_token_per_gpu, round(plan.draft_kv_share_frac, 3)
(True, 45056, 0.091)
"""

from __future__ import annotations

from math import ceil

from planner.catalog.hardware import device_total_bytes
from planner.deployment import Deployment
from planner.engines.profiles import (
    EngineProfile,
    Limits,
    act_element_bytes,
    calibration,
    cudagraph_bytes,
    engine_profile,
    forward_activation_bytes,
    moe_workspace_bytes,
    non_torch_bytes,
    resolve_limits,
    sampler_bytes,
)
from planner.memory.problems import deployment_problems
from planner.memory.types import GpuMemory, MemoryPlan
from planner.model.kv_bytes import kv_bytes_for_context, kv_bytes_per_token, kv_element_bytes
from planner.model.weight_bytes import pp_stage_layers, stage_weight_bytes, weight_bytes_per_gpu


def _draft_on_stage(dep: Deployment, stage: int) -> bool:
    """The draft runs beside the last pipeline stage (where tokens are sampled)."""
    return dep.draft is not None and stage == dep.pp - 1


def _stage_components(
    dep: Deployment, profile: EngineProfile, limits: Limits, total: int, stage: int, layers: range
) -> dict[str, int]:
    target = dep.target.architecture
    fmt = dep.target_format
    elem = act_element_bytes(fmt.id, fmt.unquantized_dtype)
    tokens = limits.max_num_batched_tokens
    target_w = stage_weight_bytes(
        target, fmt, tp=dep.tp, pp=dep.pp, config=dep.target.config if target.formula_family is None else None
    )[stage]
    peaks = [forward_activation_bytes(target, tokens, dep.tp, elem)]
    workspace = moe_workspace_bytes(target, tokens, dep.tp, elem)
    draft_w = 0
    draft_layers = 0
    if _draft_on_stage(dep, stage):
        draft = dep.draft.architecture
        draft_tp = dep.resolved_draft_tp
        draft_w = weight_bytes_per_gpu(
            draft,
            dep.draft_format,
            tp=draft_tp,
            config=dep.draft.config if draft.formula_family is None else None,
        )
        draft_layers = draft.num_layers
        if profile.draft_weights_budgeted:  # V0 profiles the scorer (target) only
            peaks.append(forward_activation_bytes(draft, tokens, draft_tp, elem))
            workspace = max(workspace, moe_workspace_bytes(draft, tokens, draft_tp, elem))
    if stage == dep.pp - 1:
        per_logit = None if profile.engine != "vllm-v0" else _v0_per_logit()
        peaks.append(sampler_bytes(target.vocab_size, limits.max_num_seqs, per_logit))
    graphs = (
        0
        if profile.engine not in ("vllm", "vllm-v0")
        else cudagraph_bytes(len(layers) + draft_layers, limits.cudagraph_capture_sizes)
    )
    return {
        "target_weights": target_w,
        "draft_weights": draft_w,
        "activation": (sum(peaks) if profile.engine == "vllm-v0" else max(peaks)) + workspace,
        "non_torch": non_torch_bytes(
            profile.engine, dep.tp, dep.pp, peer_link="pcie" not in dep.gpu.scale_up_link.lower()
        ),
        "cudagraph": graphs,
    }


def _v0_per_logit() -> float:
    return calibration().v0_sampler_bytes_per_logit


def _kv_per_token(dep: Deployment, profile: EngineProfile, stage_layers: range, stage: int) -> tuple[int, int]:
    """Target and draft KV bytes per token on one GPU of ``stage`` (every layer in full)."""
    target = dep.target.architecture
    elem = kv_element_bytes(dep.kv, target, dep.target_format)
    target_kv = kv_bytes_per_token(target, elem, dep.tp, layers=stage_layers)
    draft_kv = 0
    if _draft_on_stage(dep, stage):
        draft = dep.draft.architecture
        draft_kv = kv_bytes_per_token(draft, kv_element_bytes(dep.kv, draft, dep.draft_format), dep.resolved_draft_tp)
    return target_kv, draft_kv


def _sequence_bytes(dep: Deployment, tokens: int, stage_layers: range, stage: int, slack: int) -> int:
    """KV bytes one sequence of ``tokens`` tokens holds on one GPU, sliding layers capped."""
    target = dep.target.architecture
    total = kv_bytes_for_context(
        target,
        kv_element_bytes(dep.kv, target, dep.target_format),
        tokens,
        dep.tp,
        slack_tokens=slack,
        layers=stage_layers,
    )
    if _draft_on_stage(dep, stage):
        draft = dep.draft.architecture
        total += kv_bytes_for_context(
            draft,
            kv_element_bytes(dep.kv, draft, dep.draft_format),
            tokens,
            dep.resolved_draft_tp,
            slack_tokens=slack,
        )
    return total


def plan_budget(dep: Deployment) -> MemoryPlan:
    """The memory plan of ``dep`` on one GPU of each pipeline stage and what it leaves for KV (no fixes)."""

    profile = engine_profile(dep.engine, dep.engine_version)
    limits = resolve_limits(dep, profile)
    device = device_total_bytes(dep.gpu)
    total = dep.gpu_memory_bytes or device.bytes
    max_len = dep.resolved_max_model_len
    k = dep.num_speculative_tokens if dep.draft is not None else 0
    stages_layers = pp_stage_layers(dep.target.architecture.num_layers, dep.pp)
    stages, blocks_per_stage, per_token, draft_pools = [], [], [], []
    for s, layers in enumerate(stages_layers):
        parts = _stage_components(dep, profile, limits, total, s, layers)
        target_kv, draft_kv = _kv_per_token(dep, profile, layers, s)
        per_token.append((target_kv, draft_kv))
        gpu, blocks, draft_pool = _apply_budget(
            dep, profile, limits, total, parts, target_kv, draft_kv, k, layers, s, max_len
        )
        stages.append(gpu)
        blocks_per_stage.append(blocks)
        draft_pools.append(draft_pool)
    binding = min(range(dep.pp), key=lambda s: blocks_per_stage[s])
    num_blocks = max(0, blocks_per_stage[binding])
    block = limits.block_size
    target_kv, draft_kv = per_token[-1] if dep.draft is not None else per_token[binding]
    kv_total = target_kv + draft_kv
    if profile.budget_rule == "whole_device":
        tokens = dep.hf_batch_size * max_len
        concurrency = float(dep.hf_batch_size) if num_blocks > 0 else 0.0
    else:
        tokens = num_blocks * block
        per_request = _sequence_bytes(dep, max_len + k, stages_layers[binding], binding, slack=_slack(profile, limits))
        blocks_per_request = ceil(per_request / max(1, block * sum(per_token[binding])))
        concurrency = num_blocks / blocks_per_request if blocks_per_request else 0.0
    draft_share = draft_kv / kv_total if kv_total else 0.0
    if profile.draft_kv == "separate_pool_with_headroom" and dep.draft is not None:
        pool = stages[-1].kv_cache_bytes
        draft_share = draft_pools[-1] / pool if pool else 0.0
    plan = MemoryPlan(
        engine=dep.engine,
        engine_profile=profile.id,
        engine_versions=f"[{profile.min_version}, {profile.max_version})",
        limits=limits,
        per_gpu=stages[binding],
        stages=stages,
        binding_stage=binding,
        kv_bytes_per_token_per_gpu=kv_total,
        target_kv_bytes_per_token_per_gpu=target_kv,
        draft_kv_bytes_per_token_per_gpu=draft_kv,
        block_size=block,
        num_blocks=num_blocks,
        kv_cache_tokens=tokens,
        max_model_len=max_len,
        max_concurrency=round(concurrency, 2),
        lookahead_slots_per_seq=k,
        draft_kv_share_frac=draft_share,
        fits=False,
        problems=[],
        assumptions=_assumptions(dep, profile, limits, device),
    )
    problems, fits = deployment_problems(dep, plan, profile)
    plan.problems, plan.fits = problems, fits
    if dep.draft is not None:
        alone = plan_budget(dep.without_draft())
        plan.kv_cache_tokens_without_draft = alone.kv_cache_tokens
        plan.max_concurrency_without_draft = alone.max_concurrency
    return plan


def _slack(profile: EngineProfile, limits: Limits) -> int:
    """Tokens beyond the window a sliding layer keeps (transformers window-1; vLLM + batch tokens)."""
    if profile.engine == "hf":
        return -1
    return limits.max_num_batched_tokens - 1


def _apply_budget(
    dep: Deployment,
    profile: EngineProfile,
    limits: Limits,
    total: int,
    parts: dict[str, int],
    target_kv: int,
    draft_kv: int,
    k: int,
    layers: range,
    stage: int,
    max_len: int,
) -> tuple[GpuMemory, int, int]:
    """The engine's rule: budget, KV pool and blocks on one GPU; returns (memory, blocks, draft pool)."""
    block = limits.block_size
    weights = parts["target_weights"] + parts["draft_weights"]
    act, nt, graphs = parts["activation"], parts["non_torch"], parts["cudagraph"]
    draft_pool = 0
    rule = profile.budget_rule
    if rule == "fraction_of_total":
        budget = round(limits.memory_fraction * total)
        budgeted_weights = weights if profile.draft_weights_budgeted else parts["target_weights"]
        kv = budget - budgeted_weights - act - nt - (graphs if profile.cudagraph_subtracted else 0)
        per_token = target_kv + draft_kv
        if profile.draft_kv == "even_block_split":
            target_blocks = kv // (block * target_kv) if target_kv else 0
            blocks = int(target_blocks * target_kv / per_token) if per_token else 0
        else:
            blocks = kv // (block * per_token) if per_token else 0
    elif rule == "fraction_of_free_after_weights":
        available = total - weights - act - nt
        budget = available
        kv = round(limits.memory_fraction * available)
        per_token = target_kv + draft_kv
        blocks = kv // (block * per_token) if per_token else 0
    elif rule == "static_fraction_after_weights":
        budget = round(limits.memory_fraction * total)
        rest = total - nt - parts["target_weights"] - round(total * (1 - limits.memory_fraction))
        # Target and draft pools hold the same tokens (the draft's adds a headroom of draft/verify slots);
        # both come out of the static region, the draft's weights out of the slack.
        headroom = limits.max_num_seqs * (k + (k + 1)) + 100 if draft_kv else 0
        per_token = target_kv + draft_kv
        blocks = max(0, (rest - headroom * draft_kv) // per_token) if per_token else 0
        draft_pool = (blocks + headroom) * draft_kv if draft_kv else 0
        kv = rest
    else:  # whole_device: transformers holds exactly what it uses
        budget = total
        kv = _sequence_bytes(dep, max_len + k, layers, stage, slack=-1) * dep.hf_batch_size
        blocks = 1 if weights + act + nt + kv <= total else 0
    gpu = GpuMemory(
        total_bytes=total,
        budget_bytes=budget,
        target_weights_bytes=parts["target_weights"],
        draft_weights_bytes=parts["draft_weights"],
        activation_bytes=act,
        non_torch_bytes=nt,
        cudagraph_bytes=graphs,
        kv_cache_bytes=kv,
        free_bytes=0,
    )
    gpu.free_bytes = total - (weights + act + nt + graphs + kv)  # components add up to the total
    return gpu, int(blocks), draft_pool


def _assumptions(dep: Deployment, profile: EngineProfile, limits: Limits, device) -> list[str]:
    notes = [
        f"engine profile {profile.id} (releases {profile.min_version} to <{profile.max_version}): {profile.source}",
        f"{profile.memory_knob or 'memory'} = {limits.memory_fraction:.3f}; max_num_batched_tokens = "
        f"{limits.max_num_batched_tokens:,}; max_num_seqs = {limits.max_num_seqs:,}; block size {limits.block_size}",
        "activation peak, non-torch and CUDA-graph memory are calibrated on real start-up logs "
        "(error: `make bench-accuracy`)",
    ]
    if dep.gpu_memory_bytes:
        notes.append("device total overridden by the user")
    elif device.estimated:
        notes.append(f"device total {device.how}")
    if profile.budget_rule != "whole_device" and dep.target.architecture.num_sliding_layers:
        notes.append(
            "sliding-window layers are sized at full length"
            if not profile.sliding_window_savings
            else "sliding-window layers are capped at their window"
        )
    notes += limits.notes
    return notes


def concurrency_by_context(dep: Deployment, lengths: list[int]) -> list[tuple[int, float]]:
    """Max concurrency at each ``max_model_len`` in ``lengths`` (the same plan, re-sized)."""
    points = []
    for length in lengths:
        plan = plan_budget(dep.replace(max_model_len=length))
        points.append((length, plan.max_concurrency if plan.fits else 0.0))
    return points
