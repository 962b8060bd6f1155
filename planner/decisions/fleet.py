"""Traffic → replicas → nodes → cost, with and without speculation, on one or several node types.

A replica serves ``B`` concurrent requests; by Little's law it completes
``B / (TTFT + (output_tokens − 1) · TPOT(B))`` requests per second. The planner picks the largest batch
that (1) fits the KV cache at ``prompt + output`` tokens per request (planner.memory.plan), and (2) keeps
TPOT within the latency objective when one is given (planner.speed.estimate, at the optimal K for speculation).
Then ``replicas = ceil(rate / per_replica)``, ``nodes = ceil(replicas / replicas_per_node)`` and the cost is
nodes × GPUs per node × $/GPU-hour (data/prices.json, dated and editable).

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8,
...                          draft=get_model("Llama-3.2-1B"))
>>> quote = fleet_quote(dep, Traffic(requests_per_s=20, prompt_tokens=1024, output_tokens=256, alpha=0.8))
>>> quote.with_speculation.nodes <= quote.without_speculation.nodes
True
"""

from __future__ import annotations

from math import ceil

from pydantic import BaseModel, Field, ValidationError

from planner.catalog.lookup import get_price
from planner.defaults import ACCEPTANCE_ALPHA
from planner.deployment import Deployment
from planner.errors import InputError, PlannerError, first_pydantic_error
from planner.memory.plan import plan_memory
from planner.model.parallelism import valid_tp_degrees
from planner.speed.estimate import SpeedWorkload, baseline_speed, estimate_speed

HOURS_PER_MONTH = 730  # 8,760 hours / 12 months


class Traffic(BaseModel):
    """The load to serve and its latency objective."""

    requests_per_s: float = Field(gt=0)
    prompt_tokens: int = Field(ge=1)
    output_tokens: int = Field(ge=1)
    #: Time per output token objective (p50 of the model); None = throughput only.
    tpot_slo_s: float | None = Field(default=None, gt=0)
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


class FleetOption(BaseModel):
    speculation: bool
    batch_size: int
    k: int | None
    tpot_s: float
    ttft_s: float
    requests_per_s_per_replica: float
    replicas: int
    nodes: int
    gpus: int
    usd_per_hour: float | None
    usd_per_month: float | None
    usd_per_million_output_tokens: float | None
    limited_by: str
    meets_slo: bool


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
    savings_frac: float | None
    notes: list[str]


def _batches(limit: int) -> list[int]:
    sizes, b = [], 1
    while b < limit:
        sizes.append(b)
        b *= 2
    return [*sizes, limit]


def _option(dep: Deployment, traffic: Traffic, limit: int, price: float | None, speculate: bool) -> FleetOption:
    points = []  # (rate, batch, tpot, ttft, k) for batch sizes up to the KV-cache limit
    for batch in _batches(limit):
        workload = SpeedWorkload.build(
            batch_size=batch,
            prompt_tokens=traffic.prompt_tokens,
            output_tokens=traffic.output_tokens,
            alpha=traffic.alpha,
        )
        if speculate:
            est = estimate_speed(dep, workload)
            tpot, ttft, k = est.baseline_tpot_s / est.speedup_at_optimal_k, est.spec_ttft_s, est.optimal_k
        else:
            plain = baseline_speed(dep, workload)
            tpot, ttft, k = plain.tpot_s, plain.ttft_s, None
        points.append((batch / (ttft + (traffic.output_tokens - 1) * tpot), batch, tpot, ttft, k))
    slo = traffic.tpot_slo_s
    feasible = [p for p in points if slo is None or p[2] <= slo]
    rate, batch, tpot, ttft, k = max(feasible or points)
    if not feasible:
        reason = "cannot meet the TPOT objective at any batch (quoted at the best throughput)"
    elif batch == limit:
        reason = "KV-cache concurrency"
    elif slo is not None and len(feasible) < len(points):
        reason = "latency objective (TPOT)"
    else:
        reason = "throughput peaks at this batch"
    replicas = ceil(traffic.requests_per_s / rate)
    nodes = ceil(replicas / dep.replicas_per_node)
    gpus = nodes * dep.gpu_count
    per_hour = gpus * price if price else None
    tokens_per_hour = traffic.requests_per_s * traffic.output_tokens * 3600
    return FleetOption(
        speculation=speculate,
        batch_size=batch,
        k=k,
        tpot_s=tpot,
        ttft_s=ttft,
        requests_per_s_per_replica=rate,
        replicas=replicas,
        nodes=nodes,
        gpus=gpus,
        usd_per_hour=per_hour,
        usd_per_month=per_hour * HOURS_PER_MONTH if per_hour else None,
        usd_per_million_output_tokens=per_hour / tokens_per_hour * 1e6 if per_hour else None,
        limited_by=reason,
        meets_slo=bool(feasible),
    )


def fleet_quote(dep: Deployment, traffic: Traffic) -> FleetQuote:
    """Nodes and cost to serve ``traffic`` with ``dep`` (its draft, if any, for the speculative option)."""
    if dep.replicas_per_node < 1:
        raise InputError("tp", dep.tp, f"tp x pp at most the node's {dep.gpu_count} GPUs")
    max_len = traffic.prompt_tokens + traffic.output_tokens
    sized = dep.model_copy(update={"max_model_len": max_len})
    alone = sized.model_copy(update={"draft": None, "draft_tp": None, "draft_dtype": None})
    plan_alone = plan_memory(alone, with_suggestions=False)
    if not plan_alone.fits:
        raise PlannerError(
            f"the target does not fit {dep.node_id or dep.gpu.id}: {plan_alone.problems[0]}", field="node"
        )
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
    without = _option(alone, traffic, max(1, int(plan_alone.max_concurrency)), price, speculate=False)
    with_spec, savings, notes = None, None, []
    if dep.draft is not None:
        plan_spec = plan_memory(sized, with_suggestions=False)
        if plan_spec.fits:
            with_spec = _option(sized, traffic, max(1, int(plan_spec.max_concurrency)), price, speculate=True)
            savings = 1 - with_spec.gpus / without.gpus
        else:
            notes.append(f"with the draft the deployment does not fit: {plan_spec.problems[0]}")
    notes.append(
        f"α = {traffic.alpha:.2f} assumed for the draft; requests of {traffic.prompt_tokens} + "
        f"{traffic.output_tokens} tokens; decode-dominated latency model (prefill counted once per request)"
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
        kv_concurrency_limit=plan_alone.max_concurrency,
        without_speculation=without,
        with_speculation=with_spec,
        savings_frac=savings,
        notes=notes,
    )


def _cost_key(quote: FleetQuote) -> tuple:
    option = quote.with_speculation or quote.without_speculation
    meets = option.meets_slo
    return (not meets, option.usd_per_hour if option.usd_per_hour is not None else float(option.gpus), option.gpus)


def best_quote_on_node(target, node, traffic: Traffic, *, draft=None, **fields) -> FleetQuote:
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
    quotes, unusable = [], []
    for node in nodes:
        try:
            quotes.append(best_quote_on_node(target, node, traffic, draft=draft, **fields))
        except PlannerError as exc:
            unusable.append(str(exc))
    return sorted(quotes, key=_cost_key), unusable
