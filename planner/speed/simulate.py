"""Discrete-event simulation of one replica serving a workload, with and without its draft.

:func:`simulate_one` checks a run's inputs (the memory plan's limits, the request lengths, the work budget) and
runs the engine's scheduler step by step (:mod:`planner.speed.replica_run`, where the scheduling rules are
listed); :func:`simulate` runs a workload without the draft and with it and states the speedup. A 2,000-request
run takes well under a second.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"))
>>> low = simulate(dep, ServingWorkload.build(request_rate=1.0, num_prompts=200))
>>> high = simulate(dep, ServingWorkload.build(request_rate=40.0, num_prompts=200))
>>> high.plain.ttft_s.p99 > low.plain.ttft_s.p99, high.plain.mean_batch_size > low.plain.mean_batch_size
(True, True)
"""

from __future__ import annotations

from pydantic import BaseModel

from planner import acceptance_math as spec
from planner.deployment import Deployment
from planner.errors import InputError, PlannerError
from planner.input_types import MAX_SIMULATION_WORK, check_work
from planner.memory.plan import plan_memory
from planner.memory.types import MemoryPlan
from planner.speed.drafting import DraftShape, Verification
from planner.speed.engine_step import EngineStep
from planner.speed.objective_watch import ObjectiveWatch
from planner.speed.profiles import SpeedProfile
from planner.speed.replica_run import ReplicaRun
from planner.speed.serving_metrics import (
    Percentiles,
    ReplicaLimits,
    ServingMetrics,
    percentile,
)
from planner.speed.serving_workload import ServingWorkload
from planner.speed.workload import SpeedWorkload

__all__ = [
    "Percentiles",
    "ReplicaLimits",
    "ServingMetrics",
    "SimulationResult",
    "percentile",
    "simulate",
    "simulate_one",
]


def check_fits(dep: Deployment, plan: MemoryPlan) -> None:
    """A PlannerError naming where ``dep`` does not fit when its memory ``plan`` does not: no replica to simulate."""
    if not plan.fits:
        where = dep.node_id or dep.gpu.id
        raise PlannerError(f"the deployment does not fit {where}: {plan.problems[0]}", field="deployment")


def replica_limits(
    dep: Deployment, engine: EngineStep, speculative: bool, lookahead: int, plan: MemoryPlan | None = None
) -> ReplicaLimits:
    """The scheduler's limits of ``dep`` from its memory plan (``plan``, when the caller has it; raises when it does
    not fit)."""
    plan = plan or plan_memory(dep, with_suggestions=False)
    check_fits(dep, plan)
    # The engine's request cap (SGLang's cap of running requests with a draft included) comes from the plan.
    seqs = plan.limits.max_num_seqs
    reason = "max_num_seqs"
    return ReplicaLimits(
        max_num_seqs=seqs,
        max_num_batched_tokens=plan.limits.max_num_batched_tokens,
        kv_cache_tokens=plan.kv_cache_tokens,
        lookahead_tokens_per_seq=lookahead if speculative else 0,
        max_model_len=plan.max_model_len,
        mixed_prefill=engine.profile.mixed_prefill,
        chunked_prefill=engine.profile.chunked_prefill,
        reserves_output=engine.profile.admission_reserves_output,
        request_cap_reason=reason,
        cudagraph_sizes=engine.graphs.sizes,
    )


def check_lengths(workload: ServingWorkload, max_model_len: int) -> tuple[list[int], list[int]]:
    """The workload's lengths, or an InputError when a request exceeds the model length."""
    prompts, outputs = workload.lengths()
    longest = max(p + o for p, o in zip(prompts, outputs, strict=True))
    if longest > max_model_len:
        prompt, output = max(zip(prompts, outputs, strict=True), key=sum)
        field, value = ("prompt_tokens", prompt) if prompt >= max_model_len else ("output_tokens", output)
        raise InputError(
            field,
            value,
            f"a request of at most the max model length {max_model_len:,} tokens (this one: {prompt:,} prompt + "
            f"{output:,} output)",
        )
    return prompts, outputs


def simulation_work(prompts: list[int], outputs: list[int], token_budget: int, tokens_per_step: float = 1.0) -> float:
    """Predicted work of a run in request-steps (the sum over engine steps of the batch): every request decodes
    ``output / tokens_per_step`` steps and prefills in ``prompt / token_budget`` chunks (the plain arm: one token a
    step, the most work). Measured against :data:`planner.input_types.MAX_SIMULATION_WORK` before a run starts.

    >>> simulation_work([1024] * 1000, [256] * 1000, 8192)
    257000.0
    """
    chunks = sum(-(-p // token_budget) for p in prompts)
    return float(sum(outputs) / tokens_per_step + chunks)


class SimulationResult(BaseModel):
    """A workload on one replica with the draft (``speculative``) and without it (``plain``)."""

    deployment: str
    gpus: int
    workload: str
    mode: str
    alpha: float | None
    k: int | None
    verification: str = "chain"
    plain: ServingMetrics
    speculative: ServingMetrics | None

    @property
    def chosen(self) -> ServingMetrics:
        return self.speculative or self.plain

    @property
    def speedup(self) -> float:
        """Speculation's gain on the same requests: at a request rate the throughput is the rate in both
        arms, so the gain is plain over speculative mean end-to-end latency (the vLLM blog's measure);
        at a fixed concurrency or offline it is the ratio of steady-state output tokens per second
        (SpecDecode-Bench's measure, warm-up and drain left out so that it does not move with the request count)."""
        if self.speculative is None:
            return 1.0
        if self.mode == "rate":
            return self.plain.e2e_latency_s.mean / self.speculative.e2e_latency_s.mean
        if self.plain.steady and self.speculative.steady:
            return self.speculative.steady_output_tokens_per_s / self.plain.steady_output_tokens_per_s
        return self.speculative.output_tokens_per_s / self.plain.output_tokens_per_s  # too few requests for a window

    @property
    def speedup_definition(self) -> str:
        if self.mode == "rate":
            return "mean end-to-end latency without the draft / with it (same arrivals)"
        return "steady-state output tokens per second with the draft / without it"


def offline_batch_speedup(
    dep: Deployment,
    requests: int,
    prompt_tokens: int,
    output_tokens: int,
    *,
    alpha: float,
    k: int | None = None,
    profile: SpeedProfile | None = None,
) -> tuple[float, SimulationResult]:
    """The speedup of one offline batch: ``requests`` requests of ``prompt_tokens`` + ``output_tokens`` all sent at
    once and timed to the last token, prefill included, with the draft at α ``alpha`` and without it (the ratio of
    the whole runs' output tokens per second). What a benchmark that times one ``generate`` call over a batch
    measures: SpecDecode-Bench (each prompt repeated batch-size times, ``scripts/bench_latency.py`` in
    https://github.com/SpecDecode-Bench/vllm) and the measuring harness's vLLM backend (each task's prompts at once).

    >>> from planner.catalog.lookup import get_model, get_node
    >>> dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=4,
    ...                          draft=get_model("Llama-3.2-1B"), num_speculative_tokens=3)
    >>> one, _ = offline_batch_speedup(dep, 1, 200, 200, alpha=0.8)
    >>> many, _ = offline_batch_speedup(dep, 128, 200, 200, alpha=0.8)
    >>> 1.5 < one and many < one
    True
    """
    workload = ServingWorkload.build(
        offline=True, num_prompts=requests, prompt_tokens=prompt_tokens, output_tokens=output_tokens
    )
    result = simulate(dep, workload, alpha=alpha, k=k, profile=profile)
    return result.chosen.output_tokens_per_s / result.plain.output_tokens_per_s, result


def draft_shape(
    dep: Deployment,
    k: int | None = None,
    verification: Verification = "chain",
    tree_topk: int | None = None,
    tree_verify_tokens: int | None = None,
) -> DraftShape:
    """How ``dep`` drafts at K (a tree's depth) ``k``: a chain, or a tree with the engine-default top-k and budget."""
    kk = k or dep.num_speculative_tokens
    fields = {"verification": verification, "tree_topk": tree_topk, "tree_verify_tokens": tree_verify_tokens}
    method = dep.speculative_method
    if method is None:
        raise InputError("draft", None, "a draft model, a head or a draft-free method: speculative decoding needs one")
    return SpeedWorkload.build(alpha=0.0, k=kk, **fields).draft_shape(method, kk)


def simulate_one(
    dep: Deployment,
    workload: ServingWorkload,
    *,
    alpha: float | None = None,
    k: int | None = None,
    profile: SpeedProfile | None = None,
    shape: DraftShape | None = None,
    engine: EngineStep | None = None,
    plan: MemoryPlan | None = None,
    watch: ObjectiveWatch | None = None,
) -> ServingMetrics:
    """One run of ``workload`` on one replica of ``dep``: speculative when ``alpha`` is given and it has a draft,
    drafting as ``shape`` says (default: a chain of ``k``, else the deployment's K). A caller that already holds
    the replica's :class:`EngineStep` and memory plan (the design-space search, which reuses them across points)
    passes them as ``engine`` and ``plan``: the run is the same. With ``watch``, the run stops with
    :class:`planner.speed.objective_watch.CertainMiss` as soon as it is certain to miss one of its objectives."""
    speculative = alpha is not None and dep.is_speculative
    engine = engine or EngineStep(dep if speculative else dep.without_draft(), profile)
    shape = (shape or draft_shape(dep, k)) if speculative else None
    lookahead = shape.verify_tokens - 1 if shape is not None else 0
    limits = replica_limits(dep if speculative else dep.without_draft(), engine, speculative, lookahead, plan)
    prompts, outputs = check_lengths(workload, limits.max_model_len)
    work = simulation_work(prompts, outputs, limits.max_num_batched_tokens)
    check_work("workload", work, MAX_SIMULATION_WORK, "fewer prompts or shorter outputs")
    return ReplicaRun(engine, limits, workload, prompts, outputs, shape, alpha if speculative else None).run(watch)


def simulate(
    dep: Deployment,
    workload: ServingWorkload,
    *,
    alpha: float | None = None,
    k: int | None = None,
    profile: SpeedProfile | None = None,
    verification: Verification = "chain",
    tree_topk: int | None = None,
    tree_verify_tokens: int | None = None,
) -> SimulationResult:
    """``workload`` on one replica of ``dep``, with its draft at α ``alpha`` and K ``k`` (a chain, or a tree of that
    depth with ``tree_topk`` candidates per level within ``tree_verify_tokens``), and without."""
    if dep.is_speculative and alpha is None:
        raise InputError("alpha", None, f"an acceptance (α) for {dep.speculator_name}")
    if k is not None:
        spec.check_k(k)
    plain = simulate_one(dep, workload, profile=profile)
    speculative = None
    kk = None
    if dep.is_speculative:
        shape = draft_shape(dep, k, verification, tree_topk, tree_verify_tokens)
        kk = shape.k
        speculative = simulate_one(dep, workload, alpha=alpha, profile=profile, shape=shape)
    return SimulationResult(
        deployment=f"{dep.target.id}" + (f" + {dep.speculator_name}" if dep.is_speculative else ""),
        gpus=dep.gpus_per_replica,
        workload=workload.describe(),
        mode=workload.mode,
        alpha=alpha if dep.is_speculative else None,
        k=kk,
        verification=verification if dep.is_speculative else "chain",
        plain=plain,
        speculative=speculative,
    )
