"""Traffic → replicas → nodes → cost, with and without speculation, from the serving simulator.

A replica receives ``rate / replicas`` Poisson requests (the load balancer splits traffic evenly).
The planner simulates one replica (``planner.speed.simulate``: continuous batching, chunked prefill,
the KV cache of the memory plan, the engine's request caps; prefill and decode share the GPUs) and
takes the fewest replicas at which the chosen percentile of TTFT and of TPOT meet their objectives
(MLPerf-style presets: Server 2 s / 200 ms, Interactive 450 ms / 40 ms, both at p99). The search
starts at ``rate / capacity`` replicas, the replica's saturated steady-state throughput
(``planner.speed.replica_capacity``; without a TTFT objective the quote sizes there). Speculation is quoted
at the K that pays most at the batch the plain replica runs, and chosen only where it needs fewer
GPUs. Then ``nodes = ceil(replicas / replicas_per_node)`` and the cost is nodes × GPUs × $/GPU-hour
(data/prices.json, dated and editable).

An option that misses an objective at every fleet size searched lists each miss and by how much
(``ObjectiveMiss``); the doubling stops early at the latency floor (a doubled fleet improves no missed
percentile by more than ``FLOOR_GAIN_FRAC``: more replicas cannot help). :func:`recommend_fleet` then
names the cheapest option that meets every objective, keeps the options that miss apart (nearest miss
first) and computes what speculation saves only between options that meet the objectives.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=4,
...                          draft=get_model("Llama-3.2-1B"))
>>> quote = fleet_quote(dep, Traffic(requests_per_s=5, prompt_tokens=1024, output_tokens=256, alpha=0.8))
>>> quote.without_speculation.meets_slo, quote.without_speculation.replicas >= 1
(True, True)
"""

from __future__ import annotations

from math import ceil, log

from pydantic import BaseModel, Field, ValidationError, computed_field

from planner.catalog.lookup import get_price
from planner.catalog.schemas import ModelSpec
from planner.deployment import Deployment
from planner.errors import InputError, PlannerError, first_pydantic_error
from planner.model.parallelism import valid_tp_degrees
from planner.speed.deployment_acceptance import deployment_acceptance
from planner.speed.estimate import SpeedWorkload
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import ServingMetrics
from planner.speed.speed_source import speed_source
from planner.speed.step_cache import (
    ResultCache,
    estimate_speed_cached,
    replica_capacity_cached,
    replica_plan,
    simulate_one_cached,
)

HOURS_PER_MONTH = 730  # 8,760 hours / 12 months

#: Latency objectives as MLPerf Inference enforces them for Llama-2-70B (loadgen mlperf.conf, p99):
#: Server TTFT 2,000 ms and TPOT 200 ms; Interactive TTFT 450 ms and TPOT 40 ms
#: (https://github.com/mlcommons/inference/blob/master/loadgen/mlperf.conf).
SLO_PRESETS: dict[str, tuple[float, float]] = {"server": (2.0, 0.2), "interactive": (0.45, 0.04)}

#: Requests simulated per replica and candidate count (enough for a stable p99 at a few seconds of load).
QUOTE_REQUESTS = 400
#: The most replicas a quote searches above the capacity bound before it reports the objective unmet.
MAX_REPLICA_FACTOR = 64
#: A doubled fleet that improves every missed percentile by less than this has reached the latency floor.
FLOOR_GAIN_FRAC = 0.02
#: The best quote per (model, node type, traffic, speculator, engine settings): a page that plans node type by node
#: type and then all of them together, or asks again after a widget change that leaves them alone, reuses it.
QUOTES = ResultCache(maxsize=256)


class Traffic(BaseModel):
    """The load to serve and its latency objectives."""

    requests_per_s: float = Field(gt=0)
    prompt_tokens: int = Field(ge=1)
    output_tokens: int = Field(ge=1)
    #: Time-to-first-token objective at ``percentile`` (None: none).
    ttft_slo_s: float | None = Field(default=SLO_PRESETS["server"][0], gt=0)
    #: Time-per-output-token objective at ``percentile`` (None: none).
    tpot_slo_s: float | None = Field(default=SLO_PRESETS["server"][1], gt=0)
    percentile: float = Field(default=99.0, gt=0, le=100)
    #: Acceptance assumed for the draft (Leviathan α); None: the speculator's own (measured, published or the
    #: prior of its kind, :func:`planner.speed.deployment_acceptance`), as every page and command uses.
    alpha: float | None = Field(default=None, ge=0, le=1)
    #: Override of the catalog price ($/GPU-hour).
    usd_per_gpu_hour: float | None = Field(default=None, gt=0)

    @classmethod
    def build(cls, **fields) -> Traffic:
        try:
            return cls(**fields)
        except ValidationError as exc:
            raise first_pydantic_error(exc) from None

    def objectives(self) -> str:
        parts = []
        if self.ttft_slo_s is not None:
            parts.append(f"p{self.percentile:g} TTFT ≤ {self.ttft_slo_s * 1e3:,.0f} ms")
        if self.tpot_slo_s is not None:
            parts.append(f"p{self.percentile:g} TPOT ≤ {self.tpot_slo_s * 1e3:,.0f} ms")
        return " and ".join(parts) or "no latency objective"


class ObjectiveMiss(BaseModel):
    """One latency objective an option misses: the percentile it reaches against the limit.

    >>> miss = ObjectiveMiss(objective="p99 TPOT", value_s=0.052, limit_s=0.040)
    >>> round(miss.shortfall_frac, 2), miss.describe()
    (0.3, 'p99 TPOT 52.0 ms against an objective of 40.0 ms (30% over)')
    """

    objective: str
    value_s: float
    limit_s: float

    @computed_field
    @property
    def shortfall_frac(self) -> float:
        """How far over the objective, as a fraction of it (0.3: 30% over)."""
        return self.value_s / self.limit_s - 1

    def describe(self) -> str:
        return (
            f"{self.objective} {self.value_s * 1e3:,.1f} ms against an objective of {self.limit_s * 1e3:,.1f} ms "
            f"({self.shortfall_frac:.0%} over)"
        )


class FleetOption(BaseModel):
    speculation: bool
    #: The tensor-parallel degree of the option's replicas (a node type's options may differ in layout).
    tp: int
    #: Mean running requests per replica in the simulation at the quoted load.
    batch_size: float
    k: int | None
    #: TTFT and TPOT at the traffic's percentile, per replica at the quoted load.
    tpot_s: float
    ttft_s: float
    requests_per_s_per_replica: float
    #: The replica's saturated steady-state throughput (requests/s), where the replica search starts.
    capacity_requests_per_s: float
    replicas: int
    nodes: int
    gpus: int
    usd_per_hour: float | None
    usd_per_month: float | None
    usd_per_million_output_tokens: float | None
    #: The objective that needs the last replica (or the capacity bound), and the scheduler's limit.
    limited_by: str
    replica_limited_by: str
    meets_slo: bool
    delivered_flops_frac: float
    delivered_bandwidth_frac: float
    #: The objectives missed at the largest fleet searched (empty when ``meets_slo``).
    misses: list[ObjectiveMiss] = Field(default_factory=list)


class FleetQuote(BaseModel):
    """A node type's cheapest option without speculation and its cheapest option with it, each at its own layout."""

    node: str
    #: The tensor-parallel degree of the chosen option.
    tp: int
    gpu: str
    gpus_per_node: int
    replicas_per_node: int
    usd_per_gpu_hour: float | None
    price_source: str
    traffic: Traffic
    kv_concurrency_limit: float
    without_speculation: FleetOption
    with_speculation: FleetOption | None
    #: Speculation meets the objectives and needs fewer GPUs (or the option without it misses) at this load on
    #: this node type: the option ``recommend_fleet`` recommends among this quote's two.
    speculation_chosen: bool = False
    #: GPUs speculation saves on this node type against its cheapest layout without it, only when both options meet
    #: the objectives and it saves some.
    savings_frac: float | None
    notes: list[str]
    #: Where the replica's step times come from (measured kernel tables or the roofline), in words.
    speed_source: str = ""
    #: The α the speculative option assumes and where it comes from ("no speculation" without a speculator).
    alpha_basis: str = "no speculation"

    @property
    def chosen(self) -> FleetOption:
        if self.speculation_chosen and self.with_speculation is not None:
            return self.with_speculation
        return self.without_speculation


class _Search:
    """Simulate one replica at ``rate / n`` for candidate replica counts ``n`` (memoised)."""

    def __init__(
        self, dep: Deployment, traffic: Traffic, alpha: float | None, k: int | None, dataset: str = "fixed"
    ) -> None:
        self.dep, self.traffic, self.alpha, self.k = dep, traffic, alpha, k
        self.dataset = dataset
        self.runs: dict[int, ServingMetrics] = {}

    def workload(self, **arrivals) -> ServingWorkload:
        t = self.traffic
        lengths = (
            {"prompt_tokens": t.prompt_tokens, "output_tokens": t.output_tokens}
            if self.dataset == "fixed"
            else {"dataset": self.dataset}
        )
        return ServingWorkload.build(num_prompts=QUOTE_REQUESTS, **lengths, **arrivals)

    def capacity(self) -> ServingMetrics:
        return replica_capacity_cached(self.dep, self.workload(offline=True), alpha=self.alpha, k=self.k)

    def at(self, n: int) -> ServingMetrics:
        if n not in self.runs:
            rate = self.traffic.requests_per_s / n
            self.runs[n] = simulate_one_cached(self.dep, self.workload(request_rate=rate), alpha=self.alpha, k=self.k)
        return self.runs[n]

    def objectives(self, run: ServingMetrics) -> list[ObjectiveMiss]:
        """Each objective set, with ``run``'s percentile beside its limit (met or not)."""
        t, pct = self.traffic, self.traffic.percentile
        checked = []
        if t.ttft_slo_s is not None:
            checked.append(ObjectiveMiss(objective=f"p{pct:g} TTFT", value_s=run.ttft_at(pct), limit_s=t.ttft_slo_s))
        if t.tpot_slo_s is not None:
            checked.append(ObjectiveMiss(objective=f"p{pct:g} TPOT", value_s=run.tpot_at(pct), limit_s=t.tpot_slo_s))
        return checked

    def objective_misses(self, run: ServingMetrics) -> list[ObjectiveMiss]:
        return [m for m in self.objectives(run) if m.value_s > m.limit_s]

    def misses(self, run: ServingMetrics) -> list[str]:
        pct = self.traffic.percentile
        return [
            f"p{pct:g} TTFT {run.ttft_at(pct) * 1e3:,.0f} ms > {m.limit_s * 1e3:,.0f} ms"
            if m.objective.endswith("TTFT")
            else f"p{pct:g} TPOT {run.tpot_at(pct) * 1e3:,.1f} ms > {m.limit_s * 1e3:,.0f} ms"
            for m in self.objective_misses(run)
        ]

    def margin(self, n: int) -> float:
        """How far ``n`` replicas are from the objectives: ``log(value / limit)`` of the worst one (> 0: a miss)."""
        ratios = [m.value_s / m.limit_s for m in self.objectives(self.at(n))]
        return log(max(*ratios, 1e-12)) if ratios else 0.0

    def probe(self, miss: int, hit: int) -> int:
        """The count to try between a count that misses (``miss``) and one that meets the objectives (``hit``):
        where the worst objective's log margin, interpolated linearly between them, crosses zero (regula falsi),
        rounded up and kept strictly inside the bracket. The bracket and its answer are the bisection's (for
        objectives that ease as replicas are added); only the counts tried differ.

        >>> s = _Search.__new__(_Search)
        >>> s.margin = lambda n: (100 - n) / 100  # the objectives are met from 100 replicas on
        >>> s.probe(60, 160)
        100
        """
        m_miss, m_hit = self.margin(miss), self.margin(hit)
        if not m_miss > 0 >= m_hit:
            return (miss + hit) // 2
        x = miss + (hit - miss) * m_miss / (m_miss - m_hit)
        return min(hit - 1, max(miss + 1, ceil(x - 1e-9)))

    def at_floor(self, fewer: int, more: int) -> bool:
        """True when ``more`` replicas improve no missed percentile of ``fewer`` by ``FLOOR_GAIN_FRAC``."""
        before = {m.objective: m.value_s for m in self.objective_misses(self.at(fewer))}
        after = {m.objective: m.value_s for m in self.objective_misses(self.at(more))}
        return all(name in after and after[name] > before[name] * (1 - FLOOR_GAIN_FRAC) for name in before)


class CannotBeat(Exception):  # noqa: N818 (a signal, never shown to a user)
    """The option (or layout) needs at least the nodes of a cheaper layout already quoted: it cannot be chosen."""


def size_option(
    dep: Deployment,
    traffic: Traffic,
    price: float | None,
    k: int | None,
    beat_nodes: int | None = None,
    *,
    dataset: str = "fixed",
) -> FleetOption:
    """The fewest replicas of ``dep`` that meet ``traffic``'s objectives, and their figures: how a quote sizes each
    option, and how the design-space search sizes its recommendation (the same configuration gets the same fleet in
    both). ``k`` None serves ``dep`` without speculation; else at draft length ``k`` with ``traffic.alpha``.
    ``dataset``: request lengths drawn from a dataset (``sharegpt``) instead of ``traffic``'s fixed lengths (whose
    means then price the tokens).

    With ``beat_nodes`` the search stops (``CannotBeat``) once the option provably needs ``beat_nodes`` nodes or
    more, or misses: at once when the objectives are missed at the largest fleet below that bound (one run), else as
    it goes, for the replicas it settles on are never below ``low`` nor below one more than a count that missed (the
    doubling and the bisection only move up from a miss), so its cost can no longer be below that bound.
    """
    speculate = k is not None
    search = _Search(dep, traffic, traffic.alpha if speculate else None, k, dataset)
    if beat_nodes is not None and (traffic.ttft_slo_s is not None or traffic.tpot_slo_s is not None):
        # the largest fleet that could still beat the bound: missing there, it misses with fewer replicas too (as the
        # bisection below assumes), so one run rules the option out before its capacity runs
        most = (beat_nodes - 1) * dep.replicas_per_node
        if most < 1 or search.misses(search.at(most)):
            raise CannotBeat
    capacity = search.capacity()
    low = max(1, ceil(traffic.requests_per_s / capacity.steady_requests_per_s))

    def check_bound(replicas_at_least: int) -> None:
        if beat_nodes is not None and ceil(replicas_at_least / dep.replicas_per_node) >= beat_nodes:
            raise CannotBeat

    check_bound(low)
    high = low * MAX_REPLICA_FACTOR
    n, meets, floor = low, True, False
    if search.misses(search.at(low)):
        check_bound(low + 1)
        miss, hit = low, low * 2
        while hit <= high and search.misses(search.at(hit)):
            if search.at_floor(miss, hit):
                floor = True
                break
            miss, hit = hit, hit * 2
            check_bound(miss + 1)
        if floor or hit > high:
            if beat_nodes is not None:
                raise CannotBeat  # misses every objective searched: never chosen over an option that meets them
            n, meets = min(hit, high), False
            search.at(n)
        else:
            interpolate = True
            while hit - miss > 1:  # narrow the bracket between the last miss and the first success
                width = hit - miss
                mid = search.probe(miss, hit) if interpolate else (miss + hit) // 2
                miss, hit = (mid, hit) if search.misses(search.at(mid)) else (miss, mid)
                interpolate = interpolate and 2 * (hit - miss) <= width  # once it fails to halve it: bisect
                check_bound(miss + 1)
            n = hit
    run = search.at(n)
    if not meets and floor:
        reason = (
            f"cannot meet {traffic.objectives()} at any fleet size: at {n} replicas "
            f"{', '.join(search.misses(run))}, and doubling the fleet improves it by under {FLOOR_GAIN_FRAC:.0%}"
        )
    elif not meets:
        reason = f"cannot meet {traffic.objectives()} even at {high} replicas: {', '.join(search.misses(run))}"
    elif n == low:
        reason = f"replica capacity ({capacity.steady_requests_per_s:.2f} req/s offline, {capacity.limited_by})"
    else:
        fewer = search.at(n - 1)
        reason = "objective at one replica fewer: " + ", ".join(search.misses(fewer))
    replicas = n
    nodes = ceil(replicas / dep.replicas_per_node)
    gpus = nodes * dep.gpu_count
    per_hour = gpus * price if price else None
    tokens_per_hour = traffic.requests_per_s * traffic.output_tokens * 3600
    pct = traffic.percentile
    return FleetOption(
        speculation=speculate,
        tp=dep.tp,
        batch_size=run.mean_batch_size,
        k=k,
        tpot_s=run.tpot_at(pct),
        ttft_s=run.ttft_at(pct),
        requests_per_s_per_replica=traffic.requests_per_s / replicas,
        capacity_requests_per_s=capacity.steady_requests_per_s,
        replicas=replicas,
        nodes=nodes,
        gpus=gpus,
        usd_per_hour=per_hour,
        usd_per_month=per_hour * HOURS_PER_MONTH if per_hour else None,
        usd_per_million_output_tokens=per_hour / tokens_per_hour * 1e6 if per_hour else None,
        limited_by=reason,
        replica_limited_by=run.limited_by,
        meets_slo=meets,
        delivered_flops_frac=run.delivered_flops_per_s / run.peak_flops_per_s,
        delivered_bandwidth_frac=run.delivered_bytes_per_s / run.peak_bytes_per_s,
        misses=[] if meets else search.objective_misses(run),
    )


def _best_k(dep: Deployment, traffic: Traffic, batch: float) -> int:
    """The K that pays most at the batch the plain replica runs (the optimal K of the step model)."""
    workload = SpeedWorkload.build(
        batch_size=max(1, round(batch)),
        prompt_tokens=traffic.prompt_tokens,
        output_tokens=traffic.output_tokens,
        alpha=traffic.alpha,
    )
    return estimate_speed_cached(dep, workload).optimal_k


def check_context(target: ModelSpec, traffic: Traffic) -> None:
    """An InputError when a request is longer than the target's context window (no engine would serve it)."""
    context = target.architecture.max_position_embeddings
    if context is not None and traffic.prompt_tokens + traffic.output_tokens > context:
        field = "prompt_tokens" if traffic.prompt_tokens >= context else "output_tokens"
        raise InputError(
            field,
            getattr(traffic, field),
            f"prompt + output tokens within {target.short_name}'s context of {context:,} tokens "
            f"(this request: {traffic.prompt_tokens:,} + {traffic.output_tokens:,})",
        )


class _Layout:
    """One layout's options for a quote: the replica without speculation and, when ``dep`` speculates, with it."""

    __slots__ = ("alpha_note", "dep", "k", "price", "price_source", "spec_error", "traffic", "with_spec", "without")

    def __init__(self, dep: Deployment, traffic: Traffic, price, price_source: str, without: FleetOption) -> None:
        self.dep, self.traffic, self.price, self.price_source, self.without = dep, traffic, price, price_source, without
        self.with_spec: FleetOption | None = None
        self.k: int | None = None
        self.spec_error: str | None = None
        self.alpha_note = "no speculation"


def _layout(dep: Deployment, traffic: Traffic, beat_nodes: int | None, spec_beat_nodes: int | None) -> _Layout:
    """Both options of ``dep``'s layout (``fleet_quote`` explains the bounds)."""
    if dep.replicas_per_node < 1:
        raise InputError("tp", dep.tp, f"tp x pp at most the node's {dep.gpu_count} GPUs")
    max_len = traffic.prompt_tokens + traffic.output_tokens
    check_context(dep.target, traffic)
    sized = dep.replace(max_model_len=max(max_len, 16))
    price_entry = get_price(dep.gpu.id)
    price = traffic.usd_per_gpu_hour or (price_entry.default_usd_per_gpu_hour if price_entry else None)
    source = (
        "entered by the user"
        if traffic.usd_per_gpu_hour
        else f"median of {len(price_entry.observations)} dated on-demand prices (latest {price_entry.latest_date}) "
        "in the price catalog"
        if price_entry
        else "no price in the catalog: enter one"
    )
    # the option with speculation needs fewer than one node to beat a cheaper layout's: it is not wanted
    spec_wanted = dep.is_speculative and (spec_beat_nodes is None or (spec_beat_nodes - 1) * dep.replicas_per_node >= 1)
    try:  # searched in full when the option with speculation is wanted: the batch it runs at sets K
        without = size_option(sized.without_draft(), traffic, price, None, None if spec_wanted else beat_nodes)
    except PlannerError as exc:
        raise PlannerError(f"the target does not fit {dep.node_id or dep.gpu.id}: {exc}", field="node") from exc
    layout = _Layout(sized, traffic, price, source, without)
    if not spec_wanted:
        return layout
    if traffic.alpha is None:
        assumed = deployment_acceptance(dep)
        layout.traffic = traffic.model_copy(update={"alpha": assumed.alpha})
        layout.alpha_note = f"α = {assumed.alpha:.2f} for {dep.speculator_name} ({assumed.source}: {assumed.detail})"
    else:
        layout.alpha_note = f"α = {traffic.alpha:.2f} for {dep.speculator_name} (your value)"
    try:
        layout.k = _best_k(sized, layout.traffic, without.batch_size)
        layout.with_spec = size_option(sized, layout.traffic, price, layout.k, spec_beat_nodes)
    except CannotBeat:
        pass  # needs at least the nodes of a cheaper layout with speculation already quoted
    except PlannerError as exc:
        layout.spec_error = f"with the draft: {exc}"
    return layout


def fleet_quote(
    dep: Deployment, traffic: Traffic, *, beat_nodes: int | None = None, spec_beat_nodes: int | None = None
) -> FleetQuote:
    """Nodes and cost to serve ``traffic`` with ``dep``'s layout (its draft, if any, for the speculative option).

    ``beat_nodes``: only an option without speculation that meets the objectives on fewer nodes is wanted; when
    it provably cannot, ``CannotBeat`` is raised as soon as that is known (unless the option with speculation is
    wanted: it is then searched in full, for the batch it runs at sets K). ``spec_beat_nodes`` likewise for the
    option with speculation, which is then left out (None)."""
    layout = _layout(dep, traffic, beat_nodes, spec_beat_nodes)
    return _quote(layout, layout)


def _quote(plain: _Layout, spec: _Layout) -> FleetQuote:
    """The quote of a node type from the layout of its cheapest option without speculation (``plain``) and that of
    its cheapest option with it (``spec``; the same layout, or ``plain`` when none speculates): what speculation
    saves is counted against the cheapest layout without it, never against the speculative option's own layout."""
    without, with_spec, k = plain.without, spec.with_spec, spec.k
    savings, notes, chosen = None, [], False
    if spec.spec_error and with_spec is None:
        notes.append(spec.spec_error)
    if with_spec is not None:
        both_meet = with_spec.meets_slo and without.meets_slo
        savings = 1 - with_spec.gpus / without.gpus if both_meet and with_spec.gpus < without.gpus else None
        # the rule recommend_fleet applies: the cheaper option that meets the objectives (a tie keeps the plain one)
        chosen = with_spec.meets_slo and (not without.meets_slo or with_spec.gpus < without.gpus)
        if not with_spec.meets_slo:
            notes.append(f"with the draft (K {k}) the objectives are not met: {with_spec.limited_by}")
        elif not chosen:
            notes.append(
                f"speculation does not pay here at this load (K {k}: {with_spec.gpus} GPUs against "
                f"{without.gpus} without the draft)"
            )
    traffic = spec.traffic
    notes.append(
        f"{spec.alpha_note}; requests of "
        f"{traffic.prompt_tokens} + {traffic.output_tokens} tokens; objectives {traffic.objectives()}; "
        f"each replica simulated with {QUOTE_REQUESTS} Poisson requests (prefill and decode share its GPUs)"
    )
    dep = spec.dep if spec.dep.is_speculative else plain.dep.without_draft()
    step_source = speed_source(dep)
    notes.append(f"{dep.node_id or dep.gpu.id} step times: {step_source}")
    return FleetQuote(
        node=dep.node_id or f"{dep.gpu_count}x {dep.gpu.id}",
        tp=with_spec.tp if chosen and with_spec is not None else without.tp,
        gpu=dep.gpu.id,
        gpus_per_node=dep.gpu_count,
        replicas_per_node=(spec.dep if chosen else plain.dep).replicas_per_node,
        usd_per_gpu_hour=plain.price,
        price_source=plain.price_source,
        traffic=traffic,
        kv_concurrency_limit=replica_plan(plain.dep.without_draft()).max_concurrency,
        without_speculation=without,
        with_speculation=with_spec,
        speculation_chosen=chosen,
        savings_frac=savings,
        notes=notes,
        speed_source=step_source,
        alpha_basis=spec.alpha_note,
    )


def _option_key(option: FleetOption) -> tuple:
    """Cheapest first among options: those that meet the objectives, then by $/hour (GPUs where unpriced)."""
    return (not option.meets_slo, option.usd_per_hour if option.usd_per_hour is not None else float(option.gpus),
            option.gpus)  # fmt: skip


def _cost_key(quote: FleetQuote) -> tuple:
    return _option_key(quote.chosen)


def best_quote_on_node(target, node, traffic: Traffic, *, draft=None, exhaustive: bool = False, **fields) -> FleetQuote:
    # ``fields`` may carry ``method`` (n-gram lookup, the target's MTP) for speculation without a draft model
    """The quote of ``target`` (+ ``draft``) on ``node`` for ``traffic``: the cheapest tensor-parallel layout without
    speculation and the cheapest with it, each its own (so what speculation saves is counted against the best the
    node type does without it, not against the speculative option's layout).

    Every TP degree the model admits up to the node's GPU count is tried in order; layouts that do not fit are
    skipped. Raises a PlannerError naming the node when none fits. Once an option meets the objectives on ``B``
    nodes, the same option of a later layout is only searched while it could need fewer (it never needs fewer than
    one node, so once both options need one node no later layout is tried): the same quote as trying every layout
    in full (``exhaustive``), for which a later layout had to be strictly cheaper to replace an option. The answer
    is memoised per input.
    """
    inputs = (target, node, traffic, draft, exhaustive, *sorted(fields.items()))
    return QUOTES.get_or_compute(
        tuple(v.model_dump_json() if isinstance(v, BaseModel) else repr(v) for v in inputs),
        lambda: _best_quote_on_node(target, node, traffic, draft=draft, exhaustive=exhaustive, **fields),
    )


def _floor(option: FleetOption | None) -> int | None:
    """The nodes another layout's option must come under to replace ``option`` (None: any layout may)."""
    return option.nodes if option is not None and option.meets_slo else None


def _best_quote_on_node(target, node, traffic: Traffic, *, draft, exhaustive: bool, **fields) -> FleetQuote:
    layouts: list[_Layout] = []
    reasons = []
    plain: _Layout | None = None  # the layout of the cheapest option without speculation so far
    spec: _Layout | None = None  # and with it
    speculates = draft is not None or fields.get("method") is not None
    for tp in valid_tp_degrees(target.architecture, node.gpu_count):
        beat = None if exhaustive or plain is None else _floor(plain.without)
        spec_beat = None if exhaustive or spec is None else _floor(spec.with_spec)
        if beat == 1 and (not speculates or spec_beat == 1):
            break  # one node each: no layout needs fewer
        try:
            dep = Deployment.on_node(target, node, tp=tp, draft=draft, **fields)
            layout = _layout(dep, traffic, beat, spec_beat)
        except PlannerError as exc:
            reasons.append(f"TP {tp}: {exc}")
            continue
        except CannotBeat:
            continue
        layouts.append(layout)
        if plain is None or _option_key(layout.without) < _option_key(plain.without):
            plain = layout
        option = layout.with_spec
        if option is not None and (spec is None or _option_key(option) < _option_key(spec.with_spec)):
            spec = layout
    if plain is None:
        raise PlannerError(
            f"{target.id} fits no layout of {node.id}: " + (reasons[-1] if reasons else "no TP"), field="node"
        )
    return _quote(plain, spec or next((lay for lay in layouts if lay.spec_error), plain))


def compare_nodes(target, nodes, traffic: Traffic, *, draft=None, **fields) -> tuple[list[FleetQuote], list[str]]:
    """The best quote on each node type, cheapest first, and the node types that cannot serve the model
    (``fields`` as :func:`best_quote_on_node` takes them, ``exhaustive`` included)."""
    check_context(target, traffic)
    quotes, unusable = [], []
    for node in nodes:
        try:
            quotes.append(best_quote_on_node(target, node, traffic, draft=draft, **fields))
        except PlannerError as exc:
            unusable.append(str(exc))
    return sorted(quotes, key=_cost_key), unusable
