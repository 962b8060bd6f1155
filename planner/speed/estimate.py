"""The speed model: latency and throughput of a deployment with and without its draft, and a verdict.

A plain decode step is one target forward over one token per sequence; a speculative step is the
draft's ``K`` autoregressive forwards at its own TP (``Deployment.resolved_draft_tp``; vLLM's
draft-model proposer feeds more tokens to the first one) plus one target forward over ``K+1``
tokens per sequence, plus the engine's per-draft-step and per-step speculation overheads (Leviathan et al.
2023, https://arxiv.org/abs/2211.17192; docs/speed-model.md)::

    T_AR = T_t(B, 1)     T_SD(K) = T_d(B, n₁) + (K−1)·T_d(B, 1) + K·t_draft + T_t(B, K+1) + t_spec
    TPOT = T_AR               TPOT_SD = T_SD(K) / τ(α, K)          speedup = τ·T_AR / T_SD

Forward times come from :func:`planner.speed.roofline.forward_time` at the mean context of a request
(prompt + half the output). TTFT is the prefill of one prompt (target, plus the draft's own
prefill when speculating). The verdict's thresholds are in ``data/speculation_rules.json``.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8,
...                          draft=get_model("Llama-3.2-1B"))
>>> est = estimate_speed(dep, SpeedWorkload.build(alpha=0.8, k=5))
>>> est.expected_tokens_per_step.__round__(2), est.speedup > 1, est.verdict in ("recommend", "enable")
(3.69, True, True)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from planner import acceptance_math as spec
from planner.deployment import Deployment
from planner.errors import InputError, PlannerError, first_pydantic_error
from planner.memory import concurrency_by_context
from planner.speed.policy import Verdict, speculation_rules
from planner.speed.profiles import SpeedProfile, speed_profile
from planner.speed.roofline import ForwardTime, ModelCost, forward_time, model_cost


class SpeedWorkload(BaseModel):
    """Load and acceptance: batch size, request lengths, exactly one of α / τ / ρ, optional K."""

    model_config = ConfigDict(extra="forbid")

    batch_size: int | None = None
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    alpha: float | None = None
    mean_accepted_len: float | None = None
    draft_acceptance_rate: float | None = None
    #: Draft length; None means the deployment's ``num_speculative_tokens``.
    k: int | None = None

    @classmethod
    def build(cls, **fields) -> SpeedWorkload:
        """Validate ``fields``; a problem is one ``PlannerError`` naming its field."""
        try:
            return cls(**fields)
        except ValidationError as exc:
            raise first_pydantic_error(exc) from None

    @model_validator(mode="after")
    def _check(self) -> SpeedWorkload:
        defaults = speculation_rules().default_workload
        for name in ("batch_size", "prompt_tokens", "output_tokens"):
            value = getattr(self, name)
            if value is None:
                setattr(self, name, getattr(defaults, name))
            elif isinstance(value, bool) or value < 1:
                raise InputError(name, value, "an integer >= 1")
        if self.k is not None:
            spec.check_k(self.k)
        given = [n for n in ("alpha", "mean_accepted_len", "draft_acceptance_rate") if getattr(self, n) is not None]
        if len(given) != 1:
            raise InputError(
                "acceptance",
                ", ".join(given) or None,
                "exactly one of alpha, mean_accepted_len (τ) or draft_acceptance_rate (ρ)",
            )
        if self.alpha is not None:
            spec.check_alpha(self.alpha)
        return self

    def resolved_k(self, deployment: Deployment) -> int:
        return self.k if self.k is not None else deployment.num_speculative_tokens

    def resolved_alpha(self, k: int) -> float:
        return spec.resolve_alpha(
            k,
            alpha=self.alpha,
            mean_accepted_len=self.mean_accepted_len,
            draft_acceptance_rate=self.draft_acceptance_rate,
        )


class StepTimes(BaseModel):
    """The forward passes behind one estimate (seconds), for the assumptions panel."""

    target_decode: ForwardTime
    target_verify: ForwardTime
    draft_decode: ForwardTime
    draft_first_pass: ForwardTime
    spec_step_s: float
    spec_overhead_s: float
    #: Leviathan's c: one draft decode step over one target decode step.
    cost_ratio: float


class SpeedEstimate(BaseModel):
    """Everything the CLI, the Performance page and the reports show about speed."""

    target: str
    draft: str
    engine: str
    profile: str
    batch_size: int
    prompt_tokens: int
    output_tokens: int
    context_tokens: int
    alpha: float
    k: int
    expected_tokens_per_step: float
    draft_acceptance_rate: float
    baseline_tpot_s: float
    spec_tpot_s: float
    speedup: float
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
    verdict_reason: str
    thresholds: dict[str, float]
    thresholds_source: str
    steps: StepTimes
    #: Every speed-profile parameter used: (name, value, source or fit derivation).
    assumptions: list[tuple[str, float | int | bool, str]]
    warnings: list[str] = []


class _Costs:
    """Static per-GPU costs of the target and the draft, computed once per deployment."""

    def __init__(self, deployment: Deployment, profile: SpeedProfile | None = None, need_draft: bool = True) -> None:
        if need_draft and (deployment.draft is None or deployment.draft_format is None):
            raise InputError("draft", None, "a draft model: speculative decoding needs one")
        self.deployment = deployment
        self.gpu = deployment.gpu
        self.profile: SpeedProfile = profile or speed_profile(deployment.engine, deployment.gpu.vendor)
        self.graphs = not deployment.enforce_eager
        self.target: ModelCost = model_cost(
            deployment.target, deployment.target_format, deployment.kv, self.gpu, tp=deployment.tp, pp=deployment.pp
        )
        self.draft: ModelCost | None = None
        if deployment.draft is not None and deployment.draft_format is not None:
            self.draft = model_cost(
                deployment.draft, deployment.draft_format, deployment.kv, self.gpu, tp=deployment.resolved_draft_tp or 1
            )

    @property
    def draft_cost(self) -> ModelCost:
        if self.draft is None:
            raise InputError("draft", None, "a draft model: speculative decoding needs one")
        return self.draft

    def forward(self, which: ModelCost, batch: int, query: int, context: int, logits: int | None = None):
        return forward_time(
            which,
            self.gpu,
            self.profile,
            batch_size=batch,
            query_tokens=query,
            context_tokens=context,
            logits_tokens=logits,
            cuda_graphs=self.graphs,
        )


class _BatchModel:
    """Step times at one batch size and context, for every K of the search range."""

    def __init__(self, costs: _Costs, batch: int, context: int, ks: Iterable[int]) -> None:
        self.costs = costs
        profile = costs.profile
        self.target_decode = costs.forward(costs.target, batch, 1, context)
        self.draft_decode = costs.forward(costs.draft_cost, batch, 1, context)
        self.draft_first = costs.forward(costs.draft_cost, batch, profile.draft_first_pass_tokens, context, logits=1)
        self.verify: dict[int, ForwardTime] = {}
        self.spec_step_s: dict[int, float] = {}
        for k in sorted(set(ks)):
            verify = costs.forward(costs.target, batch, k + 1, context)
            self.verify[k] = verify
            draft_s = self.draft_first.total_s + (k - 1) * self.draft_decode.total_s
            draft_s += k * profile.draft_step_overhead_s
            self.spec_step_s[k] = draft_s + verify.total_s + profile.spec_step_overhead_s

    def cost_ratios(self) -> dict[int, float]:
        return {k: step / self.target_decode.total_s for k, step in self.spec_step_s.items()}

    def speedup(self, alpha: float, k: int) -> float:
        return spec.speedup_from_step_cost(alpha, k, self.cost_ratios()[k])


def _context(workload: SpeedWorkload) -> int:
    """Mean cached context over a request's decode: the prompt plus half the output."""
    return workload.prompt_tokens + workload.output_tokens // 2


def estimate_speed(
    deployment: Deployment, workload: SpeedWorkload, profile: SpeedProfile | None = None
) -> SpeedEstimate:
    """TTFT, TPOT, tok/s and throughput with and without the draft, optimal K, break-even α, verdict.

    ``profile`` replaces the engine's speed profile (what-if studies, the calibration fit).
    """
    rules = speculation_rules()
    costs = _Costs(deployment, profile)
    k = workload.resolved_k(deployment)
    alpha = workload.resolved_alpha(k)
    batch, context = workload.batch_size, _context(workload)
    model = _BatchModel(costs, batch, context, [*rules.k_search.ks, k])
    ratios = model.cost_ratios()
    search = {kk: ratios[kk] for kk in rules.k_search.ks}
    tau = spec.expected_tokens_per_step(alpha, k)
    speedup = spec.speedup_from_step_cost(alpha, k, ratios[k])
    best_k, best = spec.optimal_k(alpha, search)
    verdict, reason = rules.verdict.decide(alpha=alpha, speedup_at_optimal_k=best)
    baseline_tpot = model.target_decode.total_s
    spec_tpot = model.spec_step_s[k] / tau
    prefill_target = costs.forward(costs.target, 1, workload.prompt_tokens, 0, logits=1).total_s
    prefill_draft = costs.forward(costs.draft_cost, 1, workload.prompt_tokens, 0, logits=1).total_s
    decode_steps = workload.output_tokens - 1
    steps = StepTimes(
        target_decode=model.target_decode,
        target_verify=model.verify[k],
        draft_decode=model.draft_decode,
        draft_first_pass=model.draft_first,
        spec_step_s=model.spec_step_s[k],
        spec_overhead_s=costs.profile.spec_step_overhead_s,
        cost_ratio=model.draft_decode.total_s / baseline_tpot,
    )
    return SpeedEstimate(
        target=deployment.target.id,
        draft=deployment.draft.id if deployment.draft else "",
        engine=deployment.engine,
        profile=costs.profile.id,
        batch_size=batch,
        prompt_tokens=workload.prompt_tokens,
        output_tokens=workload.output_tokens,
        context_tokens=context,
        alpha=alpha,
        k=k,
        expected_tokens_per_step=tau,
        draft_acceptance_rate=spec.draft_acceptance_rate(alpha, k),
        baseline_tpot_s=baseline_tpot,
        spec_tpot_s=spec_tpot,
        speedup=speedup,
        baseline_ttft_s=prefill_target,
        spec_ttft_s=prefill_target + prefill_draft,
        baseline_e2e_latency_s=prefill_target + decode_steps * baseline_tpot,
        spec_e2e_latency_s=prefill_target + prefill_draft + decode_steps * spec_tpot,
        baseline_tok_s_per_sequence=1 / baseline_tpot,
        tok_s_per_sequence=1 / spec_tpot,
        baseline_throughput_tok_s=batch / baseline_tpot,
        throughput_tok_s=batch / spec_tpot,
        replicas_per_node=deployment.replicas_per_node,
        optimal_k=best_k,
        speedup_at_optimal_k=best,
        speedup_by_k={kk: spec.speedup_from_step_cost(alpha, kk, r) for kk, r in search.items()},
        break_even_alpha=spec.break_even_alpha(search),
        verdict=verdict,
        verdict_reason=reason,
        thresholds=rules.verdict.as_dict(),
        thresholds_source=rules.verdict.source,
        steps=steps,
        assumptions=costs.profile.parameters(),
        warnings=_warnings(deployment, workload, costs),
    )


def _warnings(deployment: Deployment, workload: SpeedWorkload, costs: _Costs) -> list[str]:
    notes = []
    length = workload.prompt_tokens + workload.output_tokens
    try:
        [(_, concurrency)] = concurrency_by_context(deployment, [length])
    except PlannerError as exc:
        notes.append(f"memory plan unavailable ({exc}); batch size not checked against KV capacity")
    else:
        if concurrency <= 0:
            notes.append("the deployment does not fit in GPU memory (see `python -m planner size`)")
        elif workload.batch_size > concurrency:
            notes.append(
                f"batch {workload.batch_size} exceeds the memory plan's max concurrency {concurrency:g} at "
                f"{length:,} tokens per sequence: the engine would queue or preempt requests"
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
    """TPOT, TTFT and throughput without speculation (the draft, if any, is ignored).

    ``workload`` needs no acceptance here; pass any (e.g. ``alpha=0``).
    """
    costs = _Costs(deployment, profile, need_draft=False)
    context = _context(workload)
    decode = costs.forward(costs.target, workload.batch_size, 1, context)
    ttft = costs.forward(costs.target, 1, workload.prompt_tokens, 0, logits=1).total_s
    return BaselineSpeed(
        profile=costs.profile.id,
        batch_size=workload.batch_size,
        context_tokens=context,
        tpot_s=decode.total_s,
        ttft_s=ttft,
        e2e_latency_s=ttft + (workload.output_tokens - 1) * decode.total_s,
        tok_s_per_sequence=1 / decode.total_s,
        throughput_tok_s=workload.batch_size / decode.total_s,
        decode=decode,
    )


# ----- sweeps for charts ---------------------------------------------------------------------


class SpeedGrid(BaseModel):
    """Speedup over α × K at one batch size (rows: α, columns: K)."""

    batch_size: int
    alphas: list[float]
    ks: list[int]
    speedup: list[list[float]]


class BatchPoint(BaseModel):
    batch_size: int
    speedup: float
    optimal_k: int
    speedup_at_optimal_k: float
    throughput_tok_s: float
    baseline_throughput_tok_s: float
    break_even_alpha: float | None
    baseline_tpot_s: float
    spec_tpot_s: float


class BatchSweep(BaseModel):
    """Speed against batch size at the workload's α and K."""

    alpha: float
    k: int
    points: list[BatchPoint]
    #: The first batch size at which speculation stops paying (speedup ≤ 1 at the chosen K).
    crossover_batch: int | None = Field(default=None)


def speedup_grid(
    deployment: Deployment,
    workload: SpeedWorkload,
    alphas: Sequence[float],
    ks: Sequence[int],
    profile: SpeedProfile | None = None,
) -> SpeedGrid:
    """Speedup for every α in ``alphas`` and K in ``ks`` at the workload's batch and lengths."""
    for a in alphas:
        spec.check_alpha(a)
    for kk in ks:
        spec.check_k(kk)
    costs = _Costs(deployment, profile)
    model = _BatchModel(costs, workload.batch_size, _context(workload), ks)
    return SpeedGrid(
        batch_size=workload.batch_size,
        alphas=list(alphas),
        ks=list(ks),
        speedup=[[model.speedup(a, kk) for kk in ks] for a in alphas],
    )


def batch_sweep(
    deployment: Deployment,
    workload: SpeedWorkload,
    batch_sizes: Sequence[int],
    profile: SpeedProfile | None = None,
) -> BatchSweep:
    """Speedup, throughput and break-even α at each batch size (the workload's α and K)."""
    rules = speculation_rules()
    costs = _Costs(deployment, profile)
    k = workload.resolved_k(deployment)
    alpha = workload.resolved_alpha(k)
    tau = spec.expected_tokens_per_step(alpha, k)
    points = []
    for batch in sorted(set(batch_sizes)):
        if batch < 1:
            raise InputError("batch_size", batch, "an integer >= 1")
        model = _BatchModel(costs, batch, _context(workload), [*rules.k_search.ks, k])
        search = {kk: r for kk, r in model.cost_ratios().items() if kk in rules.k_search.ks}
        best_k, best = spec.optimal_k(alpha, search)
        spec_tpot = model.spec_step_s[k] / tau
        points.append(
            BatchPoint(
                batch_size=batch,
                speedup=model.speedup(alpha, k),
                optimal_k=best_k,
                speedup_at_optimal_k=best,
                throughput_tok_s=batch / spec_tpot,
                baseline_throughput_tok_s=batch / model.target_decode.total_s,
                break_even_alpha=spec.break_even_alpha(search),
                baseline_tpot_s=model.target_decode.total_s,
                spec_tpot_s=spec_tpot,
            )
        )
    crossover = next((p.batch_size for p in points if p.speedup <= 1.0), None)
    return BatchSweep(alpha=alpha, k=k, points=points, crossover_batch=crossover)


#: Chart grids of the Performance page: α in steps of 0.05, batch sizes in powers of two.
REPORT_ALPHAS = tuple(i / 20 for i in range(21))
REPORT_BATCHES = tuple(2**i for i in range(11))


class SpeedReport(BaseModel):
    """Everything the Performance page shows, from one core call."""

    estimate: SpeedEstimate
    grid: SpeedGrid
    sweep: BatchSweep


def speed_report(
    deployment: Deployment,
    workload: SpeedWorkload,
    alphas: Sequence[float] = REPORT_ALPHAS,
    batch_sizes: Sequence[int] = REPORT_BATCHES,
) -> SpeedReport:
    """The estimate, the α × K grid (K over the search range) and the batch sweep in one call.

    >>> from planner.catalog.lookup import get_model, get_node
    >>> dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8,
    ...                          draft=get_model("Llama-3.2-1B"))
    >>> report = speed_report(dep, SpeedWorkload.build(alpha=0.8))
    >>> len(report.grid.ks), report.sweep.crossover_batch is not None
    (16, True)
    """
    ks = list(speculation_rules().k_search.ks)
    return SpeedReport(
        estimate=estimate_speed(deployment, workload),
        grid=speedup_grid(deployment, workload, alphas, ks),
        sweep=batch_sweep(deployment, workload, batch_sizes),
    )
