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

from math import ceil

from pydantic import BaseModel, Field, ValidationError, computed_field

from planner.catalog.lookup import get_price
from planner.catalog.schemas import ModelSpec
from planner.defaults import ACCEPTANCE_ALPHA
from planner.deployment import Deployment
from planner.errors import InputError, PlannerError, first_pydantic_error
from planner.memory.plan import plan_memory
from planner.model.parallelism import valid_tp_degrees
from planner.speed.estimate import SpeedWorkload, estimate_speed
from planner.speed.replica_capacity import replica_capacity
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import ServingMetrics, simulate_one

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
    #: Acceptance assumed for the draft (Leviathan α).
    alpha: float = Field(default=ACCEPTANCE_ALPHA, ge=0, le=1)
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
    node: str
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
    #: GPUs speculation saves on this node type, only when both options meet the objectives and it saves some.
    savings_frac: float | None
    notes: list[str]

    @property
    def chosen(self) -> FleetOption:
        if self.speculation_chosen and self.with_speculation is not None:
            return self.with_speculation
        return self.without_speculation


class _Search:
    """Simulate one replica at ``rate / n`` for candidate replica counts ``n`` (memoised)."""

    def __init__(self, dep: Deployment, traffic: Traffic, alpha: float | None, k: int | None) -> None:
        self.dep, self.traffic, self.alpha, self.k = dep, traffic, alpha, k
        self.runs: dict[int, ServingMetrics] = {}

    def workload(self, **arrivals) -> ServingWorkload:
        t = self.traffic
        return ServingWorkload.build(
            prompt_tokens=t.prompt_tokens, output_tokens=t.output_tokens, num_prompts=QUOTE_REQUESTS, **arrivals
        )

    def capacity(self) -> ServingMetrics:
        return replica_capacity(self.dep, self.workload(offline=True), alpha=self.alpha, k=self.k)

    def at(self, n: int) -> ServingMetrics:
        if n not in self.runs:
            rate = self.traffic.requests_per_s / n
            self.runs[n] = simulate_one(self.dep, self.workload(request_rate=rate), alpha=self.alpha, k=self.k)
        return self.runs[n]

    def objective_misses(self, run: ServingMetrics) -> list[ObjectiveMiss]:
        t, pct = self.traffic, self.traffic.percentile
        missed = []
        if t.ttft_slo_s is not None and run.ttft_at(pct) > t.ttft_slo_s:
            missed.append(ObjectiveMiss(objective=f"p{pct:g} TTFT", value_s=run.ttft_at(pct), limit_s=t.ttft_slo_s))
        if t.tpot_slo_s is not None and run.tpot_at(pct) > t.tpot_slo_s:
            missed.append(ObjectiveMiss(objective=f"p{pct:g} TPOT", value_s=run.tpot_at(pct), limit_s=t.tpot_slo_s))
        return missed

    def misses(self, run: ServingMetrics) -> list[str]:
        pct = self.traffic.percentile
        return [
            f"p{pct:g} TTFT {run.ttft_at(pct) * 1e3:,.0f} ms > {m.limit_s * 1e3:,.0f} ms"
            if m.objective.endswith("TTFT")
            else f"p{pct:g} TPOT {run.tpot_at(pct) * 1e3:,.1f} ms > {m.limit_s * 1e3:,.0f} ms"
            for m in self.objective_misses(run)
        ]

    def at_floor(self, fewer: int, more: int) -> bool:
        """True when ``more`` replicas improve no missed percentile of ``fewer`` by ``FLOOR_GAIN_FRAC``."""
        before = {m.objective: m.value_s for m in self.objective_misses(self.at(fewer))}
        after = {m.objective: m.value_s for m in self.objective_misses(self.at(more))}
        return all(name in after and after[name] > before[name] * (1 - FLOOR_GAIN_FRAC) for name in before)


def _option(dep: Deployment, traffic: Traffic, price: float | None, k: int | None) -> FleetOption:
    speculate = k is not None
    search = _Search(dep, traffic, traffic.alpha if speculate else None, k)
    capacity = search.capacity()
    low = max(1, ceil(traffic.requests_per_s / capacity.steady_requests_per_s))
    high = low * MAX_REPLICA_FACTOR
    n, meets, floor = low, True, False
    if search.misses(search.at(low)):
        miss, hit = low, low * 2
        while hit <= high and search.misses(search.at(hit)):
            if search.at_floor(miss, hit):
                floor = True
                break
            miss, hit = hit, hit * 2
        if floor or hit > high:
            n, meets = min(hit, high), False
            search.at(n)
        else:
            while hit - miss > 1:  # bisect between the last miss and the first success
                mid = (miss + hit) // 2
                miss, hit = (mid, hit) if search.misses(search.at(mid)) else (miss, mid)
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
    return estimate_speed(dep, workload).optimal_k


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


def fleet_quote(dep: Deployment, traffic: Traffic) -> FleetQuote:
    """Nodes and cost to serve ``traffic`` with ``dep`` (its draft, if any, for the speculative option)."""
    if dep.replicas_per_node < 1:
        raise InputError("tp", dep.tp, f"tp x pp at most the node's {dep.gpu_count} GPUs")
    max_len = traffic.prompt_tokens + traffic.output_tokens
    check_context(dep.target, traffic)
    sized = dep.replace(max_model_len=max(max_len, 16))
    alone = sized.without_draft()
    price_entry = get_price(dep.gpu.id)
    price = traffic.usd_per_gpu_hour or (price_entry.default_usd_per_gpu_hour if price_entry else None)
    source = (
        "entered by the user"
        if traffic.usd_per_gpu_hour
        else f"median of {len(price_entry.observations)} dated on-demand prices (latest {price_entry.latest_date}), "
        "data/prices.json"
        if price_entry
        else "no price in the catalog: enter one"
    )
    try:
        without = _option(alone, traffic, price, None)
    except PlannerError as exc:
        raise PlannerError(f"the target does not fit {dep.node_id or dep.gpu.id}: {exc}", field="node") from exc
    with_spec, savings, notes, chosen = None, None, [], False
    if dep.is_speculative:
        try:
            k = _best_k(sized, traffic, without.batch_size)
            with_spec = _option(sized, traffic, price, k)
        except PlannerError as exc:
            notes.append(f"with the draft: {exc}")
        else:
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
    notes.append(
        f"α = {traffic.alpha:.2f} assumed for {dep.speculator_name or 'the draft'}; requests of "
        f"{traffic.prompt_tokens} + {traffic.output_tokens} tokens; objectives {traffic.objectives()}; "
        f"each replica simulated with {QUOTE_REQUESTS} Poisson requests (prefill and decode share its GPUs)"
    )
    return FleetQuote(
        node=dep.node_id or f"{dep.gpu_count}x {dep.gpu.id}",
        tp=dep.tp,
        gpu=dep.gpu.id,
        gpus_per_node=dep.gpu_count,
        replicas_per_node=dep.replicas_per_node,
        usd_per_gpu_hour=price,
        price_source=source,
        traffic=traffic,
        kv_concurrency_limit=plan_memory(alone, with_suggestions=False).max_concurrency,
        without_speculation=without,
        with_speculation=with_spec,
        speculation_chosen=chosen,
        savings_frac=savings,
        notes=notes,
    )


def _cost_key(quote: FleetQuote) -> tuple:
    option = quote.chosen
    meets = option.meets_slo
    return (not meets, option.usd_per_hour if option.usd_per_hour is not None else float(option.gpus), option.gpus)


def best_quote_on_node(target, node, traffic: Traffic, *, draft=None, **fields) -> FleetQuote:
    # ``fields`` may carry ``method`` (n-gram lookup, the target's MTP) for speculation without a draft model
    """The cheapest tensor-parallel layout of ``target`` (+ ``draft``) on ``node`` for ``traffic``.

    Every TP degree the model admits up to the node's GPU count is tried; layouts that do not fit are
    skipped. Raises a PlannerError naming the node when none fits.
    """
    quotes, reasons = [], []
    for tp in valid_tp_degrees(target.architecture, node.gpu_count):
        try:
            dep = Deployment.on_node(target, node, tp=tp, draft=draft, **fields)
            quotes.append(fleet_quote(dep, traffic))
        except PlannerError as exc:
            reasons.append(f"TP {tp}: {exc}")
    if not quotes:
        raise PlannerError(
            f"{target.id} fits no layout of {node.id}: " + (reasons[-1] if reasons else "no TP"), field="node"
        )
    return min(quotes, key=_cost_key)


def compare_nodes(target, nodes, traffic: Traffic, *, draft=None, **fields) -> tuple[list[FleetQuote], list[str]]:
    """The best quote on each node type, cheapest first, and the node types that cannot serve the model."""
    check_context(target, traffic)
    quotes, unusable = [], []
    for node in nodes:
        try:
            quotes.append(best_quote_on_node(target, node, traffic, draft=draft, **fields))
        except PlannerError as exc:
            unusable.append(str(exc))
    return sorted(quotes, key=_cost_key), unusable


class QuotedOption(BaseModel):
    """One option of a comparison: a node type, its layout, and the fleet with or without speculation."""

    node: str
    tp: int
    gpu: str
    usd_per_gpu_hour: float | None
    option: FleetOption

    @property
    def label(self) -> str:
        how = f"with speculation (K {self.option.k})" if self.option.speculation else "without speculation"
        return f"{self.node}, TP {self.tp}, {how}"

    def cost_key(self) -> tuple:
        """Cheapest first: priced options by $/month, then unpriced ones by GPUs."""
        o = self.option
        return (o.usd_per_month is None, o.usd_per_month or 0.0, o.gpus)

    def miss_key(self) -> tuple:
        """Nearest miss first: the smallest worst shortfall, then the cost."""
        return (max((m.shortfall_frac for m in self.option.misses), default=0.0), *self.cost_key())


class SpeculationSaving(BaseModel):
    """What the recommended (speculative) option saves against the cheapest option without speculation.

    Both meet every objective; the saving is positive (never a negative saving)."""

    against: str
    gpus_saved: int
    gpus_frac: float | None
    usd_per_month: float | None

    def describe(self) -> str:
        parts = []
        if self.gpus_frac is not None:
            parts.append(f"{self.gpus_frac:.0%} of GPUs ({self.gpus_saved:,} GPUs)")
        if self.usd_per_month is not None:
            parts.append(f"${self.usd_per_month:,.0f} per month")
        return f"speculation saves {' and '.join(parts)} against {self.against}"


class FleetRecommendation(BaseModel):
    """A comparison read as a decision: the cheapest option that meets every objective, and the others."""

    traffic: Traffic
    quotes: list[FleetQuote]
    unusable: list[str]
    #: Options that meet every objective, cheapest first.
    meeting: list[QuotedOption]
    #: Options that miss at least one objective, nearest miss first, each with its misses.
    missing: list[QuotedOption]
    saving: SpeculationSaving | None = None
    #: Why speculation is not recommended when an option with the draft also meets the objectives.
    speculation_note: str | None = None

    @property
    def recommended(self) -> QuotedOption | None:
        return self.meeting[0] if self.meeting else None

    @property
    def nearest_miss(self) -> QuotedOption | None:
        return self.missing[0] if self.missing else None

    @property
    def headline(self) -> str:
        """The verdict in one sentence."""
        best = self.recommended
        if best is not None:
            o = best.option
            cost = f"${o.usd_per_month:,.0f} per month" if o.usd_per_month is not None else "no catalog price"
            return (
                f"Cheapest option that meets every objective: {o.nodes} x {best.node} (TP {best.tp}, "
                f"{'with' if o.speculation else 'without'} speculation), {o.gpus:,} GPUs, {cost}"
            )
        near = self.nearest_miss
        if near is None:
            return "No node type can serve this model: see the reasons below"
        return (
            f"No option meets every objective ({self.traffic.objectives()}). Nearest miss: {near.label}, which misses "
            + "; ".join(m.describe() for m in near.option.misses)
        )


def recommend_fleet(traffic: Traffic, quotes: list[FleetQuote], unusable: list[str]) -> FleetRecommendation:
    """Split every option into those that meet the objectives (cheapest first) and those that miss.

    A saving is computed only between options that meet every objective: the recommended option, when it
    speculates, against the cheapest option without speculation, and only where that one costs more.
    """
    options = [
        QuotedOption(node=q.node, tp=q.tp, gpu=q.gpu, usd_per_gpu_hour=q.usd_per_gpu_hour, option=o)
        for q in quotes
        for o in (q.without_speculation, q.with_speculation)
        if o is not None
    ]
    meeting = sorted((o for o in options if o.option.meets_slo), key=QuotedOption.cost_key)
    missing = sorted((o for o in options if not o.option.meets_slo), key=QuotedOption.miss_key)
    saving, note = None, None
    if meeting:
        best = meeting[0]
        plain = next((o for o in meeting if not o.option.speculation), None)
        spec = next((o for o in meeting if o.option.speculation), None)
        if best.option.speculation and plain is not None and plain.cost_key() > best.cost_key():
            gpus = plain.option.gpus - best.option.gpus
            usd = (
                plain.option.usd_per_month - best.option.usd_per_month
                if plain.option.usd_per_month is not None and best.option.usd_per_month is not None
                else None
            )
            saving = SpeculationSaving(
                against=f"{plain.label} ({plain.option.gpus:,} GPUs)",
                gpus_saved=max(gpus, 0),
                gpus_frac=gpus / plain.option.gpus if gpus > 0 else None,
                usd_per_month=usd if usd is not None and usd > 0 else None,
            )
            if saving.gpus_frac is None and saving.usd_per_month is None:
                saving = None
        elif not best.option.speculation and spec is not None:
            usd = (
                spec.option.usd_per_month - best.option.usd_per_month
                if spec.option.usd_per_month is not None and best.option.usd_per_month is not None
                else None
            )
            if spec.option.gpus == best.option.gpus and not usd:
                extra = (
                    f"the same {best.option.gpus:,} GPUs (p{traffic.percentile:g} TPOT "
                    f"{spec.option.tpot_s * 1e3:.1f} ms against {best.option.tpot_s * 1e3:.1f} ms): it buys latency, "
                    "not capacity"
                )
            elif usd is not None:
                extra = f"${usd:,.0f} per month more"
            else:
                extra = f"{spec.option.gpus:,} GPUs against {best.option.gpus:,}"
            note = (
                f"Speculation does not pay at this load: the cheapest option with speculation ({spec.label}) "
                f"needs {extra}"
            )
        elif not best.option.speculation and any(o.option.speculation for o in missing):
            note = "With the draft, no option meets every objective"
    return FleetRecommendation(
        traffic=traffic,
        quotes=quotes,
        unusable=unusable,
        meeting=meeting,
        missing=missing,
        saving=saving,
        speculation_note=note,
    )


def plan_fleet(target, nodes, traffic: Traffic, *, draft=None, **fields) -> FleetRecommendation:
    """:func:`compare_nodes` read as a decision (:func:`recommend_fleet`)."""
    quotes, unusable = compare_nodes(target, nodes, traffic, draft=draft, **fields)
    return recommend_fleet(traffic, quotes, unusable)
