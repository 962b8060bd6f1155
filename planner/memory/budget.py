"""Per-GPU memory plan of a target (and optional draft) co-located on a node, as the engine sizes it.

The components come from :mod:`planner.engines.components` as the engine's profile selects them; the
engine's budget rule (one module each in :mod:`planner.memory.budget_rules`, chosen by
``profile.budget_rule``) turns them into a KV cache and a number of blocks on every pipeline stage; the
plan keeps the tightest stage.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> plan = plan_budget(Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8,
...                                       draft=get_model("Llama-3.2-1B")))
>>> plan.fits, plan.kv_bytes_per_token_per_gpu, round(plan.draft_kv_share_frac, 3)
(True, 45056, 0.091)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import ceil

from planner.catalog.hardware import device_total_bytes
from planner.catalog.speculators import head_tensors
from planner.deployment import Deployment
from planner.engines.components import (
    combine_peaks,
    cudagraph_bytes,
    forward_activation_bytes,
    memory_accuracy,
    moe_workspace_bytes,
    non_torch_bytes,
    rejection_warmup_bytes,
    rope_cache_bytes,
    sampler_bytes,
)
from planner.engines.profiles import EngineProfile, Limits, engine_profile, resolve_limits
from planner.memory.budget_rules import StageInputs, budget_rule
from planner.memory.kv_groups import CHUNKED, SLIDING, KvLayout, LayerKv, hybrid_layout, request_bytes
from planner.memory.problems import deployment_problems
from planner.memory.types import MemoryPlan
from planner.model.dtypes import element_bytes
from planner.model.geometry import Architecture
from planner.model.kv_bytes import (
    kv_bytes_for_context,
    kv_bytes_per_token,
    kv_element_bytes,
    layer_kv_bytes_per_token,
)
from planner.model.weight_bytes import pp_stage_layers, stage_weight_bytes, weight_bytes_per_gpu
from planner.units import fmt_gib


def _draft_on_stage(dep: Deployment, stage: int) -> bool:
    """The speculator (draft model, head or the target's MTP layers) runs beside the last pipeline stage."""
    return dep.speculator is not None and stage == dep.pp - 1


def _speculator_weights_bytes(dep: Deployment, profile: EngineProfile) -> int:
    """The speculator's weights on one GPU as the engine loads them: a head's own tensors (embedding and LM head
    left to the target when it shares them, :func:`planner.catalog.speculators.head_tensors`), else the draft.
    Where the release keeps the head's duplicate embedding and LM head while it sizes the pool
    (``draft_head_copies_kept_while_sizing``), the head weighs its own copies of both; where it keeps an MTP
    module's own LM head (``mtp_keeps_own_lm_head``), that copy."""
    spec = dep.speculator
    arch = spec.architecture
    kept = getattr(profile, "draft_head_copies_kept_while_sizing", False)
    own_head = profile.mtp_keeps_own_lm_head and spec.speculator is not None and spec.speculator.kind == "mtp"
    return weight_bytes_per_gpu(
        arch,
        dep.draft_format,
        tp=dep.resolved_draft_tp,
        config=spec.config,
        tensors=head_tensors(spec, own_embeddings=kept, own_lm_head=own_head),
    )


@dataclass(frozen=True)
class _StageFixed:
    """The parts of one stage's inputs that neither K nor the batch cap changes (weights, activation peak of
    the target and draft at ``max_num_batched_tokens``, KV bytes per token, the layers cached, the hybrid layout)."""

    target_weights_bytes: int
    draft_weights_bytes: int
    draft_layers: int
    forward_peaks: tuple[int, ...]
    workspace_bytes: int
    non_torch_bytes: int
    target_kv_per_token: int
    draft_kv_per_token: int
    sequence_bytes: Callable[[int], int]
    layers_kv: tuple[LayerKv, ...]
    layout: Callable[[], KvLayout | None]


class SharedBudget:
    """What the plans of deployments that differ only in K (``num_speculative_tokens``) and the batch cap
    (``max_num_seqs``) share, computed once: each stage's fixed inputs and the problems of the pair and the
    context. Pass one to :func:`plan_budget` for each such family (the design-space search does); the plan is
    the same as without it (a test compares every field).

    >>> from planner.catalog.lookup import get_model, get_node
    >>> from planner.deployment import Deployment
    >>> shared = SharedBudget()
    >>> deps = [Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), max_num_seqs=n)
    ...         for n in (8, 64)]
    >>> [plan_budget(d, share=shared) == plan_budget(d) for d in deps]
    [True, True]
    """

    def __init__(self) -> None:
        self._memo: dict[tuple, object] = {}

    def get(self, key: tuple, make: Callable[[], object]) -> object:
        found = self._memo.get(key, _MISSING)
        if found is _MISSING:
            found = self._memo[key] = make()
        return found


_MISSING = object()


def _memoised(bytes_of: Callable[[int], int]) -> Callable[[int], int]:
    """``bytes_of`` remembered per token count (the plans of one family ask it at each K)."""
    seen: dict[int, int] = {}

    def of(tokens: int) -> int:
        found = seen.get(tokens)
        if found is None:
            found = seen[tokens] = bytes_of(tokens)
        return found

    return of


def _stage_fixed(
    dep: Deployment, profile: EngineProfile, tokens: int, stage: int, layers: range, slack: int
) -> _StageFixed:
    target = dep.target.architecture
    fmt = dep.target_format
    elem = element_bytes(fmt.activation_dtype)
    target_w = stage_weight_bytes(target, fmt, tp=dep.tp, pp=dep.pp, config=dep.target.config)[stage]
    if profile.rope_cache_in_weights:  # a draft with the same rope reuses it (vLLM's get_rope is process-wide)
        target_w += rope_cache_bytes(target, dep.target.config, elem)
    peaks = [forward_activation_bytes(target, tokens, dep.tp, elem, profile)]
    workspace = moe_workspace_bytes(target, tokens, dep.tp, elem, fmt)
    draft_w = 0
    draft_layers = 0
    if _draft_on_stage(dep, stage):
        draft = dep.speculator.architecture
        draft_tp = dep.resolved_draft_tp
        draft_w = _speculator_weights_bytes(dep, profile)
        draft_layers = draft.num_layers
        if profile.draft_weights_budgeted:  # V0 profiles the scorer (target) only
            peaks.append(forward_activation_bytes(draft, tokens, draft_tp, elem, profile))
            workspace = max(workspace, moe_workspace_bytes(draft, tokens, draft_tp, elem, dep.draft_format))
    target_kv, draft_kv = _kv_per_token(dep, layers, stage)
    layers_kv = _layers_kv(dep, layers, stage)
    rule = profile.hybrid_kv_groups
    layout: list = []

    def kv_layout() -> KvLayout | None:
        if not layout:
            layout.append(None if rule is None else hybrid_layout(layers_kv, rule.largest_group_below_ratio))
        return layout[0]

    return _StageFixed(
        target_weights_bytes=target_w,
        draft_weights_bytes=draft_w,
        draft_layers=draft_layers,
        forward_peaks=tuple(peaks),
        workspace_bytes=workspace,
        non_torch_bytes=non_torch_bytes(profile, dep.tp, dep.pp, peer_link="pcie" not in dep.gpu.scale_up_link.lower()),
        target_kv_per_token=target_kv,
        draft_kv_per_token=draft_kv,
        sequence_bytes=_memoised(lambda n: _sequence_bytes(dep, n, layers, stage, slack=slack)),
        layers_kv=layers_kv,
        layout=kv_layout,
    )


def _stage_inputs(
    dep: Deployment,
    profile: EngineProfile,
    limits: Limits,
    total: int,
    stage: int,
    layers: range,
    share: SharedBudget | None = None,
) -> StageInputs:
    target = dep.target.architecture
    elem = element_bytes(dep.target_format.activation_dtype)
    tokens = limits.max_num_batched_tokens
    slack = -1 if profile.sliding_window_slack == "window_minus_one" else limits.max_num_batched_tokens - 1
    fixed = (
        _stage_fixed(dep, profile, tokens, stage, layers, slack)
        if share is None
        else share.get(
            ("stage", stage, tokens, slack), lambda: _stage_fixed(dep, profile, tokens, stage, layers, slack)
        )
    )
    peaks = list(fixed.forward_peaks)
    if stage == dep.pp - 1:  # V0 samples on the driver rank only: the rank that binds the pool
        seqs = profile.profile_run_seqs(limits, dep.resolved_max_model_len)
        held = tokens * target.hidden_size * elem if profile.sampler_holds_hidden_states else 0
        peaks.append(held + sampler_bytes(profile, target.vocab_size, seqs))
        if dep.is_speculative:
            peaks.append(rejection_warmup_bytes(profile, target.vocab_size, seqs, elem))
    return StageInputs(
        dep=dep,
        profile=profile,
        limits=limits,
        total_bytes=total,
        target_weights_bytes=fixed.target_weights_bytes,
        draft_weights_bytes=fixed.draft_weights_bytes,
        torch_peak_increase_bytes=combine_peaks(profile, peaks) + fixed.workspace_bytes,
        non_torch_increase_bytes=fixed.non_torch_bytes,
        cudagraph_bytes=cudagraph_bytes(profile, len(layers) + fixed.draft_layers, limits.cudagraph_capture_sizes),
        target_kv_per_token=fixed.target_kv_per_token,
        draft_kv_per_token=fixed.draft_kv_per_token,
        k=dep.num_speculative_tokens if dep.is_speculative else 0,
        sequence_bytes=fixed.sequence_bytes,
        layers_kv=fixed.layers_kv,
        target_layers=len(layers),
        draft_layers=fixed.draft_layers,
        known_layout=fixed.layout,
    )


def _arch_layers_kv(arch: Architecture, element_bytes: int, tp: int, layers) -> list[LayerKv]:
    per_layer = layer_kv_bytes_per_token(arch, element_bytes, tp)
    windows = {SLIDING: arch.sliding_window, CHUNKED: arch.attention_chunk_size}
    return [LayerKv(arch.layer_types[i], windows.get(arch.layer_types[i]), per_layer) for i in layers]


def _layers_kv(dep: Deployment, stage_layers: range, stage: int) -> tuple[LayerKv, ...]:
    """Every attention layer one GPU of ``stage`` caches: the target's stage layers, then the draft's."""
    target = dep.target.architecture
    found = _arch_layers_kv(target, kv_element_bytes(dep.kv, target, dep.target_format), dep.tp, stage_layers)
    if _draft_on_stage(dep, stage):
        draft = dep.speculator.architecture
        elem = kv_element_bytes(dep.kv, draft, dep.draft_format)
        found += _arch_layers_kv(draft, elem, dep.resolved_draft_tp, range(draft.num_layers))
    return tuple(found)


def _kv_per_token(dep: Deployment, stage_layers: range, stage: int) -> tuple[int, int]:
    """Target and draft KV bytes per token on one GPU of ``stage`` (every layer in full)."""
    target = dep.target.architecture
    elem = kv_element_bytes(dep.kv, target, dep.target_format)
    target_kv = kv_bytes_per_token(target, elem, dep.tp, layers=stage_layers)
    draft_kv = 0
    if _draft_on_stage(dep, stage):
        draft = dep.speculator.architecture
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
        draft = dep.speculator.architecture
        total += kv_bytes_for_context(
            draft,
            kv_element_bytes(dep.kv, draft, dep.draft_format),
            tokens,
            dep.resolved_draft_tp,
            slack_tokens=slack,
        )
    return total


def plan_budget(
    dep: Deployment, *, compare_without_draft: bool = True, share: SharedBudget | None = None
) -> MemoryPlan:
    """The memory plan of ``dep`` on one GPU of each pipeline stage and what it leaves for KV (no fixes).

    ``compare_without_draft`` also plans the target alone (``kv_cache_tokens_without_draft``); a caller that plans
    the target alone itself (the design-space search) skips that second plan. ``share``: the parts this plan
    shares with the plans of the same deployment at other K and batch caps (:class:`SharedBudget`).
    """

    profile = (
        engine_profile(dep.engine, dep.engine_version)
        if share is None
        else share.get(("profile",), lambda: engine_profile(dep.engine, dep.engine_version))
    )
    limits = resolve_limits(dep, profile)
    device = device_total_bytes(dep.gpu)
    total = dep.gpu_memory_bytes or device.bytes
    max_len = dep.resolved_max_model_len
    k = dep.num_speculative_tokens if dep.is_speculative else 0
    stages_layers = pp_stage_layers(dep.target.architecture.num_layers, dep.pp)
    rule = budget_rule(profile)
    stages, blocks_per_stage, per_token, draft_pools, inputs = [], [], [], [], []
    for s, layers in enumerate(stages_layers):
        stage = _stage_inputs(dep, profile, limits, total, s, layers, share)
        result = rule.apply(stage)
        inputs.append(stage)
        per_token.append((stage.target_kv_per_token, stage.draft_kv_per_token))
        stages.append(result.memory)
        blocks_per_stage.append(result.blocks)
        draft_pools.append(result.draft_pool_bytes)
    binding = min(range(dep.pp), key=lambda s: blocks_per_stage[s])
    num_blocks = max(0, blocks_per_stage[binding])
    block = limits.block_size
    target_kv, draft_kv = per_token[-1] if dep.speculator is not None else per_token[binding]
    kv_total = target_kv + draft_kv
    layout = inputs[binding].kv_layout if rule.POOLED else None
    admits = True
    if layout is not None:  # vLLM V1's hybrid groups: per-group tokens, window-limited requests
        batched = limits.max_num_batched_tokens
        tokens = layout.tokens(num_blocks, block)
        kv_total = layout.bytes_per_token
        blocks_per_request = layout.blocks_per_request(max_len + k, batched, block)
        concurrency = num_blocks / blocks_per_request if blocks_per_request else 0.0
        admits = all(
            request_bytes(stage.layers_kv, max_len, batched, block) <= memory.kv_cache_bytes
            for stage, memory in zip(inputs, stages, strict=True)
        )
    elif rule.POOLED:
        tokens = num_blocks * block
        per_request = inputs[binding].sequence_bytes(max_len + k)
        blocks_per_request = ceil(per_request / max(1, block * sum(per_token[binding])))
        concurrency = num_blocks / blocks_per_request if blocks_per_request else 0.0
        admits = tokens >= max_len
    else:  # the engine holds exactly its batch
        tokens = dep.hf_batch_size * max_len
        concurrency = float(dep.hf_batch_size) if num_blocks > 0 else 0.0
    draft_share = draft_kv / kv_total if kv_total else 0.0
    if profile.draft_kv in ("separate_pool_with_headroom", "static_region_by_layers") and dep.speculator is not None:
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
        assumptions=_assumptions(dep, profile, limits, device, inputs[binding]),
    )
    plan.admits_max_model_len = admits
    found = deployment_problems(dep, plan, profile, share)
    plan.problems, plan.fits, plan.start_problems = found.problems, found.fits, found.start
    plan.starts = not found.start
    if dep.is_speculative and compare_without_draft:
        alone = plan_budget(dep.without_draft())
        plan.kv_cache_tokens_without_draft = alone.kv_cache_tokens
        plan.max_concurrency_without_draft = alone.max_concurrency
    return plan


def _calibration_note() -> str:
    """What the calibrated memory terms rest on, with their recorded error against logs no fit used."""
    unseen = memory_accuracy().get("kv_tokens_unseen_known")
    recorded = f" ({unseen})" if unseen else ""
    return "activation peak, non-torch and CUDA-graph memory are calibrated on real start-up logs" + recorded


def _assumptions(
    dep: Deployment, profile: EngineProfile, limits: Limits, device, stage: StageInputs | None = None
) -> list[str]:
    notes = [
        f"engine profile {profile.id} ({profile.releases()}): {profile.source}",
        f"{profile.memory_knob or 'memory'} = {limits.memory_fraction:.3f}; max_num_batched_tokens = "
        f"{limits.max_num_batched_tokens:,}; max_num_seqs = {limits.max_num_seqs:,}; block size {limits.block_size}",
        _calibration_note(),
    ]
    if profile.compiles_in_profile and not dep.enforce_eager:
        notes.append(
            "sized for a first start: the engine compiles the model inside its memory profile and counts the "
            "compiler's temporary memory as activation peak; a restart that finds its compile cache has logged "
            "0.5 to 1.2 GiB more KV cache per GPU (vLLM issues #54122, #54383)"
        )
    sizing = profile.measured_kv_sizing
    if sizing is not None and stage is not None:
        kept = sizing.kept_free_bytes(dep.gpu.vendor, stage.torch_peak_increase_bytes)
        notes.append(
            f"KV cache sized from the memory measured after warm-up (vLLM's extensible KV cache): {fmt_gib(kept, 2)} "
            f"per GPU kept free, {sizing.in_use_at_start_gib:.2f} GiB in use when the engine starts (the CUDA "
            f"context, as an H100 start-up log states it; taken for every GPU) and a margin of the larger of "
            f"{sizing.margin_floor(dep.gpu.vendor):g} GiB and {sizing.margin_fraction_of_peak:g} x the activation "
            f"peak; a {profile.memory_knob or 'memory fraction'} below 1 caps it"
        )
    if budget_rule(profile).POOLED:
        notes.append(
            "nothing else takes or frees memory on these GPUs while the engine starts: it sizes its KV cache from the "
            "device's used memory (vLLM mem_utils.memory_profiling), so another process in that window moves the cache"
        )
    if dep.gpu_memory_bytes:
        notes.append("device total overridden by the user")
    elif device.estimated:
        notes.append(f"device total {device.how}")
    layout = stage.kv_layout if stage is not None else None
    if layout is not None:
        notes.append(
            f"hybrid KV cache: {layout.num_groups} groups of {layout.layers_per_group} layers by attention kind "
            f"({layout.padding_layers} padding layers); tokens = blocks // {layout.num_groups} x block size; a "
            "request holds window-limited blocks in sliding and chunked groups"
        )
    elif budget_rule(profile).POOLED and dep.target.architecture.num_sliding_layers:
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
