"""Each point's memory plan, its static screen (the step model) and its simulation (the serving simulator).

The memory plan is :func:`planner.memory.plan_budget` of the point's deployment (what ``plan_memory`` gives
without fixes), its K- and batch-cap-free parts worked out once per layout and speculator
(:class:`planner.memory.budget.SharedBudget`). The screen times the
replica at its operating batch ``B = min(requests in flight, the plan's KV concurrency, what the token budget
feeds)`` (:func:`budget_fed_batch`) with
:class:`planner.speed.EngineStep` (one decode step ``T``; the marginal cost ``T_p`` of a prompt's prefill
chunk riding in that step) and τ(α, K) tokens per step (Leviathan et al. 2023)::

    cycle = (O − 1) / τ · T + B · T_p      requests/s = B / cycle      TPOT ≈ (cycle − T_p) / (O − 1)

(O output tokens per request: every one of the B slots turns over once per cycle), and TTFT at the objectives'
percentile from the rounds a closed loop moves in (:func:`closed_loop_ttft_s`). The simulation is
:func:`planner.speed.simulate` of the same deployment with the replica's requests in flight (closed loop),
so its figures are exactly what ``python -m planner simulate`` prints for that configuration.

>>> from planner.decisions.search.space import Objectives, SearchSpace, SearchWorkload
>>> space = SearchSpace.build(target="Llama-3.1-8B", nodes=("1x-h100-sxm-80gb",), methods=("none",),
...                           dtypes=("bf16",), batch_caps=(32,))
>>> ev = Evaluator(space, SearchWorkload(requests_per_s=5, prompt_tokens=512, output_tokens=128), Objectives())
>>> [point] = ev.points()
>>> ev.plan(point); ev.screen(point); point.fits, point.stage, point.output_tok_s_per_gpu > 0
(True, 'screened', True)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import ceil, floor

from planner import acceptance_math as spec
from planner.catalog.lookup import default_usd_per_gpu_hour, get_gpu
from planner.catalog.schemas import NodeType
from planner.catalog.speculators import mtp_layer_count
from planner.decisions.search.points import SearchPoint, fleet_figures
from planner.decisions.search.space import Objectives, SearchSpace, SearchWorkload, check_request_fits
from planner.decisions.search.speculators import AlphaGiven, Speculator, speculators
from planner.deployment import Deployment
from planner.engines.profiles import engine_profile, resolve_limits
from planner.errors import PlannerError
from planner.facts import register_cache
from planner.memory.budget import SharedBudget, plan_budget
from planner.memory.plan import plan_memory
from planner.memory.types import MemoryPlan
from planner.model.parallelism import valid_tp_degrees
from planner.speed.drafting import DraftShape
from planner.speed.engine_step import Chunks, EngineStep
from planner.speed.latency_floor import LatencyFloor, latency_floor_s
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import ServingMetrics, simulate_one

#: Requests one replica is simulated with: a few turnovers of its batch, at least 200 (a stable p99).
MIN_SIMULATED_REQUESTS = 200
TURNOVERS_SIMULATED = 4
MAX_SIMULATED_REQUESTS = 2000


def simulated_requests(concurrency: int) -> int:
    """Requests one simulation runs for ``concurrency`` in flight: ``4 ·`` concurrency within [200, 2,000]."""
    return max(MIN_SIMULATED_REQUESTS, min(MAX_SIMULATED_REQUESTS, TURNOVERS_SIMULATED * concurrency))


@lru_cache(maxsize=256)
def _chain_verify_tokens(method: str, k: int) -> int:
    """Query tokens per sequence a chain of ``k`` verifies (the search drafts chains, as :meth:`EngineStep.shape`)."""
    return DraftShape(method=method, k=k).verify_tokens


def budget_fed_batch(
    token_budget: int, prompt_tokens: float, output_tokens: float, tokens_per_step: float, tokens_per_decode: int
) -> float:
    """The most requests a replica keeps decoding when each must first be prefilled through the engine's token budget
    per step (``max_num_batched_tokens``), which its decoding requests share (``q`` tokens each: 1, or ``K + 1``
    with a draft; vLLM V1 schedules both under one budget). In steady state ``X`` requests start per step, each
    needing ``P`` prefill tokens and decoding for ``(O − 1) / τ`` steps, so ``n = X · (O − 1) / τ`` decode at once
    (Little's law) while ``X · P + n · q`` tokens fill the budget::

        n = budget · (O − 1) / (τ · P + q · (O − 1))

    Long prompts with short outputs leave a replica fewer requests decoding than its batch cap: with 2,048-token
    prompts, 128-token outputs and an 8,192-token budget, 153 at K 4 (τ 3, q 5), where the simulator runs 145.

    >>> round(budget_fed_batch(8192, 2048, 128, 3.0, 5))
    153
    >>> round(budget_fed_batch(8192, 1024, 256, 1.0, 1))  # plain decoding, the default workload: far above any cap
    1633
    """
    decode_steps = max(output_tokens - 1, 0) / tokens_per_step
    return token_budget * decode_steps / (prompt_tokens + tokens_per_decode * decode_steps)


def closed_loop_ttft_s(
    in_flight: int,
    batch: int,
    requests_per_s: float,
    decode_s: float,
    prefill_s: float,
    prompt_tokens: float,
    token_budget: int | None,
    percentile: float,
) -> float:
    """The screen's TTFT at ``percentile`` for a replica simulated in a closed loop of ``in_flight`` clients.

    Every client sends its first request at once, so the replica meets its prompts in rounds of the ``B``
    requests it runs at once: the last prompt of a round waits for the prefill of every one ahead of it,
    ``B · T_p``, and for a step ``T`` each time the round's prompts fill the engine's token budget
    (``ceil(B · P / budget)`` steps); with identical lengths a round finishes together and comes back together,
    so the rounds persist. A round's first prompt waits one step and its own chunk (``T + T_p``), the others
    evenly more, so the percentile ``p`` of the round lies ``p / 100`` of the way to its last. Requests the KV
    cache cannot hold (``in_flight − B``) queue in front of that, ``(in_flight − B) / requests_per_s`` (Little's
    law). Against the simulator's p99 at the default space's points it is 0.91x at the median and within
    0.80x-1.17x for nine in ten (``make bench-search`` prints the spread); the search learns that error per family
    of points, as for every screened figure.

    >>> last_s = 64 * 0.02 + 8 * 0.03  # 64 prompts of 1,024 tokens fill 8 steps of an 8,192-token budget
    >>> ttft_s = closed_loop_ttft_s(64, 64, 10.0, 0.03, 0.02, 1024, 8192, 99.0)
    >>> round(ttft_s, 4), round(0.05 + 0.99 * (last_s - 0.05), 4)
    (1.5053, 1.5053)
    >>> closed_loop_ttft_s(1, 1, 1.0, 0.03, 0.02, 1024, 8192, 99.0)  # one client: its own step and chunk
    0.05
    """
    first_s = decode_s + prefill_s
    budget_steps = ceil(batch * prompt_tokens / token_budget) if token_budget else batch
    last_s = batch * prefill_s + budget_steps * decode_s
    queue_s = max(0, in_flight - batch) / requests_per_s if requests_per_s > 0 else 0.0
    return queue_s + first_s + (max(first_s, last_s) - first_s) * percentile / 100


#: Spaces and workloads whose evaluations are kept (a page's last few searches), and of the small spaces the views of
#: the search ask (a node type's quote, the decision matrix's layout: tens of points each).
KEPT_EVALUATIONS = 4
KEPT_VIEW_EVALUATIONS = 64


class Evaluations:
    """What evaluating a space for a workload works out that the objectives do not change: each point's deployment,
    memory plan, step times and simulation. Kept per (space, workload) by :func:`evaluations`, so that the same
    search asked with other objectives (Explore after an objective change) plans, screens and simulates nothing
    again. Every entry is a function of its key alone: two searches filling one at once compute the same value."""

    __slots__ = (
        "deployments", "engines", "fits_alone", "plans", "point_engines", "runs", "shares", "speculators", "steps",
        "summaries",
    )  # fmt: skip

    def __init__(self) -> None:
        self.plans: dict[tuple, MemoryPlan] = {}
        #: What each point takes from its plan (:class:`PlanSummary`), by :meth:`Evaluator.plan_key`.
        self.summaries: dict[tuple, PlanSummary] = {}
        self.shares: dict[tuple, SharedBudget] = {}
        self.engines: dict[tuple, EngineStep] = {}
        self.point_engines: dict[tuple, EngineStep] = {}
        self.deployments: dict[int, Deployment] = {}
        self.steps: dict[tuple, tuple[float, float]] = {}
        #: One replica's run per (layout, speculator, K, batch cap), or the error that stopped it.
        self.runs: dict[tuple, ServingMetrics | PlannerError] = {}
        #: Whether the target alone fits a node's largest TP layout, per (node, engine, precisions, TPs).
        self.fits_alone: dict[tuple, bool] = {}
        #: The speculators tried, per engine.
        self.speculators: dict[str, list[Speculator]] = {}


@dataclass(frozen=True, slots=True)
class PlanSummary:
    """What a point takes from its memory plan: whether it fits and starts, its KV tokens and concurrency, and why
    not (small enough to send back from a worker process, :mod:`planner.decisions.search.workers`)."""

    fits: bool
    starts: bool
    kv_cache_tokens: int | None
    max_concurrency: float | None
    reason: str | None
    #: The engine's token budget per step (prompt chunks and decode tokens together); None where it did not plan.
    max_num_batched_tokens: int | None = None


@lru_cache(maxsize=KEPT_EVALUATIONS)
def evaluations(space_json: str, workload_json: str) -> Evaluations:
    """The evaluations kept for a space and workload (by their JSON), new the first time."""
    return Evaluations()


@lru_cache(maxsize=KEPT_VIEW_EVALUATIONS)
def view_evaluations(space_json: str, workload_json: str) -> Evaluations:
    """:func:`evaluations` of the small spaces a view of the search asks, kept apart so that a quote's node types or
    a matrix never push a page's large search out."""
    return Evaluations()


register_cache(evaluations)
register_cache(view_evaluations)


class Evaluator:
    """The points of ``space`` for ``workload`` and their plans, screens and simulations (memoised per space and
    workload across objectives: :class:`Evaluations`)."""

    def __init__(
        self, space: SearchSpace, workload: SearchWorkload, objectives: Objectives, *, view: bool = False
    ) -> None:
        """``view``: a small space a view of the search asks (its evaluations kept apart, :func:`view_evaluations`)."""
        self.space, self.workload, self.objectives = space, workload, objectives
        self.target = space.target_spec()
        check_request_fits(self.target, workload)
        self._configs: list[tuple[NodeType, Speculator]] = []
        kept_in = view_evaluations if view else evaluations
        self.kept = kept = kept_in(space.model_dump_json(), workload.model_dump_json())
        self._plans, self._shares, self._engines = kept.plans, kept.shares, kept.engines
        self._point_engines, self._deployments, self._steps = kept.point_engines, kept.deployments, kept.steps
        self._runs, self._summaries = kept.runs, kept.summaries
        self.simulations: dict[int, ServingMetrics] = {}

    # ----- the space ------------------------------------------------------------------------------

    def points(self) -> list[SearchPoint]:
        """Every point of the space (PP 2 layouts only where no TP layout of the node holds the weights)."""
        out: list[SearchPoint] = []
        mtp_layers = mtp_layer_count(self.target)
        arch = self.target.architecture
        space = self.space
        caps: tuple[int | None, ...] = space.batch_caps or (None,)
        for engine in space.engines:
            found = self.speculators_for(engine)
            for node in space.node_specs():
                allowed = valid_tp_degrees(arch, node.gpu_count)
                tps = [t for t in allowed if space.tps is None or t in space.tps]
                for dtype, kv in space.precisions():
                    if space.base is not None:  # around a deployment: its pipeline stages
                        layouts = [(tp, space.base.pp) for tp in tps if tp * space.base.pp <= node.gpu_count]
                    else:
                        layouts = [(tp, 1) for tp in tps]
                        if tps and not self._any_layout_fits(node, engine, dtype, kv, tps):
                            layouts += [(tp, 2) for tp in tps if tp * 2 <= node.gpu_count]
                    for tp, pp in layouts:
                        for speculator in found:
                            for k in space.k_values(speculator.method, mtp_layers):
                                for cap in caps:
                                    point = self._point(len(out), node, engine, dtype, kv, tp, pp, speculator, k, cap)
                                    out.append(point)
        return out

    def speculators_for(self, engine: str) -> list[Speculator]:
        """The speculators the space tries on ``engine`` (``none`` first where asked), each with its α; kept."""
        found = self.kept.speculators.get(engine)
        if found is None:
            space = self.space
            extra = tuple(m for m in space.imported if m.id != self.target.id)
            found = self.kept.speculators[engine] = speculators(
                self.target,
                engine,
                space.methods,
                drafts=space.drafts,
                extra=extra,
                alpha=AlphaGiven(space.alpha, space.entered_alpha, tuple(sorted(space.measured_alphas.items()))),
                engine_version=space.release(),
                target_tp=space.tps[0] if space.tps is not None and len(space.tps) == 1 else 1,
            )
        return found

    def _point(self, index, node, engine, dtype, kv, tp, pp, speculator: Speculator, k, cap) -> SearchPoint:
        self._configs.append((node, speculator))
        speculative = speculator.method != "none"
        point = SearchPoint(
            index=index,
            node=node.id,
            gpu=node.gpu,
            gpus_per_node=node.gpu_count,
            tp=tp,
            pp=pp,
            dtype=dtype,
            kv_dtype=kv,
            engine=engine,
            method=speculator.method,
            draft=speculator.draft_id,
            speculator=speculator.label,
            k=k,
            max_num_seqs=cap,
            alpha=speculator.alpha if speculative else None,
            alpha_source=speculator.alpha_source if speculative else None,
            gpus_per_replica=tp * pp,
        )
        if cap is None:  # the engine's own default: the one the point's deployment resolves
            point.max_num_seqs = self._default_cap(point)
        return point

    def _default_cap(self, point: SearchPoint) -> int | None:
        """The batch cap the engine gives the point's deployment when it sets none (None: it cannot be built)."""
        try:
            dep = self.deployment(point)
        except PlannerError:
            return None
        return resolve_limits(dep, engine_profile(dep.engine, dep.engine_version)).max_num_seqs

    def _any_layout_fits(self, node: NodeType, engine: str, dtype: str, kv: str, tps: list[int]) -> bool:
        """Whether the target alone fits the node at its largest TP and the smallest batch cap (PP 1); kept."""
        key = (node.id, engine, dtype, kv, tuple(tps))
        found = self.kept.fits_alone.get(key)
        if found is None:
            found = self.kept.fits_alone[key] = self._fits_alone(node, engine, dtype, kv, tps)
        return found

    def _fits_alone(self, node: NodeType, engine: str, dtype: str, kv: str, tps: list[int]) -> bool:
        try:
            caps = self.space.batch_caps
            dep = self._build(node, engine, dtype, kv, max(tps), 1, {}, None, min(caps) if caps else None)
        except PlannerError:
            return False
        return plan_memory(dep, with_suggestions=False).fits

    def _build(self, node, engine, dtype, kv, tp, pp, fields, k, cap) -> Deployment:
        extra = {} if k is None else {"num_speculative_tokens": k}
        base = self.space.base
        if base is not None:  # the scenario's other settings kept; its draft, method and their knobs set by the point
            changes = {
                "tp": tp, "pp": pp, "dtype": dtype, "kv_dtype": kv, "engine": engine, "max_num_seqs": cap,
                "engine_version": self.space.release(), "draft": None, "method": None, "draft_tp": None,
                "draft_dtype": None,
            }  # fmt: skip
            if base.node_id is not None:  # a deployment given by its GPUs alone keeps them
                changes |= {"gpu": get_gpu(node.gpu), "gpu_count": node.gpu_count, "node_id": node.id}
            return base.replace(**(changes | extra | fields))
        return Deployment.on_node(
            self.target,
            node,
            tp=tp,
            pp=pp,
            dtype=dtype,
            kv_dtype=kv,
            engine=engine,
            max_num_seqs=cap,
            max_model_len=self.workload.max_model_len,
            engine_version=self.space.release(),
            **extra,
            **fields,
        )

    def deployment(self, point: SearchPoint) -> Deployment:
        """The point's deployment (what ``simulate`` and the Sizing page take; built once)."""
        found = self._deployments.get(point.index)
        if found is None:
            found = self._deployments[point.index] = self._new_deployment(point)
        return found

    def _new_deployment(self, point: SearchPoint) -> Deployment:
        node, speculator = self._configs[point.index]
        cap = point.max_num_seqs if self.space.batch_caps is not None else None  # None: the engine's default
        return self._build(
            node,
            point.engine,
            point.dtype,
            point.kv_dtype,
            point.tp,
            point.pp,
            speculator.deployment_fields(),
            point.k,
            cap,
        )

    def speculator_of(self, point: SearchPoint) -> Speculator:
        """The speculator the point runs (``none`` without speculation), with its α."""
        return self._configs[point.index][1]

    def layout(self, point: SearchPoint) -> tuple:
        """The point's layout: node, engine, precisions, TP and PP."""
        return (point.node, point.engine, point.dtype, point.kv_dtype, point.tp, point.pp)

    def group(self, point: SearchPoint) -> tuple:
        """The point's layout and speculator: what its plans and step models share across K and batch caps."""
        return (*self.layout(point), point.speculator)

    # ----- memory ---------------------------------------------------------------------------------

    def plan(self, point: SearchPoint) -> None:
        """Fill the point's memory figures from its plan; a point that does not fit or start keeps the reason."""
        key = self.plan_key(point)
        summary = self._summaries.get(key)
        if summary is None:
            summary = self._summaries[key] = self._plan_summary(point, key)
        point.fits, point.starts, point.reason = summary.fits, summary.starts, summary.reason
        point.kv_cache_tokens, point.max_concurrency = summary.kv_cache_tokens, summary.max_concurrency

    def plan_key(self, point: SearchPoint) -> tuple:
        """The key of the point's plan, step models and run: its layout, speculator, K and batch cap."""
        return (*self.group(point), point.k, point.max_num_seqs)

    def memory_plan(self, point: SearchPoint, key: tuple) -> MemoryPlan:
        """The point's memory plan (:func:`planner.memory.plan_budget`, its K- and batch-cap-free parts shared by its
        group); kept. Raises what planning raises."""
        plan = self._plans.get(key)
        if plan is None:
            share = self._shares.setdefault(self.group(point), SharedBudget())
            plan = self._plans[key] = plan_budget(self.deployment(point), compare_without_draft=False, share=share)
        return plan

    def _plan_summary(self, point: SearchPoint, key: tuple) -> PlanSummary:
        try:
            plan = self.memory_plan(point, key)
        except PlannerError as exc:
            return PlanSummary(False, False, None, None, str(exc))
        reason = None
        fits = plan.fits
        if not plan.fits:
            reason = "does not fit: " + (plan.problems[0] if plan.problems else "no KV cache left")
        elif not plan.starts:
            reason = "would not start: " + plan.start_problems[0]
        elif plan.max_concurrency < 1:
            fits = False
            reason = f"does not fit: the KV cache holds no request of {self.workload.max_model_len:,} tokens"
        return PlanSummary(
            fits, plan.starts, plan.kv_cache_tokens, plan.max_concurrency, reason, plan.limits.max_num_batched_tokens
        )

    def mark_like(self, point: SearchPoint, probe: SearchPoint) -> None:
        """``point`` shares ``probe``'s failure (same layout and speculator with a smaller K and batch cap)."""
        point.fits, point.starts = probe.fits, probe.starts
        point.kv_cache_tokens, point.max_concurrency = probe.kv_cache_tokens, probe.max_concurrency
        point.reason = f"{probe.reason} (at K {probe.k} and {probe.max_num_seqs} seqs already; larger need more memory)"

    # ----- figures --------------------------------------------------------------------------------

    def concurrency(self, point: SearchPoint) -> tuple[int, int | None]:
        """Requests in flight per replica, and the replicas a concurrency workload is spread over."""
        c = self.workload.concurrency
        if c is None:
            return point.max_num_seqs, None
        replicas = ceil(c / point.max_num_seqs)
        return ceil(c / replicas), replicas

    def _engine(self, point: SearchPoint) -> EngineStep:
        key = self.group(point)
        if key not in self._engines:
            self._engines[key] = EngineStep(self.deployment(point))
        return self._engines[key]

    def engine_of(self, point: SearchPoint, dep: Deployment | None = None) -> EngineStep:
        """``EngineStep`` of the point's deployment: the group's step models (built once per layout and speculator;
        they depend on neither K nor the batch cap) with the CUDA-graph sizes of the point's own K and batch cap."""
        key = self.plan_key(point)
        found = self._point_engines.get(key)
        if found is None:
            found = self._engine(point).for_deployment(dep or self.deployment(point))
            self._point_engines[key] = found
        return found

    def _steps_of(self, point: SearchPoint, batch: int) -> tuple[float, float]:
        """Decode step seconds at ``batch``, and the marginal seconds of one prompt's prefill chunk in that step."""
        key = (*self.plan_key(point), batch)
        found = self._steps.get(key)
        if found is None:
            engine = self.engine_of(point)
            context = batch * (self.workload.mean_prompt_tokens + self.workload.mean_output_tokens / 2)
            chunk = Chunks()
            chunk.add(round(self.workload.mean_prompt_tokens), 0)
            shape = None if point.k is None else engine.shape(point.k)
            decode = engine.step_totals(shape, batch, context)[0]
            mixed = engine.step_totals(shape, batch, context, chunk)[0]
            found = self._steps[key] = (decode, max(0.0, mixed - decode))
        return found

    def latency_floor_s(self, point: SearchPoint, prompts: list[int], outputs: list[int]) -> LatencyFloor:
        """The TTFT and TPOT, at the objectives' percentile, that no run of these requests (``prompts`` and
        ``outputs``, tokens) on ``point``'s replica can beat, however few it is offered
        (:func:`planner.speed.latency_floor.latency_floor_s`). Needs a plan that fits and starts.

        >>> from planner.decisions.search.space import Objectives, SearchSpace, SearchWorkload
        >>> space = SearchSpace.build(target="Llama-3.1-8B", nodes=("1x-h100-sxm-80gb",), methods=("none",),
        ...                           dtypes=("bf16",), batch_caps=(8,))
        >>> ev = Evaluator(space, SearchWorkload(requests_per_s=1, prompt_tokens=512, output_tokens=64), Objectives())
        >>> [point] = ev.points()
        >>> ev.plan(point)
        >>> floor = ev.latency_floor_s(point, [512] * 10, [64] * 10)
        >>> 0.001 < floor.tpot_s < 0.01 and floor.ttft_s > 0.005
        True
        """
        engine = self.engine_of(point)
        shape = None if point.k is None else engine.shape(point.k)
        budget = self._summaries[self.plan_key(point)].max_num_batched_tokens
        return latency_floor_s(engine, shape, point.alpha, prompts, outputs, budget, self.objectives.percentile)

    def screen(self, point: SearchPoint) -> None:
        """Static figures from the step model (the screen); needs a plan that fits and starts."""
        if not (point.fits and point.starts):
            return
        in_flight, replicas = self.concurrency(point)
        prompt, out = self.workload.mean_prompt_tokens, self.workload.mean_output_tokens
        held = (point.kv_cache_tokens or 0) / (prompt + out / 2)
        tau = 1.0 if point.k is None else spec.expected_tokens_per_step(point.alpha or 0.0, point.k)
        budget = self._summaries[self.plan_key(point)].max_num_batched_tokens
        per_decode = 1 if point.k is None else _chain_verify_tokens(point.method, point.k)
        fed = budget_fed_batch(budget, prompt, out, tau, per_decode) if budget else in_flight
        batch = max(1, min(in_flight, floor(held), floor(fed)))
        decode_s, prefill_s = self._steps_of(point, batch)
        cycle = max(out - 1, 0) / tau * decode_s + batch * prefill_s
        requests_per_s = batch / cycle
        tpot = (cycle - prefill_s) / max(out - 1, 1)
        ttft = closed_loop_ttft_s(
            in_flight, batch, requests_per_s, decode_s, prefill_s, prompt, budget, self.objectives.percentile
        )
        self._set(point, "screened", in_flight, replicas, batch, requests_per_s, requests_per_s * out, ttft, tpot, tpot)

    def replica_run(self, point: SearchPoint) -> tuple[Deployment, ServingWorkload, float | None, int | None]:
        """What :func:`planner.speed.simulate` is called with for this point: deployment, workload, α, K."""
        in_flight, _ = self.concurrency(point)
        workload = self.workload.replica_workload(in_flight, simulated_requests(in_flight))
        return self.deployment(point), workload, point.alpha, point.k

    def simulate(self, point: SearchPoint) -> None:
        """Figures from the serving simulator of one replica (replaces the screen's)."""
        key = self.plan_key(point)
        run = self._runs.get(key)
        if run is None:
            dep, workload, alpha, k = self.replica_run(point)
            try:
                run = simulate_one(dep, workload, alpha=alpha, k=k, engine=self.engine_of(point, dep),
                                   plan=self.memory_plan(point, key))  # fmt: skip
            except PlannerError as exc:
                run = exc
            self._runs[key] = run
        if isinstance(run, PlannerError):
            point.stage, point.reason = "memory", f"the simulation stopped: {run}"
            point.fits = False
            return
        self.simulations[point.index] = run
        in_flight, replicas = self.concurrency(point)
        pct = self.objectives.percentile
        tpot_mean = run.tpot_s.mean
        self._set(
            point,
            "simulated",
            in_flight,
            replicas,
            run.mean_batch_size,
            run.requests_per_s,
            run.output_tokens_per_s,
            run.ttft_at(pct),
            run.tpot_at(pct),
            tpot_mean,
        )

    def _set(self, point, stage, in_flight, replicas, batch, req_s, tok_s, ttft_s, tpot_s, tpot_mean_s) -> None:
        node, _ = self._configs[point.index]
        point.stage = stage
        point.concurrency_per_replica = in_flight
        point.batch_size = batch
        point.replica_requests_per_s, point.replica_output_tok_s = req_s, tok_s
        point.output_tok_s_per_gpu = tok_s / point.gpus_per_replica
        point.output_tok_s_per_user = 1 / tpot_mean_s if tpot_mean_s > 0 else None
        point.ttft_s, point.tpot_s = ttft_s, tpot_s
        point.set_fleet(
            fleet_figures(
                requests_per_s=self.workload.requests_per_s,
                concurrency=self.workload.concurrency,
                mean_output_tokens=self.workload.mean_output_tokens,
                replica_requests_per_s=req_s,
                replica_output_tok_s=tok_s,
                replicas_for_concurrency=replicas,
                replicas_per_node=node.gpu_count // point.gpus_per_replica,
                gpu_count=node.gpu_count,
                usd_per_gpu_hour=default_usd_per_gpu_hour(node.gpu),
            )
        )
        point.misses = self.objectives.misses(ttft_s, tpot_s)
        point.meets_objectives = not point.misses
        point.reason = None if not point.misses else "misses " + "; ".join(point.misses)
