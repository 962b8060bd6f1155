"""Traffic → replicas → nodes → cost of one option (a layout with or without speculation), from the serving simulator.

A replica receives ``rate / replicas`` Poisson requests (the load balancer splits traffic evenly).
The planner simulates one replica (``planner.speed.simulate``: continuous batching, chunked prefill,
the KV cache of the memory plan, the engine's request caps; prefill and decode share the GPUs) and
takes the fewest replicas at which the chosen percentile of TTFT and of TPOT meet their objectives
(MLPerf-style presets: Server 2 s / 200 ms, Interactive 450 ms / 40 ms, both at p99). The search
starts at ``rate / capacity`` replicas, the replica's saturated steady-state throughput
(``planner.speed.replica_capacity``; without a TTFT objective the quote sizes there). Then
``nodes = ceil(replicas / replicas_per_node)`` and the cost is nodes × GPUs × $/GPU-hour (data/prices.json, dated
and editable).

An option that misses an objective at every fleet size searched lists each miss and by how much
(``ObjectiveMiss``); the doubling stops early at the latency floor (a doubled fleet improves no missed
percentile by more than ``FLOOR_GAIN_FRAC``: more replicas cannot help). A node type's quote (its cheapest layout
with and without speculation) is :mod:`planner.decisions.fleet_quotes`; :func:`recommend_fleet` then names the
cheapest option that meets every objective, keeps the options that miss apart (nearest miss first) and computes
what speculation saves only between options that meet the objectives.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=4)
>>> option = size_option(dep, Traffic(requests_per_s=5, prompt_tokens=1024, output_tokens=256), 2.0, None)
>>> option.meets_slo, option.tp, option.gpus == option.nodes * 8
(True, 4, True)
"""

from __future__ import annotations

from collections.abc import Callable
from math import ceil, log

from planner.decisions.fleet_models import HOURS_PER_MONTH, FleetOption, ObjectiveMiss, Traffic
from planner.deployment import Deployment
from planner.errors import PlannerError
from planner.speed.latency_floor import LatencyFloor, beyond_floor, floor_share, latency_floor_s
from planner.speed.objective_watch import ObjectiveWatch
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import ServingMetrics, draft_shape
from planner.speed.step_cache import (
    PARTS,
    offline_capacity_cached,
    replica_capacity_cached,
    simulate_one_cached,
    simulate_one_unless_missed,
)
from planner.units import fmt_counted, fmt_objective_miss

#: Requests simulated per replica and candidate count (enough for a stable p99 at a few seconds of load).
QUOTE_REQUESTS = 400
#: The most replicas a quote searches above the capacity bound before it reports the objective unmet.
MAX_REPLICA_FACTOR = 64
#: A fleet whose replicas each carry less than this share of their capacity says why: how close a request served
#: alone already comes to the objective that binds (the latency floor, :mod:`planner.speed.latency_floor`).
LIGHT_LOAD_FRAC = 0.25
#: What an option's ``limited_by`` says, followed by why, when no fleet of it meets the objectives.
AT_ANY_FLEET_SIZE = " at any fleet size: "
#: A doubled fleet that improves every missed percentile by less than this has reached the latency floor.
FLOOR_GAIN_FRAC = 0.02


def quoted_workload(traffic: Traffic, dataset: str = "fixed", seed: int = 0, **arrivals) -> ServingWorkload:
    """What one replica of a quoted option is simulated with: ``QUOTE_REQUESTS`` requests of ``traffic``'s lengths
    (or drawn from ``dataset``, draw ``seed``), arriving as ``arrivals`` says. Its lengths are the same at every
    fleet size; only the rate changes.

    >>> quoted_workload(Traffic(requests_per_s=2, prompt_tokens=512, output_tokens=64), request_rate=0.5).describe()
    '400 requests of 512 + 64 tokens, Poisson arrivals at 0.5 req/s'
    """
    lengths = (
        {"prompt_tokens": traffic.prompt_tokens, "output_tokens": traffic.output_tokens}
        if dataset == "fixed"
        else {"dataset": dataset}
    )
    return ServingWorkload.build(num_prompts=QUOTE_REQUESTS, seed=seed, **lengths, **arrivals)


class ReplicaSearch:
    """Simulate one replica at ``rate / n`` for candidate replica counts ``n`` (memoised)."""

    def __init__(
        self,
        dep: Deployment,
        traffic: Traffic,
        alpha: float | None,
        k: int | None,
        dataset: str = "fixed",
        seed: int = 0,
    ) -> None:
        self.dep, self.traffic, self.alpha, self.k = dep, traffic, alpha, k
        self.dataset = dataset
        #: The draw of the traffic simulated (its arrivals, and its lengths when drawn from a dataset).
        self.seed = seed
        self.runs: dict[int, ServingMetrics] = {}
        #: :meth:`floor`'s answer once computed, in a one-element tuple.
        self._floor: tuple[LatencyFloor | None] | None = None

    def workload(self, **arrivals) -> ServingWorkload:
        return quoted_workload(self.traffic, self.dataset, self.seed, **arrivals)

    def capacity(self) -> ServingMetrics:
        return replica_capacity_cached(self.dep, self.workload(offline=True), alpha=self.alpha, k=self.k)

    def fewest(self) -> int:
        """The fewest replicas that can carry the traffic: :func:`capacity_bound` at the replica's capacity."""
        return capacity_bound(self.traffic.requests_per_s, self.capacity().steady_requests_per_s)

    def most(self) -> int:
        """The most replicas the sizing tries (``MAX_REPLICA_FACTOR`` times :meth:`fewest`): its lightest load."""
        return self.fewest() * MAX_REPLICA_FACTOR

    def at_least_most(self) -> int:
        """A count at least :meth:`most`, from the capacity's first run alone (every request at once,
        :func:`planner.speed.replica_capacity.offline_capacity`): its rate is at most the capacity, the highest of it
        and one more run."""
        first = offline_capacity_cached(self.dep, self.workload(offline=True), alpha=self.alpha, k=self.k)
        if not first.steady_requests_per_s > 0:
            return self.most()
        return capacity_bound(self.traffic.requests_per_s, first.steady_requests_per_s) * MAX_REPLICA_FACTOR

    @classmethod
    def for_option(cls, dep: Deployment, traffic: Traffic, k: int | None, dataset: str = "fixed") -> ReplicaSearch:
        """The search of an option as :func:`size_option` sizes it: without speculation when ``k`` is None, else at
        draft length ``k`` with ``traffic.alpha``."""
        return cls(dep, traffic, traffic.alpha if k is not None else None, k, dataset)

    def floor(self) -> LatencyFloor | None:
        """The latency floor of this option's replica (:mod:`planner.speed.latency_floor`: the objectives'
        percentile of its requests, each served alone), computed once; None without objectives or where the replica
        cannot be built (the sizing's runs say why, in their own words)."""
        t = self.traffic
        if t.ttft_slo_s is None and t.tpot_slo_s is None:
            return None
        if self._floor is None:
            self._floor = (self._priced_floor(),)
        return self._floor[0]

    def _priced_floor(self) -> LatencyFloor | None:
        speculative = self.alpha is not None and self.dep.is_speculative
        try:
            engine, plan = PARTS.get(self.dep if speculative else self.dep.without_draft(), speculative, None)
        except PlannerError:
            return None
        shape = draft_shape(self.dep, self.k) if speculative else None
        prompts, outputs = self.workload(offline=True).lengths()
        budget = plan.limits.max_num_batched_tokens
        return latency_floor_s(engine, shape, self.alpha, prompts, outputs, budget, self.traffic.percentile)

    def out_of_reach(self) -> str | None:
        """Why no fleet of this option's replicas can meet the objectives, where one lies below the latency floor of
        its replica (:meth:`floor`); else None."""
        floor_s, t = self.floor(), self.traffic
        return beyond_floor(floor_s, t.ttft_slo_s, t.tpot_slo_s, t.percentile) if floor_s is not None else None

    def workload_at(self, n: int) -> ServingWorkload:
        """What one of ``n`` replicas is offered: ``rate / n`` Poisson requests."""
        return self.workload(request_rate=self.traffic.requests_per_s / n)

    def at(self, n: int) -> ServingMetrics:
        if n not in self.runs:
            self.runs[n] = simulate_one_cached(self.dep, self.workload_at(n), alpha=self.alpha, k=self.k)
        return self.runs[n]

    def misses_at(self, n: int) -> bool:
        """Whether ``n`` replicas miss an objective: :meth:`at`'s answer, from a run that stops as soon as a miss is
        certain where none at ``n`` is kept yet (:func:`planner.speed.step_cache.simulate_one_unless_missed`; a run
        that completes is kept for :meth:`at`)."""
        if n not in self.runs:
            t = self.traffic
            watch = ObjectiveWatch(t.ttft_slo_s, t.tpot_slo_s, t.percentile)
            run = simulate_one_unless_missed(self.dep, self.workload_at(n), watch, alpha=self.alpha, k=self.k)
            if run is None:
                return True
            self.runs[n] = run
        return bool(self.objective_misses(self.runs[n]))

    def _checked(self, run: ServingMetrics) -> list[tuple[str, float, float]]:
        """(TTFT or TPOT, ``run``'s percentile, its limit) of each objective set, met or not."""
        t, pct = self.traffic, self.traffic.percentile
        checked = []
        if t.ttft_slo_s is not None:
            checked.append(("TTFT", run.ttft_at(pct), t.ttft_slo_s))
        if t.tpot_slo_s is not None:
            checked.append(("TPOT", run.tpot_at(pct), t.tpot_slo_s))
        return checked

    def objectives(self, run: ServingMetrics) -> list[ObjectiveMiss]:
        """Each objective set, with ``run``'s percentile beside its limit (met or not)."""
        pct = self.traffic.percentile
        return [
            ObjectiveMiss(objective=f"p{pct:g} {kind}", value_s=value_s, limit_s=limit_s)
            for kind, value_s, limit_s in self._checked(run)
        ]

    def objective_misses(self, run: ServingMetrics) -> list[ObjectiveMiss]:
        return [m for m in self.objectives(run) if m.value_s > m.limit_s]

    def misses(self, run: ServingMetrics) -> list[str]:
        """Each objective ``run`` misses, in words (:func:`planner.units.fmt_objective_miss`)."""
        pct = self.traffic.percentile
        return [fmt_objective_miss(kind, v, limit, pct) for kind, v, limit in self._checked(run) if v > limit]

    def margin(self, n: int) -> float:
        """How far ``n`` replicas are from the objectives: ``log(value / limit)`` of the worst one (> 0: a miss)."""
        ratios = [m.value_s / m.limit_s for m in self.objectives(self.at(n))]
        return log(max(*ratios, 1e-12)) if ratios else 0.0

    def probe(self, miss: int, hit: int) -> int:
        """The count to try between a count that misses (``miss``) and one that meets the objectives (``hit``):
        where the worst objective's log margin, interpolated linearly between them, crosses zero (regula falsi),
        rounded up and kept strictly inside the bracket. The bracket and its answer are the bisection's (for
        objectives that ease as replicas are added); only the counts tried differ.

        >>> s = ReplicaSearch.__new__(ReplicaSearch)
        >>> s.margin = lambda n: (100 - n) / 100  # the objectives are met from 100 replicas on
        >>> s.probe(60, 160)
        100
        """
        m_miss, m_hit = self.margin(miss), self.margin(hit)
        if not m_miss > 0 >= m_hit:
            return (miss + hit) // 2
        x = miss + (hit - miss) * m_miss / (m_miss - m_hit)
        return min(hit - 1, max(miss + 1, ceil(x - 1e-9)))

    def gallop_down(self, miss: int, hit: int) -> tuple[int, int]:
        """A bracket (a count that misses, one that meets) inside (``miss``, ``hit``], found from ``hit`` down in
        steps that double (1, 2, 4, …), so an answer near ``hit`` costs a few runs: where a cheaper option already
        quoted shows how many replicas this one needs about, and ``hit`` is a count known to meet the objectives.

        >>> s = ReplicaSearch.__new__(ReplicaSearch)
        >>> s.at, s.misses = (lambda n: n), (lambda n: n < 100)  # the objectives are met from 100 replicas on
        >>> s.gallop_down(30, 103)
        (96, 100)
        """
        step = 1
        while hit - step > miss:
            if self.misses(self.at(hit - step)):
                return hit - step, hit
            hit, step = hit - step, step * 2
        return miss, hit

    def at_floor(self, fewer: int, more: int) -> bool:
        """True when ``more`` replicas improve no missed percentile of ``fewer`` by ``FLOOR_GAIN_FRAC``."""
        before = {m.objective: m.value_s for m in self.objective_misses(self.at(fewer))}
        after = {m.objective: m.value_s for m in self.objective_misses(self.at(more))}
        return all(name in after and after[name] > before[name] * (1 - FLOOR_GAIN_FRAC) for name in before)


def first_count_that_meets(
    search: ReplicaSearch, miss: int, hit: int, check_bound: Callable[[int], None] = lambda replicas: None
) -> int:
    """The first count that meets the objectives between ``miss`` (a count that misses) and ``hit`` (one that meets):
    interpolated probes while they halve the bracket (:meth:`ReplicaSearch.probe`), then bisection; ``check_bound``
    after each miss (``size_option``'s ``CannotBeat``). A probe the interpolation put next to an end of the bracket
    (the objective nearly met at ``miss``, or barely at ``hit``) that lands on that end's side says the answer is near
    it: the next counts step away from that end by 2, 4, 8, … (never past the bracket's middle) until one lands on the
    other side, then bisection. Only the counts tried differ: for objectives that ease as replicas are added, every
    order of tries settles on the same count.

    >>> s = ReplicaSearch.__new__(ReplicaSearch)
    >>> tried = []
    >>> s.at = lambda n: tried.append(n) or n
    >>> s.misses = lambda n: ["p99 TTFT"] if n < 486 else []  # the objectives are met from 486 replicas on
    >>> s.probe = lambda miss, hit: miss + 1  # the interpolation points at the low end
    >>> first_count_that_meets(s, 480, 960), tried
    (486, [481, 483, 487, 485, 486])
    """
    interpolate = True
    gallop = 0  # the step away from the end the interpolation pointed at (+ up from a miss, − down from a hit)
    while hit - miss > 1:
        width, middle = hit - miss, (miss + hit) // 2
        if gallop > 0:
            mid = min(miss + gallop, middle)
        elif gallop < 0:
            mid = max(hit + gallop, middle)
        else:
            mid = search.probe(miss, hit) if interpolate else middle
        missed = bool(search.misses(search.at(mid)))
        if interpolate and not gallop and 2 * ((hit - mid) if missed else (mid - miss)) > width:
            interpolate = False  # the probe failed to halve the bracket: next to its end, gallop; else bisect
            gallop = 2 if missed and mid == miss + 1 else -2 if not missed and mid == hit - 1 else 0
        elif gallop and missed == (gallop > 0):
            gallop *= 2  # still on the side it stepped from
        else:
            gallop = 0
        miss, hit = (mid, hit) if missed else (miss, mid)
        check_bound(miss + 1)
    return hit


class CannotBeat(Exception):  # noqa: N818 (a signal, never shown to a user)
    """The option (or layout) needs at least the nodes of a cheaper layout already quoted: it cannot be chosen."""


def misses_below(search: ReplicaSearch, beat_nodes: int) -> bool:
    """Whether ``search``'s option provably needs ``beat_nodes`` nodes or more: its largest fleet below them misses
    the objectives (one run, stopped as soon as the miss is certain), and fewer replicas miss them too (the
    bisection's own assumption). What :func:`size_option` checks first, before any capacity run."""
    most = (beat_nodes - 1) * search.dep.replicas_per_node
    return most < 1 or search.misses_at(most)


def cannot_beat(dep: Deployment, traffic: Traffic, k: int | None, beat_nodes: int, *, dataset: str = "fixed") -> bool:
    """:func:`misses_below` for an option :func:`size_option` would size (the same arguments): True where sizing it
    against ``beat_nodes`` would raise ``CannotBeat`` at once, found without its capacity runs."""
    if traffic.ttft_slo_s is None and traffic.tpot_slo_s is None:
        return False
    return misses_below(ReplicaSearch.for_option(dep, traffic, k, dataset), beat_nodes)


def misses_at_every_count(dep: Deployment, traffic: Traffic, k: int | None, *, dataset: str = "fixed") -> bool:
    """Whether the option :func:`size_option` would size (the same arguments) misses the objectives at the lightest
    load its sizing tries (:meth:`ReplicaSearch.most` replicas), found from its capacity runs and one run stopped as
    soon as the miss is certain. Then it misses at every count the sizing tries, as fewer replicas miss too (the
    bisection's own assumption), and its sizing would end in a miss: what the design-space search checks before it
    sizes a candidate while no candidate has met the objectives, where each miss sized in full costs a run per
    doubling of the fleet. A miss at :meth:`ReplicaSearch.at_least_most` replicas, a load no heavier, says so without
    the capacity's other two runs."""
    if traffic.ttft_slo_s is None and traffic.tpot_slo_s is None:
        return False
    search = ReplicaSearch.for_option(dep, traffic, k, dataset)
    if search.out_of_reach() is not None or search.misses_at(search.at_least_most()):
        return True
    return search.misses_at(search.most())


def capacity_bound(requests_per_s: float, capacity_requests_per_s: float) -> int:
    """The fewest replicas of ``capacity_requests_per_s`` each that cover ``requests_per_s`` (at least one): the
    bound below which no count serves the traffic, whatever the latency percentiles say.

    >>> capacity_bound(20, 10.35), capacity_bound(21, 10.5), capacity_bound(0.5, 10)
    (2, 2, 1)
    """
    return max(1, ceil(requests_per_s / capacity_requests_per_s))


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
    doubling and the bisection only move up from a miss), so its cost can no longer be below that bound. When that
    largest fleet meets the objectives, the answer is searched down from it (:meth:`ReplicaSearch.gallop_down`): the
    same count for objectives that ease as replicas are added, from a few runs where the bound came from a similar
    option.
    """
    speculate = k is not None
    search = ReplicaSearch.for_option(dep, traffic, k, dataset)
    out_of_reach = search.out_of_reach()
    if out_of_reach is not None and beat_nodes is not None:
        raise CannotBeat  # no fleet of it meets the objectives: never chosen over an option that meets them
    known_hit: int | None = None  # a count known to meet the objectives
    if beat_nodes is not None and (traffic.ttft_slo_s is not None or traffic.tpot_slo_s is not None):
        # the largest fleet that could still beat the bound: missing there, it misses with fewer replicas too (as the
        # bisection below assumes), so one run rules the option out before its capacity runs
        if misses_below(search, beat_nodes):
            raise CannotBeat
        known_hit = (beat_nodes - 1) * dep.replicas_per_node
    capacity = search.capacity()
    low = search.fewest()

    def check_bound(replicas_at_least: int) -> None:
        if beat_nodes is not None and ceil(replicas_at_least / dep.replicas_per_node) >= beat_nodes:
            raise CannotBeat

    check_bound(low)
    high = search.most()
    n, meets, floor = low, True, False
    if out_of_reach is not None:  # figures at the lightest load the search would try
        n, meets = high, False
    elif search.misses(search.at(low)) and known_hit is not None and low < known_hit <= high:
        # the bound's own run met the objectives, so every count above it does: the answer lies below it, near the
        # cheaper option's count where the two options are alike
        miss, hit = search.gallop_down(low, known_hit)
        n = first_count_that_meets(search, miss, hit, check_bound)
    elif search.misses(search.at(low)):
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
            n = first_count_that_meets(search, miss, hit, check_bound)
    run = search.at(n)
    if out_of_reach is not None:
        reason = f"cannot meet {traffic.objectives()}{AT_ANY_FLEET_SIZE}{out_of_reach}"
    elif not meets and floor:
        reason = (
            f"cannot meet {traffic.objectives()}{AT_ANY_FLEET_SIZE}at {fmt_counted(n, 'replica')} "
            f"{', '.join(search.misses(run))}, and doubling the fleet improves it by under {FLOOR_GAIN_FRAC:.0%}"
        )
    elif not meets:
        reason = f"cannot meet {traffic.objectives()} even at {high} replicas: {', '.join(search.misses(run))}"
    elif n == low:
        reason = f"replica capacity ({capacity.steady_requests_per_s:.2f} req/s, {capacity.held_back_by()})"
    else:
        fewer = search.at(n - 1)
        reason = "objective at one replica fewer: " + ", ".join(search.misses(fewer))
        load_frac = traffic.requests_per_s / n / capacity.steady_requests_per_s
        missed, floor_s = search.objective_misses(fewer), search.floor()
        if load_frac < LIGHT_LOAD_FRAC and missed and floor_s is not None:  # why so many replicas, in the floor's words
            kind = missed[0].objective.split()[-1]
            share = floor_share(floor_s, kind, missed[0].limit_s, traffic.percentile)
            reason += f"; {share}, so each replica runs at {load_frac:.0%} of its capacity"
    replicas = n
    nodes = ceil(replicas / dep.replicas_per_node)
    gpus = nodes * dep.gpu_count
    per_hour = gpus * price if price else None
    tokens_per_hour = traffic.requests_per_s * traffic.output_tokens * 3600
    pct = traffic.percentile
    return FleetOption(
        speculation=speculate,
        tp=dep.tp,
        pp=dep.pp,
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
