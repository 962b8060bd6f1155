"""The speed model at one load: latency and throughput with and without the draft, optimal K, a verdict.

A plain decode step and a speculative step come from :class:`planner.speed.engine_step.EngineStep`
(one step model, per operator class) at the mean cached context of a request (prompt + half the output). With
τ(α, K) tokens per speculative step (Leviathan et al. 2023, https://arxiv.org/abs/2211.17192; docs/speed-model.md)
the decode step alone gives Leviathan's ``speedup = τ · T_plain / T_spec``; the estimate serves B requests back to
back instead (:mod:`planner.speed.steady_step`): each request's prompt is prefilled between or alongside the
decodes, with and without the draft (which prefills it too), so::

    throughput = n · O / E[T]     TPOT = E[T | the request decoding] / τ     speedup = throughput_SD / throughput

with n requests finished per step and E[T] the mean step, prompts included. Long outputs tend to the decode-only
ratio; short outputs after long prompts pull the speedup toward 1. TTFT is a new request's wait for a step (or for
a slot, past the engine's running cap) and then its prompt's step, shared with the other requests' prompts and
decodes (:meth:`planner.speed.steady_step.SteadyState.ttft_s`); at batch 1, one prompt's prefill (target, plus the
draft's own prefill when speculating). The verdict follows the speedup at the workload's K (the
optimal K when none is given); acceptance levels only warn (``planner.speed.policy``). Queues, KV limits and
arrivals at a rate are :mod:`planner.speed.simulate`'s, which agrees with this estimate at steady state.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8,
...                          draft=get_model("Llama-3.2-1B"))
>>> est = estimate_speed(dep, SpeedWorkload.build(alpha=0.8, k=5))
>>> est.expected_tokens_per_step.__round__(2), est.speedup > 1, est.verdict in ("recommend", "enable")
(3.69, True, True)
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from pydantic import BaseModel

from planner import acceptance_math as spec
from planner.catalog.speculators import mtp_layer_count
from planner.deployment import Deployment
from planner.engines import Limits
from planner.errors import PlannerError
from planner.memory import concurrency_by_context, plan_budget
from planner.speed.drafting import DraftShape
from planner.speed.engine_step import EngineStep, EngineStepTime
from planner.speed.policy import Verdict, speculation_rules
from planner.speed.profiles import SpeedProfile
from planner.speed.steady_step import RequestLengths, ServedStep, SteadyState, mean_context_tokens
from planner.speed.step_model import ForwardTime
from planner.speed.workload import SpeedWorkload

__all__ = ["BaselineSpeed", "SpeedEstimate", "SpeedWorkload", "StepTimes", "baseline_speed", "estimate_speed"]


class StepTimes(BaseModel):
    """The forward passes behind one estimate (seconds, per operator), for the assumptions panel."""

    target_decode: ForwardTime
    target_verify: ForwardTime
    #: None for n-gram lookup (no draft pass).
    draft_decode: ForwardTime | None
    draft_first_pass: ForwardTime | None
    spec_step_s: float
    spec_overhead_s: float
    #: Leviathan's c: one draft decode pass over one target decode step.
    cost_ratio: float


class SpeedEstimate(BaseModel):
    """Everything the CLI, the Performance page and the reports show about speed at one load."""

    target: str
    draft: str
    engine: str
    profile: str
    batch_size: int
    prompt_tokens: int
    output_tokens: int
    #: How request lengths vary around those means: ``fixed``, or as a dataset's (``sharegpt``, ``mlperf-openorca``).
    dataset: str = "fixed"
    context_tokens: int
    alpha: float
    acceptance_convention: str
    #: draft_model, eagle, eagle3, mtp or ngram; chain or tree, the tree's level widths, the verify pass's tokens.
    method: str
    verification: str
    tree_widths: tuple[int, ...]
    verify_tokens: int
    #: Speedup at the same K verifying a chain and the engine-default tree (heads only; else chain alone).
    speedup_by_verification: dict[str, float]
    k: int
    k_given: bool
    expected_tokens_per_step: float
    draft_acceptance_rate: float
    baseline_tpot_s: float
    spec_tpot_s: float
    speedup: float
    #: Leviathan's ratio of the decode steps alone at the full batch, τ · T_plain / T_spec: what a decode-speed
    #: measurement (tokens per second while decoding, no prompts between) compares; ``speedup`` serves the prompts.
    decode_speedup: float
    baseline_ttft_s: float
    spec_ttft_s: float
    baseline_e2e_latency_s: float
    spec_e2e_latency_s: float
    baseline_tok_s_per_sequence: float
    tok_s_per_sequence: float
    baseline_throughput_tok_s: float
    throughput_tok_s: float
    replicas_per_node: int
    optimal_k: int
    speedup_at_optimal_k: float
    speedup_by_k: dict[int, float]
    break_even_alpha: float | None
    verdict: Verdict
    verdict_k: int
    verdict_reason: str
    thresholds: dict[str, float]
    thresholds_source: str
    steps: StepTimes
    #: Every speed-profile parameter used: (name, value, source or fit derivation).
    assumptions: list[tuple[str, float | int | bool, str]]
    warnings: list[str] = []


def arm_limits(deployment: Deployment) -> tuple[Limits | None, Limits | None]:
    """The engine's limits as planned without and with the speculator; None where the memory plan is unavailable."""
    try:
        return plan_budget(deployment.without_draft()).limits, plan_budget(deployment).limits
    except PlannerError:
        return None, None


def running_caps(deployment: Deployment) -> tuple[int | None, int | None]:
    """The requests the engine runs at once without and with the speculator (its max_num_seqs as planned: SGLang
    caps running requests lower with a draft, ``planner.engines``); None where the memory plan is unavailable."""
    return _caps(arm_limits(deployment))


def _caps(limits: tuple[Limits | None, Limits | None]) -> tuple[int | None, int | None]:
    plain, speculative = limits
    return (None if plain is None else plain.max_num_seqs), (None if speculative is None else speculative.max_num_seqs)


def _prefill_rooms(limits: tuple[Limits | None, Limits | None], chunked: bool) -> tuple[int | None, int | None]:
    """Each arm's token budget per step where the engine splits a prompt over steps (None where it does not)."""
    plain, speculative = limits if chunked else (None, None)
    return (
        None if plain is None else plain.max_num_batched_tokens,
        None if speculative is None else speculative.max_num_batched_tokens,
    )


#: How close the break-even α is bisected (it is shown to three decimals).
BREAK_EVEN_TOLERANCE = 1e-6


class BatchSteps:
    """Plain and speculative steps at one batch size and request length: each step alone at the full batch (the
    anatomy the assumptions panel shows) and served at steady state, each request's prefill included
    (:mod:`planner.speed.steady_step`), which every speedup, throughput and TPOT here is."""

    def __init__(
        self,
        engine: EngineStep,
        batch: int,
        lengths: RequestLengths,
        caps: tuple[int | None, int | None] = (None, None),
        prefill_rooms: tuple[int | None, int | None] = (None, None),
    ) -> None:
        self.engine = engine
        self.prefill_rooms = prefill_rooms
        plain_batch, spec_batch = (batch if cap is None else min(batch, cap) for cap in caps)
        #: The speculative arm's steady state, and the plain arm's: each serves the requests its engine runs at once.
        self.steady = SteadyState(engine, spec_batch, lengths, batch)
        self.steady_plain = (
            self.steady if plain_batch == spec_batch else SteadyState(engine, plain_batch, lengths, batch)
        )
        self.batch, self.context = batch, self.steady.context_tokens
        self.plain = engine.plain(decode_seqs=batch, decode_context_tokens=batch * self.context)
        self.served_plain = self.steady_plain.served(None, 1.0)
        self.baseline_tpot_s = self.steady_plain.tpot_s(self.served_plain, None)

    def step(self, shape: DraftShape) -> EngineStepTime:
        """The speculative step of any drafting ``shape`` (a tree, or a chain) alone, at this batch and context."""
        return self.engine.speculative(
            shape.k, decode_seqs=self.batch, decode_context_tokens=self.batch * self.context, shape=shape
        )

    def served(self, shape: DraftShape, alpha: float) -> ServedStep:
        """The steady-state step of ``shape`` at per-token acceptance ``alpha``."""
        return self.steady.served(shape, shape.tokens_per_step(alpha))

    def speedup_of(self, shape: DraftShape, alpha: float) -> float:
        """Output tokens per second served with ``shape`` over those served without a draft."""
        return self.speedup_served(self.served(shape, alpha))

    def speedup_served(self, served: ServedStep) -> float:
        """The speedup of a speculative arm's steady state ``served`` over the plain arm's."""
        return served.throughput_tok_s / self.served_plain.throughput_tok_s

    def spec_tpot_s(self, served: ServedStep, shape: DraftShape) -> float:
        """TPOT of the speculative arm's steady state ``served`` (with ``shape``)."""
        return self.steady.tpot_s(served, shape)

    @functools.cached_property
    def baseline_ttft_s(self) -> float:
        """TTFT of the plain arm's steady state, its queue included."""
        return self.steady_plain.ttft_s(self.served_plain, None, self.prefill_rooms[0])

    def spec_ttft_s(self, served: ServedStep, shape: DraftShape) -> float:
        """TTFT of the speculative arm's steady state ``served`` (with ``shape``), its queue included."""
        return self.steady.ttft_s(served, shape, self.prefill_rooms[1])

    def speedup(self, alpha: float, k: int) -> float:
        """:meth:`speedup_of` the method's chain of ``k``."""
        return self.speedup_of(self.engine.shape(k), alpha)

    def speedup_by_depth(
        self, workload: SpeedWorkload, method: str, alpha: float, ks: Iterable[int]
    ) -> dict[int, float]:
        """Speedup per draft length (chain) or tree depth, verifying as ``workload`` does (depths its budget allows)."""
        if workload.verification == "chain":
            return {k: self.speedup(alpha, k) for k in ks}
        return {k: self.speedup_of(workload.draft_shape(method, k), alpha) for k in ks if workload.allows_depth(k)}

    def break_even_alpha(self, ks: Iterable[int]) -> float | None:
        """The smallest α at which the best chain of ``ks`` pays (speedup 1): the least of each K's own break-even
        (each K's speedup rises with α), a K bisected only where it pays at the least found so far (short chains
        first: they pay soonest)."""
        best: float | None = None
        for k in sorted(ks):
            upper = 1.0 if best is None else best
            found = spec.break_even(lambda alpha, k=k: self.speedup(alpha, k), BREAK_EVEN_TOLERANCE, upper)
            if found is not None:
                best = found
            if best == 0.0:
                break
        return best


def _pass(step, name: str) -> ForwardTime | None:
    found = next((p for label, p in step.passes if label == name), None)
    return None if found is None else ForwardTime.of(found)


#: Methods whose engines verify a draft tree as well as a chain (SGLang's EAGLE worker runs heads and MTP).
TREE_METHODS: tuple[str, ...] = ("eagle", "eagle3", "mtp")


def search_ks(deployment: Deployment, given: int | None = None) -> list[int]:
    """The draft lengths the optimal K is searched over: the policy's range and the K ``given`` (so the optimum is
    never below the chosen K), and for an MTP module no more tokens than it has layers (its published acceptance
    is for that K; vLLM warns that reusing a layer for more tokens "may result in lower acceptance rate",
    ``vllm/config/speculative.py``)."""
    ks = sorted({*speculation_rules().k_search.ks, *([given] if given is not None else [])})
    if deployment.speculative_method == "mtp":
        layers = mtp_layer_count(deployment.target)
        return [k for k in ks if k <= layers] or [layers]
    return ks


def batch_steps(
    deployment: Deployment,
    workload: SpeedWorkload,
    engine: EngineStep,
    limits: tuple[Limits | None, Limits | None] | None = None,
) -> BatchSteps:
    """The plain and speculative steps of ``workload``'s batch on ``deployment`` (``engine``: its step model, with
    the draft), each arm capped as its engine caps the requests it runs at once (``limits``: :func:`arm_limits`,
    when the caller holds them)."""
    limits = limits or arm_limits(deployment)
    rooms = _prefill_rooms(limits, engine.profile.chunked_prefill)
    return BatchSteps(engine, workload.batch_size, workload.request_lengths(), _caps(limits), rooms)


def speedup_by_k(deployment: Deployment, workload: SpeedWorkload, steps: BatchSteps) -> dict[int, float]:
    """The speedup at each draft length (tree depth) the optimal K is searched over (:func:`search_ks`), at the
    workload's acceptance: :func:`estimate_speed`'s ``speedup_by_k``, from ``steps`` (:func:`batch_steps`)."""
    k = workload.resolved_k(deployment)
    alpha = workload.resolved_alpha(k)
    return steps.speedup_by_depth(workload, deployment.speculative_method, alpha, search_ks(deployment, k))


def estimate_speed(
    deployment: Deployment, workload: SpeedWorkload, profile: SpeedProfile | None = None
) -> SpeedEstimate:
    """TTFT, TPOT, tok/s and throughput with and without the draft, optimal K, break-even α, verdict.

    ``profile`` replaces the engine's speed profile (what-if studies, the calibration fit). The optimal K and
    ``speedup_by_k`` follow the workload's verification (tree depths for a tree, within its token budget); the
    break-even α is searched over chains.
    """
    rules = speculation_rules()
    limits = arm_limits(deployment)
    steps = batch_steps(deployment, workload, EngineStep(deployment, profile, need_draft=True), limits)
    engine = steps.engine
    method = deployment.speculative_method
    k = workload.resolved_k(deployment)
    alpha = workload.resolved_alpha(k)
    shape = workload.draft_shape(method, k)
    batch = workload.batch_size
    caps = _caps(limits)
    context = steps.context
    allowed = search_ks(deployment, k)
    by_k = speedup_by_k(deployment, workload, steps)
    spec_step = steps.step(shape)
    served = steps.served(shape, alpha)
    tau = served.tokens_per_step
    speedup = steps.speedup_served(served)
    by_verification = {"chain": steps.speedup_of(workload.draft_shape(method, k, "chain"), alpha)}
    if method in TREE_METHODS:
        by_verification["tree"] = steps.speedup_of(workload.draft_shape(method, k, "tree"), alpha)
    best_k = spec.optimal_of(by_k)
    best = by_k[best_k]
    verdict_k, verdict_speedup = (k, speedup) if workload.k is not None else (best_k, best)
    verdict, reason = rules.verdict.decide(speedup=verdict_speedup, k=verdict_k, at=f"batch {batch}")
    baseline_tpot = steps.baseline_tpot_s
    spec_tpot = steps.spec_tpot_s(served, shape)
    baseline_ttft, spec_ttft = steps.baseline_ttft_s, steps.spec_ttft_s(served, shape)
    decode_steps = workload.output_tokens - 1
    target_decode = ForwardTime.of(steps.plain.passes[0][1])
    draft_decode = (
        None
        if engine.draft is None
        else ForwardTime.of(
            engine.draft.forward(decode_seqs=batch, decode_query_tokens=1, decode_context_tokens=batch * context)
        )
    )
    times = StepTimes(
        target_decode=target_decode,
        target_verify=_pass(spec_step, "target verify"),
        draft_decode=draft_decode,
        draft_first_pass=_pass(spec_step, "draft first pass"),
        spec_step_s=spec_step.total_s,
        spec_overhead_s=engine.profile.spec_step_overhead_s + engine.profile.spec_seq_overhead_s * batch,
        cost_ratio=0.0 if draft_decode is None else draft_decode.total_s / steps.plain.total_s,
    )
    warnings = rules.advisory.warnings(alpha=alpha, k=k, convention=workload.convention)
    warnings += _warnings(deployment, workload, caps[1])
    return SpeedEstimate(
        target=deployment.target.id,
        draft=deployment.speculator_name,
        engine=deployment.engine,
        profile=engine.profile.id,
        batch_size=batch,
        prompt_tokens=workload.prompt_tokens,
        output_tokens=workload.output_tokens,
        dataset=workload.dataset,
        context_tokens=context,
        alpha=alpha,
        acceptance_convention=workload.convention,
        method=method,
        verification=shape.verification,
        tree_widths=shape.widths,
        verify_tokens=shape.verify_tokens,
        speedup_by_verification=by_verification,
        k=k,
        k_given=workload.k is not None,
        expected_tokens_per_step=tau,
        draft_acceptance_rate=spec.draft_acceptance_rate(alpha, k),
        baseline_tpot_s=baseline_tpot,
        spec_tpot_s=spec_tpot,
        speedup=speedup,
        decode_speedup=tau * steps.plain.total_s / spec_step.total_s,
        baseline_ttft_s=baseline_ttft,
        spec_ttft_s=spec_ttft,
        baseline_e2e_latency_s=baseline_ttft + decode_steps * baseline_tpot,
        spec_e2e_latency_s=spec_ttft + decode_steps * spec_tpot,
        baseline_tok_s_per_sequence=1 / baseline_tpot,
        tok_s_per_sequence=1 / spec_tpot,
        baseline_throughput_tok_s=steps.served_plain.throughput_tok_s,
        throughput_tok_s=served.throughput_tok_s,
        replicas_per_node=deployment.replicas_per_node,
        optimal_k=best_k,
        speedup_at_optimal_k=best,
        speedup_by_k=by_k,
        break_even_alpha=steps.break_even_alpha(allowed),
        verdict=verdict,
        verdict_k=verdict_k,
        verdict_reason=reason,
        thresholds=rules.verdict.as_dict() | rules.advisory.as_dict(),
        thresholds_source=f"{rules.verdict.source} Advisory: {rules.advisory.source}",
        steps=times,
        assumptions=_assumptions(engine),
        warnings=warnings,
    )


def _assumptions(engine: EngineStep) -> list[tuple[str, float | int | bool, str]]:
    """The profile's parameters as the target's step model uses them: ``flops_frac`` and ``attention_flops_frac``
    are the fractions measured for its GPU and precisions where there are some (:mod:`~.kernel_efficiency`)."""
    target = engine.target
    measured = {
        "flops_frac": (target.gemm_frac, target.gemm_frac_source),
        "attention_flops_frac": (target.attn_frac, target.attn_frac_source),
    }
    return [(name, *measured.get(name, (value, source))) for name, value, source in engine.profile.parameters()]


def _warnings(deployment: Deployment, workload: SpeedWorkload, cap: int | None) -> list[str]:
    """Notes on the load: a batch beyond the KV cache's concurrency, or beyond ``cap``, the requests the engine runs
    at once with the speculator (:func:`running_caps`)."""
    notes = []
    length = workload.prompt_tokens + workload.output_tokens
    batch = workload.batch_size
    try:
        [(_, concurrency)] = concurrency_by_context(deployment, [length])
    except PlannerError as exc:
        notes.append(f"memory plan unavailable ({exc}); batch size not checked against KV capacity")
    else:
        if concurrency <= 0:
            notes.append("the deployment does not fit in GPU memory (see `python -m planner size`)")
        elif batch > concurrency:
            notes.append(
                f"batch {batch} exceeds the memory plan's max concurrency {concurrency:g} at "
                f"{length:,} tokens per sequence: the engine would queue or preempt requests"
            )
        if cap is not None and 0 < cap < batch:
            notes.append(
                f"batch {batch} exceeds the {cap:,} requests the engine runs at once (vLLM's max_num_seqs, SGLang's "
                "max_running_requests, TensorRT-LLM's max_batch_size, as planned here): it queues the rest, and "
                f"the estimate serves the {cap:,} it runs"
            )
    if deployment.pp > 1:
        notes.append("pipeline parallelism: stages run one after the other (no micro-batch overlap modelled)")
    return notes


class BaselineSpeed(BaseModel):
    """Plain decoding (no draft) of a deployment under a workload."""

    profile: str
    batch_size: int
    context_tokens: int
    tpot_s: float
    ttft_s: float
    e2e_latency_s: float
    tok_s_per_sequence: float
    throughput_tok_s: float
    decode: ForwardTime


def baseline_speed(
    deployment: Deployment, workload: SpeedWorkload, profile: SpeedProfile | None = None
) -> BaselineSpeed:
    """TPOT, TTFT and throughput of plain decoding steps alone (the draft, if any, is ignored): the decode step at
    the batch size, what a single-stream or fixed-batch decoding measurement reports, without the prompts a served
    load prefills between them (those are :func:`estimate_speed`'s steady state).

    ``workload`` needs no acceptance here; pass any (e.g. ``alpha=0``).
    """
    engine = EngineStep(deployment.without_draft(), profile)
    context = mean_context_tokens(workload.prompt_tokens, workload.output_tokens)
    decode = engine.plain(decode_seqs=workload.batch_size, decode_context_tokens=workload.batch_size * context)
    ttft = engine.prefill(workload.prompt_tokens)
    return BaselineSpeed(
        profile=engine.profile.id,
        batch_size=workload.batch_size,
        context_tokens=context,
        tpot_s=decode.total_s,
        ttft_s=ttft,
        e2e_latency_s=ttft + (workload.output_tokens - 1) * decode.total_s,
        tok_s_per_sequence=1 / decode.total_s,
        throughput_tok_s=workload.batch_size / decode.total_s,
        decode=ForwardTime.of(decode.passes[0][1]),
    )
