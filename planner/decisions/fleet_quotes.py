"""A node type's quote: its cheapest layout without speculation and its cheapest with it, each option sized by
:func:`planner.decisions.fleet.size_option`, and the comparison of node types.

A quote is a view of the design-space search (:mod:`planner.decisions.search`): its configurations are the search's
points restricted to the node type, the quote's precision and the engine's own batch cap, without speculation and
with the quote's speculator (:func:`quote_space`), each built as the search builds it (the same layouts, PP 2 where
no TP layout holds the weights, the same draft lengths, the same α). Each layout is sized without the speculator and
with it at every draft length of the search's K axis (its deployment at that K), keeping the K that needs the
fewest nodes (a tie keeps the K first in order of promise: the K that pays most at the batch the layout's plain
replica runs, then by static speedup there; a K that provably cannot replace the best is cut short after one run,
``CannotBeat``). Speculation is chosen only where it meets the objectives and needs fewer GPUs (a tie keeps the
plain option). Each option of a node type is the cheapest over its layouts, so what speculation saves is counted
against the best the node type does without it, never against the speculative option's own layout. Layouts that
provably cannot beat an option already quoted are cut short (``CannotBeat``), option by option. Layouts and draft
lengths are sized most promising first (:func:`_in_order_of_promise`, :func:`_sizing_order`) so that the others are cut
short early, and ties keep the search's order and the order of promise, so the quote is the one sizing them in those
orders gives; ``exhaustive=True`` tries every layout and every K in full, in those orders, and gives the same quote
(tested). The search's own sizing of the same points
for the traffic (the recommendation on Explore) gives each node type's cheapest fleet the quote gives (tested).

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=4,
...                          draft=get_model("Llama-3.2-1B"))
>>> quote = fleet_quote(dep, Traffic(requests_per_s=5, prompt_tokens=1024, output_tokens=256, alpha=0.8))
>>> quote.without_speculation.meets_slo, quote.without_speculation.replicas >= 1, quote.without_speculation.tp
(True, True, 4)
"""

from __future__ import annotations

from pydantic import BaseModel

from planner import acceptance_math as spec
from planner.catalog.lookup import get_model, get_node, get_price
from planner.catalog.schemas import ModelSpec, NodeType
from planner.catalog.speculators import speculator_kind
from planner.decisions.fleet import QUOTE_REQUESTS, CannotBeat, cannot_beat, size_option
from planner.decisions.fleet_models import FleetOption, FleetQuote, Traffic
from planner.decisions.search.evaluate import Evaluator
from planner.decisions.search.points import SearchPoint, fleet_figures
from planner.decisions.search.space import DEFAULT_KS, Objectives, SearchSpace, SearchWorkload
from planner.decisions.search.speculators import Speculator, why_not_tried
from planner.decisions.side_by_side import side_by_side
from planner.deployment import Deployment, default_weight_format
from planner.engines.profiles import engine_profile, engine_release
from planner.errors import InputError, PlannerError
from planner.speed.estimate import SpeedWorkload
from planner.speed.replica_capacity import CAPACITY_OVER_CLOSED_LOOP
from planner.speed.result_cache import ResultCache
from planner.speed.simulate import check_fits
from planner.speed.speed_source import speed_source
from planner.speed.step_cache import replica_plan, speedup_by_k_cached
from planner.units import fmt_counted

#: The best quote per (model, node type, traffic, speculator, engine settings): a page that plans node type by node
#: type and then all of them together, or asks again after a widget change that leaves them alone, reuses it.
QUOTES = ResultCache(maxsize=256, name="quotes")


def _ks_by_promise(dep: Deployment, traffic: Traffic, batch: float, ks: tuple[int, ...]) -> list[int]:
    """The draft lengths ``ks`` (the search's K axis for the method) in order of promise: the one that pays most at
    the batch the plain replica runs (the optimal K of the step model) first, then by their static speedup there."""
    workload = SpeedWorkload.build(
        batch_size=max(1, round(batch)),
        prompt_tokens=traffic.prompt_tokens,
        output_tokens=traffic.output_tokens,
        alpha=traffic.alpha,
    )
    speedup = dict(speedup_by_k_cached(dep, workload))
    optimal = spec.optimal_of(speedup)  # the estimate's optimal K
    first = [optimal] if optimal in ks else []
    others = [k for k in ks if k not in first]
    return [*first, *sorted(others, key=lambda k: -speedup.get(k, 0.0))]


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
    """One layout's options for a quote: the replica without speculation and, where the quote speculates, with it
    at each draft length (``spec_deps``: the search's deployment of each K)."""

    __slots__ = (
        "alpha_note", "dep", "k", "k_place", "price", "price_source", "spec_dep", "spec_deps", "spec_error",
        "traffic", "with_spec", "without",
    )  # fmt: skip

    def __init__(self, dep: Deployment, traffic: Traffic, price, price_source: str, without: FleetOption) -> None:
        self.dep, self.traffic, self.price, self.price_source, self.without = dep, traffic, price, price_source, without
        self.spec_deps: dict[int, Deployment] = {}
        #: The deployment of the option with speculation (its K), or of the first K tried while none is quoted.
        self.spec_dep: Deployment | None = None
        self.with_spec: FleetOption | None = None
        self.k: int | None = None
        #: The place of ``k`` in order of promise (:func:`_ks_by_promise`).
        self.k_place = 0
        self.spec_error: str | None = None
        self.alpha_note = "no speculation"


def _price(dep: Deployment, traffic: Traffic) -> tuple[float | None, str]:
    """The $/GPU-hour of ``dep``'s GPU for a quote, and where it comes from."""
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
    return price, source


def _layout(
    view: _LayoutPoints,
    traffic: Traffic,
    beat_nodes: int | None,
    spec_beat_nodes: int | None,
    exhaustive: bool = False,
) -> _Layout:
    """Both options of one layout of the search (``fleet_quote`` explains the bounds)."""
    plain = view.plain
    if plain is None:
        raise view.error or PlannerError(f"no deployment at {view.where}", field="tp")
    price, source = _price(plain, traffic)
    # the option with speculation needs fewer than one node to beat a cheaper layout's: it is not wanted
    spec_wanted = view.speculates and (spec_beat_nodes is None or (spec_beat_nodes - 1) * plain.replicas_per_node >= 1)
    bounded = spec_wanted and beat_nodes is not None and spec_beat_nodes is not None
    if bounded and _cannot_beat_either(view, traffic, beat_nodes, spec_beat_nodes):
        raise CannotBeat  # neither option can replace the quoted ones: the plain one need not be sized in full
    try:  # searched in full when the option with speculation is wanted: the batch it runs at sets K
        without = size_option(plain, traffic, price, None, None if spec_wanted else beat_nodes)
    except PlannerError as exc:
        raise PlannerError(f"the target does not fit {plain.node_id or plain.gpu.id}: {exc}", field="node") from exc
    layout = _Layout(plain, traffic, price, source, without)
    if not spec_wanted:
        return layout
    if view.problem is not None or not view.deps:
        layout.spec_error = f"with the draft: {view.problem or 'no draft length to try'}"
        return layout
    speculator = view.speculator
    layout.traffic = traffic.model_copy(update={"alpha": speculator.alpha})
    name = view.deps[min(view.deps)].speculator_name
    layout.alpha_note = (
        f"α = {speculator.alpha:.2f} for {name} (your value)"
        if traffic.alpha is not None
        else f"α = {speculator.alpha:.2f} for {name} ({speculator.alpha_source}: {speculator.alpha_detail})"
    )
    layout.spec_deps = view.deps
    layout.spec_dep = view.deps[min(view.deps)]
    try:
        ks = _ks_by_promise(layout.spec_dep, layout.traffic, without.batch_size, tuple(view.deps))
    except PlannerError as exc:
        layout.spec_error = f"with the draft: {exc}"
        return layout
    errors: dict[int, str] = {}
    for k in ks if exhaustive else _sizing_order(ks, without, traffic):
        _size_k(layout, k, ks.index(k), spec_beat_nodes, exhaustive, errors)
    if layout.with_spec is None and errors:  # why the last draft length in order of promise could not be sized
        layout.spec_error = errors[max(errors)]
    return layout


def _sizing_order(ks: list[int], without: FleetOption, traffic: Traffic) -> list[int]:
    """The draft lengths ``ks`` (in order of promise) in the order they are sized: shortest first where the layout's
    replica without speculation is held back by its TTFT objective at under half its capacity (a lightly loaded
    replica waits for prefill, which a longer draft's step only delays; the most promising K assumes throughput
    counts), else in order of promise. Only the runs depend on it: a tie keeps the K first in order of promise."""
    if not without.meets_slo or traffic.ttft_slo_s is None or without.capacity_requests_per_s <= 0:
        return ks
    loaded = without.requests_per_s_per_replica / without.capacity_requests_per_s
    ttft = without.ttft_s / traffic.ttft_slo_s
    tpot = without.tpot_s / traffic.tpot_slo_s if traffic.tpot_slo_s is not None else 0.0
    return sorted(ks) if loaded < 0.5 and ttft > tpot else ks


def _cannot_beat_either(view: _LayoutPoints, traffic: Traffic, beat_nodes: int, spec_beat_nodes: int) -> bool:
    """Whether neither option of ``view`` can come under its bound: the replica without speculation misses the
    objectives on the largest fleet below ``beat_nodes`` nodes, and so does the one with it at every draft length
    below ``spec_beat_nodes`` (one run each, stopped once a miss is certain; a draft length that cannot run counts as
    missing, as sizing it would give no option). What spares a layout sized after a cheaper one its sizing in full."""
    if not cannot_beat(view.plain, traffic, None, beat_nodes):
        return False
    if view.problem is not None or view.speculator is None:
        return True
    spec_traffic = traffic.model_copy(update={"alpha": view.speculator.alpha})
    for k, dep in view.deps.items():
        try:
            check_fits(dep, replica_plan(dep, speculative=True))
            if not cannot_beat(dep, spec_traffic, k, spec_beat_nodes):
                return False
        except PlannerError:
            continue
    return True


def _size_k(
    layout: _Layout, k: int, place: int, spec_beat_nodes: int | None, exhaustive: bool, errors: dict[int, str]
) -> None:
    """The option with speculation at draft length ``k`` (``place`` in order of promise), kept when it is the first
    or needs fewer nodes than the option so far, or as few from a K earlier in order of promise (a tie keeps the more
    promising K, whatever order they are sized in); unless ``exhaustive`` (where the caller passes no
    ``spec_beat_nodes``), a K that provably cannot replace it is cut short (``CannotBeat``). Why a K cannot be sized
    goes to ``errors`` by its place."""
    best = layout.with_spec
    beat = spec_beat_nodes
    tie = None if exhaustive else _floor(best, place < layout.k_place)
    if tie is not None:
        beat = tie if beat is None else min(beat, tie)
    dep = layout.spec_deps[k]
    try:
        check_fits(dep, replica_plan(dep, speculative=True))
        option = size_option(dep, layout.traffic, layout.price, k, beat)
    except CannotBeat:
        return  # cannot replace an option with speculation already quoted
    except PlannerError as exc:
        errors[place] = f"with the draft: {exc}"
        return
    if best is None or _before(place, option, layout.k_place, best):
        layout.with_spec, layout.k, layout.k_place, layout.spec_error, layout.spec_dep = option, k, place, None, dep


class _LayoutPoints:
    """One layout of the search's points for a quote: the deployment without speculation and, where the quote
    speculates, the speculator and its deployment at each draft length; or why a deployment cannot be built (the
    layout's ``error``) or why the search does not speculate there (``problem``)."""

    __slots__ = ("deps", "error", "plain", "plain_point", "pp", "problem", "speculates", "speculator", "tp")

    def __init__(self, tp: int, pp: int, speculates: bool, problem: str | None) -> None:
        self.tp, self.pp, self.speculates, self.problem = tp, pp, speculates, problem
        self.plain: Deployment | None = None
        #: The search's point of ``plain``.
        self.plain_point: SearchPoint | None = None
        self.error: PlannerError | None = None
        self.speculator: Speculator | None = None
        self.deps: dict[int, Deployment] = {}

    @property
    def where(self) -> str:
        return f"TP {self.tp}" + (f" PP {self.pp}" if self.pp > 1 else "")


def _speculator_kind(draft: ModelSpec | None, method: str | None) -> str | None:
    """The search's method for a quote's speculation (None: the quote does not speculate)."""
    return speculator_kind(draft) if draft is not None else method


def _not_in_catalog(model: ModelSpec) -> bool:
    try:
        return get_model(model.id) != model
    except PlannerError:
        return True


def quote_space(
    target: ModelSpec, node: NodeType, traffic: Traffic, *, draft=None, tps=None, base=None, **fields
) -> Evaluator:
    """The design-space search restricted to what a quote of ``node`` compares: every layout the search tries (each
    TP the model admits, PP 2 where no TP layout holds the weights; ``tps`` to restrict them), the quote's precision
    and the engine's own batch cap, without speculation and with the quote's speculator (``draft``, or the
    draft-free ``method`` of ``fields``) at every draft length of the search's K axis. ``fields``: the ``engine``, its
    release (``engine_version``), ``dtype`` and ``kv_dtype`` (their defaults where absent). ``base``: a deployment
    whose other settings (engine release, memory fraction, token budget, batch cap) every point keeps
    (``SearchSpace.base``)."""
    engine = fields.pop("engine", None) or "vllm"
    release = fields.pop("engine_version", None)
    dtype = fields.pop("dtype", None) or default_weight_format(target)
    kv = fields.pop("kv_dtype", None) or "auto"
    kind = _speculator_kind(draft, fields.pop("method", None))
    if fields:
        name = next(iter(fields))
        raise InputError(
            name, fields[name], "a quote takes the draft, method, engine, engine_version, dtype and kv_dtype"
        )
    space = SearchSpace.build(
        target=target.id,
        nodes=(node.id,),
        engines=(engine,),
        methods=("none", kind) if kind else ("none",),
        ks=DEFAULT_KS,
        dtypes=(f"{dtype}:{kv}",),
        batch_caps=(base.max_num_seqs,) if base is not None and base.max_num_seqs else None,
        tps=tps,
        drafts=(draft.id,) if draft is not None else None,
        alpha=traffic.alpha,
        imported=tuple(m for m in (target, draft) if m is not None and _not_in_catalog(m)),
        base=base,
        engine_version=release,
    )
    workload = SearchWorkload(
        requests_per_s=traffic.requests_per_s, prompt_tokens=traffic.prompt_tokens, output_tokens=traffic.output_tokens
    )
    objectives = Objectives(ttft_slo_s=traffic.ttft_slo_s, tpot_slo_s=traffic.tpot_slo_s, percentile=traffic.percentile)
    return Evaluator(space, workload, objectives, view=True)


def _layouts(evaluator: Evaluator, draft: ModelSpec | None, method: str | None) -> list[_LayoutPoints]:
    """The search's points of a quote space grouped by layout, in the search's order (TP ascending, then PP 2)."""
    kind = _speculator_kind(draft, method)
    points = evaluator.points()
    speculator = next((sp for sp in evaluator.speculators_for(evaluator.space.engines[0]) if sp.method != "none"), None)
    problem = None
    if kind is not None and speculator is None:
        problem = why_not_tried(evaluator.target, evaluator.space.engines[0], draft, method)
    out: dict[tuple, _LayoutPoints] = {}
    for point in points:
        view = out.setdefault((point.tp, point.pp), _LayoutPoints(point.tp, point.pp, kind is not None, problem))
        try:
            dep = evaluator.deployment(point)
        except PlannerError as exc:
            if point.method == "none":
                view.error = exc
            elif view.problem is None:
                view.problem = str(exc)
            continue
        if point.method == "none":
            view.plain, view.plain_point = dep, point
        else:
            view.speculator = speculator
            view.deps[point.k] = dep
    return list(out.values())


def fleet_quote(
    dep: Deployment, traffic: Traffic, *, beat_nodes: int | None = None, spec_beat_nodes: int | None = None
) -> FleetQuote:
    """Nodes and cost to serve ``traffic`` with ``dep``'s layout (its draft, if any, for the speculative option):
    the quote's search restricted to that layout, around ``dep`` (its engine release, memory fraction and batch cap
    kept; its max model length the longest request).

    ``beat_nodes``: only an option without speculation that meets the objectives on fewer nodes is wanted; when
    it provably cannot, ``CannotBeat`` is raised as soon as that is known (unless the option with speculation is
    wanted: it is then searched in full, for the batch it runs at sets K). ``spec_beat_nodes`` likewise for the
    option with speculation, which is then left out (None)."""
    if dep.replicas_per_node < 1:
        raise InputError("tp", dep.tp, f"tp x pp at most the node's {dep.gpu_count} GPUs")
    check_context(dep.target, traffic)
    node = get_node(dep.node_id) if dep.node_id else None
    if node is None:
        raise InputError("node", None, "a deployment on a catalog node type (Deployment.on_node)")
    fields = {"engine": dep.engine, "dtype": dep.dtype, "kv_dtype": dep.kv_dtype, "method": dep.method}
    sized = dep.replace(max_model_len=max(traffic.prompt_tokens + traffic.output_tokens, 16))  # its other settings
    evaluator = quote_space(dep.target, node, traffic, draft=dep.draft, tps=(dep.tp,), base=sized, **fields)
    views = [v for v in _layouts(evaluator, dep.draft, dep.method) if v.pp == dep.pp]
    if not views:
        raise PlannerError(f"{dep.target.id} has no layout TP {dep.tp} PP {dep.pp} on {node.id}", field="tp")
    layout = _layout(views[0], traffic, beat_nodes, spec_beat_nodes)
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
                f"speculation does not pay here at this load (K {k}: {fmt_counted(with_spec.gpus, 'GPU')} against "
                f"{without.gpus} without the draft)"
            )
    traffic = spec.traffic
    notes.append(
        f"{spec.alpha_note}; requests of "
        f"{traffic.prompt_tokens} + {traffic.output_tokens} tokens; objectives {traffic.objectives()}; "
        f"each replica simulated with {QUOTE_REQUESTS} Poisson requests (prefill and decode share its GPUs)"
    )
    dep = spec.spec_dep if spec.spec_dep is not None else plain.dep
    step_source = speed_source(dep)
    notes.append(f"{dep.node_id or dep.gpu.id} step times: {step_source}")
    release = engine_release(dep.engine, dep.engine_version)
    notes.append(f"memory rules and engine defaults: {release}")
    return FleetQuote(
        node=dep.node_id or f"{dep.gpu_count}x {dep.gpu.id}",
        tp=with_spec.tp if chosen and with_spec is not None else without.tp,
        pp=with_spec.pp if chosen and with_spec is not None else without.pp,
        gpu=dep.gpu.id,
        gpus_per_node=dep.gpu_count,
        replicas_per_node=(spec.spec_dep if chosen and spec.spec_dep is not None else plain.dep).replicas_per_node,
        usd_per_gpu_hour=plain.price,
        price_source=plain.price_source,
        traffic=traffic,
        kv_concurrency_limit=replica_plan(plain.dep).max_concurrency,
        without_speculation=without,
        with_speculation=with_spec,
        speculation_chosen=chosen,
        savings_frac=savings,
        notes=notes,
        speed_source=step_source,
        engine_release=release,
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
    """The quote of ``target`` (+ ``draft``) on ``node`` for ``traffic``: of the quote's search (:func:`quote_space`),
    the cheapest layout without speculation and the cheapest with it, each its own (so what speculation saves is
    counted against the best the node type does without it, not against the speculative option's layout).

    The quote is that of sizing the search's layouts in its order (TP ascending), where a later layout replaces an
    option only when strictly cheaper (``exhaustive``: every layout in full); they are sized most promising first
    (:func:`_in_order_of_promise`), and once an option meets the objectives on ``B`` nodes, the same option of
    another layout is only searched while it could need fewer, or as few from a layout earlier in the search's
    order (which then replaces it). Layouts that do not fit are skipped. Raises a PlannerError naming the node when
    none fits. The answer is memoised per input.
    """
    return QUOTES.get_or_compute(
        _quote_key(target, node, traffic, draft=draft, exhaustive=exhaustive, **fields),
        lambda: _best_quote_on_node(target, node, traffic, draft=draft, exhaustive=exhaustive, **fields),
    )


def _quote_key(target, node, traffic: Traffic, *, draft=None, exhaustive: bool = False, **fields) -> tuple:
    """What :func:`best_quote_on_node` keeps its answer under (each input by its JSON or its repr)."""
    inputs = (target, node, traffic, draft, exhaustive, *sorted(fields.items()))
    return tuple(v.model_dump_json() if isinstance(v, BaseModel) else repr(v) for v in inputs)


def quote_is_kept(target, node, traffic: Traffic, **fields) -> bool:
    """Whether :func:`best_quote_on_node` (the same arguments) answers from what it kept."""
    return QUOTES.holds(_quote_key(target, node, traffic, **fields))


def _floor(option: FleetOption | None, earlier: bool = False) -> int | None:
    """The nodes another layout's option must come under to replace ``option`` (None: any layout may); one more for
    a layout ``earlier`` in the search's order, which replaces it at the same cost (:func:`_before`)."""
    return option.nodes + earlier if option is not None and option.meets_slo else None


def _best_quote_on_node(target, node, traffic: Traffic, *, draft, exhaustive: bool, **fields) -> FleetQuote:
    sized: list[tuple[int, _Layout]] = []  # (place in the search's order, layout)
    reasons: list[tuple[int, str]] = []
    plain: tuple[int, _Layout] | None = None  # the layout of the cheapest option without speculation so far
    spec: tuple[int, _Layout] | None = None  # and with it
    method = fields.get("method")
    speculates = _speculator_kind(draft, method) is not None
    try:
        evaluator = quote_space(target, node, traffic, draft=draft, **fields)
        views = _layouts(evaluator, draft, method)
    except PlannerError as exc:
        raise PlannerError(f"{target.id} cannot be planned on {node.id}: {exc}", field="node") from exc
    for i in range(len(views)) if exhaustive else _in_order_of_promise(evaluator, views, traffic):
        view = views[i]
        beat = None if exhaustive or plain is None else _floor(plain[1].without, i < plain[0])
        spec_beat = None if exhaustive or spec is None else _floor(spec[1].with_spec, i < spec[0])
        if beat == 1 and (not speculates or spec_beat == 1):
            continue  # one node each: this layout cannot need fewer, nor as few from later in the search's order
        try:
            layout = _layout(view, traffic, beat, spec_beat, exhaustive)
        except PlannerError as exc:
            reasons.append((i, f"{view.where}: {exc}"))
            continue
        except CannotBeat:
            continue
        sized.append((i, layout))
        if plain is None or _before(i, layout.without, plain[0], plain[1].without):
            plain = (i, layout)
        option = layout.with_spec
        if option is not None and (spec is None or _before(i, option, spec[0], spec[1].with_spec)):
            spec = (i, layout)
    if plain is None:
        last = max(reasons)[1] if reasons else "no TP"
        raise PlannerError(f"{target.id} fits no layout of {node.id}: {last}", field="node")
    if spec is None:  # no option with speculation: the first layout in the search's order that says why
        spec = next((entry for entry in sorted(sized, key=lambda entry: entry[0]) if entry[1].spec_error), plain)
    return _quote(plain[1], spec[1])


def _before(place: int, option: FleetOption, best_place: int, best: FleetOption) -> bool:
    """Whether ``option``, at ``place`` in its order (a layout's in the search's order, a K's in order of promise),
    replaces ``best`` (at ``best_place``): cheaper, or as cheap from earlier in that order, so the quote is the one
    that sizing them in that order gives, whatever order they are sized in."""
    return (_option_key(option), place) < (_option_key(best), best_place)


def _in_order_of_promise(evaluator: Evaluator, views: list[_LayoutPoints], traffic: Traffic) -> list[int]:
    """The places of ``views`` in the search's order, most promising first, so that the cheapest layout is likely
    sized first and the others are cut short against it (a layout's runs, not the quote, depend on this order).
    A layout's promise is read from its replica without speculation at the search's screen (its closed loop at the
    batch cap, :meth:`Evaluator.screen`): the nodes of the fewest replicas that could carry the traffic at
    ``CAPACITY_OVER_CLOSED_LOOP`` times that rate, then the share of those nodes' closed-loop rate the traffic
    takes (the more room left, the likelier the latency objectives hold there), then the search's order. Layouts
    with no screen (no deployment, or one that does not fit) come last, so that their reasons are known."""

    def promise(i: int) -> tuple:
        point = views[i].plain_point
        if point is not None:
            evaluator.plan(point)
            evaluator.screen(point)
        rate = point.replica_requests_per_s if point is not None else None
        if not rate:
            return (True, 0, 0.0, i)
        per_node = point.gpus_per_node // point.gpus_per_replica
        fleet = fleet_figures(
            requests_per_s=traffic.requests_per_s,
            concurrency=None,
            mean_output_tokens=traffic.output_tokens,
            replica_requests_per_s=CAPACITY_OVER_CLOSED_LOOP * rate,
            replica_output_tok_s=CAPACITY_OVER_CLOSED_LOOP * rate * traffic.output_tokens,
            replicas_for_concurrency=None,
            replicas_per_node=per_node,
            gpu_count=point.gpus_per_node,
            usd_per_gpu_hour=None,
        )
        return (False, fleet.nodes, traffic.requests_per_s / (fleet.nodes * per_node * rate), i)

    return sorted(range(len(views)), key=promise)


def compare_nodes(
    target, nodes, traffic: Traffic, *, draft=None, workers: int | None = None, **fields
) -> tuple[list[FleetQuote], list[str]]:
    """The best quote on each node type, cheapest first, and the node types that cannot serve the model
    (``fields`` as :func:`best_quote_on_node` takes them, ``exhaustive`` included). The node types not quoted yet
    are quoted side by side in ``workers`` processes (:mod:`planner.decisions.side_by_side`; None: one per CPU);
    the answer is the same."""
    check_context(target, traffic)
    if fields.get("engine_version") is not None:  # a release the engine never had is the request's fault, not a node's
        engine_profile(fields.get("engine") or "vllm", fields["engine_version"])

    def quote(node) -> FleetQuote:
        return best_quote_on_node(target, node, traffic, draft=draft, **fields)

    def kept(node) -> bool:
        return quote_is_kept(target, node, traffic, draft=draft, **fields)

    answers = dict(side_by_side(quote, nodes, group=lambda node: node.gpu, workers=workers, kept=kept))
    quotes, unusable = [], []
    for _, answer in sorted(answers.items()):  # in the order of nodes
        if isinstance(answer, PlannerError):
            unusable.append(str(answer))
        else:
            quotes.append(answer)
    return sorted(quotes, key=_cost_key), unusable
