"""The recommendation at a request rate: the configurations that meet the objectives, sized for the traffic the way a
fleet quote sizes each of its options, cheapest first.

A point's fleet figures are those of replicas loaded to their batch cap (a closed loop), the operating point the
frontier charts draw. Requests that arrive at random do not keep a replica at that point: at the replica count that
carries the rate at full load, requests queue, and a TTFT objective can need twice the replicas. So at a request rate
``R`` the recommendation is sized as :func:`planner.decisions.fleet.size_option` sizes a quote's option: the fewest
replicas ``n`` at which one replica offered ``R / n`` Poisson requests meets the objectives at their percentile
(starting from the replica's saturated capacity). The same configuration then gets the same fleet in the search, on
Explore, on Fleet & Quote and in ``python -m planner quote``.

Candidates are every point that fits and would start, whether or not it meets the objectives at its batch cap: a
replica offered its share of the rate runs fewer requests at once than its cap, so a configuration too slow at full
load can meet the objectives once sized (and be the cheapest that does). They are taken in order of the least their
sized fleet can cost: a fleet carries ``R`` only if each replica's capacity does, and a saturated replica's capacity
is at most ``CAPACITY_OVER_CLOSED_LOOP`` times what it serves at its batch cap (widened to what the candidates sized
so far showed), so ``replicas ≥ ceil(R / (that · closed-loop requests/s))``. A candidate the search did not simulate
is ordered by its screen, corrected as the frontiers' search corrects it, and simulated when its turn comes, unless
its sizing would stop at once against the best fleet so far (:func:`cannot_beat_point`: one run, no closed loop). Sizing
stops when no candidate's bound is below the best fleet found, and a candidate is dropped as soon as its own sizing
proves it cannot be cheaper (``CannotBeat``): the answer is the one sizing every point that fits gives (a test
checks it on a small space); ties go to the candidate met first (at equal bounds, the cheaper at full load). A
candidate whose latency floor an objective lies below (:func:`beyond_reach`: the objectives' percentile of the
requests its sizing draws, each served alone) is not sized at all, as no fleet of it can meet that objective. Once a
candidate sized in full has missed the objectives and none has met them, the next is sized only if it meets them at
the lightest load its sizing would try (:func:`misses_everywhere`: its capacity runs and one run stopped at a certain
miss), where a miss sized in full costs a run per doubling of its fleet; the answer then names what the first one
reached.

>>> from planner.decisions.search.space import Objectives, SearchSpace, SearchWorkload
>>> from planner.decisions.search.run import search
>>> space = SearchSpace.build(target="Llama-3.1-8B", nodes=("1x-h100-sxm-80gb",), methods=("none",),
...                           dtypes=("bf16",), batch_caps=(8, 64))
>>> result = search(space, SearchWorkload(requests_per_s=5, prompt_tokens=512, output_tokens=128),
...                 Objectives(ttft_slo_s=0.5))
>>> result.recommended_fleet.meets_slo, result.recommended_fleet.replicas >= result.recommended.replicas
(True, True)
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from math import ceil

from planner.catalog.lookup import default_usd_per_gpu_hour
from planner.decisions.fleet import CannotBeat, cannot_beat, misses_at_every_count, quoted_workload, size_option
from planner.decisions.fleet_models import FleetOption, Traffic
from planner.decisions.search.evaluate import Evaluator
from planner.decisions.search.frontier import cheapest_key
from planner.decisions.search.points import SearchPoint, fleet_figures
from planner.decisions.speed_margins import SpeedMargin, speed_margin
from planner.decisions.traffic_draws import CountAcrossDraws, count_across_draws
from planner.defaults import TRAFFIC_DRAWS
from planner.errors import PlannerError
from planner.speed.latency_floor import beyond_floor
from planner.speed.replica_capacity import CAPACITY_OVER_CLOSED_LOOP


@dataclass
class TrafficSizing:
    """The cheapest candidate once sized for the traffic (None when none meets the objectives at any fleet size), its
    fleet, and how many candidates were sized."""

    point: SearchPoint | None
    fleet: FleetOption | None
    sized: int
    #: How the recommendation was sized and what that changed, in words (set by the search).
    note: str = ""
    #: Candidates no fleet of which can meet an objective (below their latency floor), and the one whose floor lies
    #: nearest the objectives with why, in the floor's words (None when there is none).
    out_of_reach: int = 0
    nearest_out_of_reach: tuple[SearchPoint, str] | None = None
    #: The first candidate sized in full that missed the objectives at every fleet size tried, and its fleet (None
    #: when none did): while no candidate met them, the rest were ruled out from one run at their lightest load.
    first_miss: tuple[SearchPoint, FleetOption] | None = None


def traffic_of(ev: Evaluator, point: SearchPoint) -> Traffic:
    """The quote's traffic for ``point``: the search's rate, mean lengths and objectives, the point's α."""
    workload, objectives = ev.workload, ev.objectives
    return Traffic(
        requests_per_s=workload.requests_per_s,
        prompt_tokens=max(1, round(workload.mean_prompt_tokens)),
        output_tokens=max(1, round(workload.mean_output_tokens)),
        ttft_slo_s=objectives.ttft_slo_s,
        tpot_slo_s=objectives.tpot_slo_s,
        percentile=objectives.percentile,
        alpha=point.alpha,
    )


def beyond_reach(ev: Evaluator, point: SearchPoint) -> tuple[float, str] | None:
    """Where an objective lies below ``point``'s latency floor (by more than the floor's slack) on the requests
    :func:`size_point` would simulate (:func:`planner.decisions.fleet.quoted_workload`), how far (the floor over
    the objective) and why in words: no fleet of its replicas can meet it, so none is sized for the traffic. None
    where the objectives are within reach. Needs a plan that fits and starts."""
    objectives = ev.objectives
    if objectives.ttft_slo_s is None and objectives.tpot_slo_s is None:
        return None
    prompts, outputs = quoted_workload(traffic_of(ev, point), ev.workload.dataset, offline=True).lengths()
    floor_s = ev.latency_floor_s(point, prompts, outputs)
    why = beyond_floor(floor_s, objectives.ttft_slo_s, objectives.tpot_slo_s, objectives.percentile)
    return None if why is None else (floor_s.over(objectives.ttft_slo_s, objectives.tpot_slo_s), why)


def cannot_beat_point(ev: Evaluator, point: SearchPoint, beat_nodes: int) -> bool:
    """Whether sizing ``point`` against ``beat_nodes`` would raise ``CannotBeat`` at once (its largest fleet below
    them misses the objectives): :func:`planner.decisions.fleet.cannot_beat` of what :func:`size_point` sizes."""
    return cannot_beat(ev.deployment(point), traffic_of(ev, point), point.k, beat_nodes, dataset=ev.workload.dataset)


def misses_everywhere(ev: Evaluator, point: SearchPoint) -> bool:
    """Whether :func:`size_point` would find ``point`` missing the objectives at every fleet size it tries
    (:func:`planner.decisions.fleet.misses_at_every_count`: its capacity runs and one run at the lightest load)."""
    return misses_at_every_count(ev.deployment(point), traffic_of(ev, point), point.k, dataset=ev.workload.dataset)


def size_point(ev: Evaluator, point: SearchPoint, beat_nodes: int | None = None) -> FleetOption:
    """``point``'s configuration sized for the search's request rate as a quote sizes an option (``CannotBeat`` once it
    provably needs ``beat_nodes`` nodes or more)."""
    return size_option(
        ev.deployment(point),
        traffic_of(ev, point),
        default_usd_per_gpu_hour(point.gpu),
        point.k,
        beat_nodes,
        dataset=ev.workload.dataset,
    )


def sizing_across_draws(ev: Evaluator, sizing: TrafficSizing, draws: int = TRAFFIC_DRAWS) -> CountAcrossDraws | None:
    """The recommendation's fleet sized again on other draws of the traffic (:mod:`planner.decisions.traffic_draws`);
    None where nothing was sized or its fleet misses the objectives."""
    if sizing.point is None or sizing.fleet is None or not sizing.fleet.meets_slo:
        return None
    point = sizing.point
    return count_across_draws(
        ev.deployment(point), traffic_of(ev, point), sizing.fleet, draws, dataset=ev.workload.dataset
    )


def sizing_speed_margin(ev: Evaluator, sizing: TrafficSizing) -> SpeedMargin | None:
    """How much slower than estimated the recommendation's fleet may be (:mod:`planner.decisions.speed_margins`);
    None where nothing was sized or its fleet misses the objectives."""
    if sizing.point is None or sizing.fleet is None or not sizing.fleet.meets_slo:
        return None
    point = sizing.point
    return speed_margin(ev.deployment(point), traffic_of(ev, point), sizing.fleet, dataset=ev.workload.dataset)


def _cost(fleet: FleetOption) -> tuple[bool, float]:
    """Priced fleets before unpriced ones, then dollars per hour (GPUs where there is no price)."""
    return (fleet.usd_per_hour is None, fleet.usd_per_hour if fleet.usd_per_hour is not None else float(fleet.gpus))


def least_cost(
    ev: Evaluator, point: SearchPoint, over: float, closed_loop_requests_per_s: float | None = None
) -> tuple[bool, float]:
    """The least ``point``'s sized fleet can cost: the fleet of replicas serving ``over`` times its closed-loop
    rate (its own, or ``closed_loop_requests_per_s``; :func:`planner.decisions.search.points.fleet_figures`),
    priced as :func:`_cost` prices a fleet."""
    usd = default_usd_per_gpu_hour(point.gpu)
    per_replica = point.replica_requests_per_s if closed_loop_requests_per_s is None else closed_loop_requests_per_s
    fleet = fleet_figures(
        requests_per_s=ev.workload.requests_per_s,
        concurrency=None,
        mean_output_tokens=ev.workload.mean_output_tokens,
        replica_requests_per_s=over * per_replica,
        replica_output_tok_s=over * per_replica * ev.workload.mean_output_tokens,
        replicas_for_concurrency=None,
        replicas_per_node=point.gpus_per_node // point.gpus_per_replica,
        gpu_count=point.gpus_per_node,
        usd_per_gpu_hour=usd,
    )
    return (usd is None, fleet.usd_per_hour if fleet.usd_per_hour is not None else float(fleet.gpus))


def _beat_nodes(point: SearchPoint, best: FleetOption) -> int:
    """The fewest whole nodes of ``point``'s node type that cost at least ``best`` (a fleet that large cannot win)."""
    usd = default_usd_per_gpu_hour(point.gpu)
    if best.usd_per_hour is not None and usd is None:
        return 1  # an unpriced fleet never beats a priced one
    if best.usd_per_hour is not None:
        return max(1, ceil(best.usd_per_hour / (point.gpus_per_node * usd) - 1e-9))
    return max(1, ceil(best.gpus / point.gpus_per_node - 1e-9))


def sized_recommendation(
    ev: Evaluator, candidates: list[SearchPoint], closed_loop_bound: Callable[[SearchPoint], float] | None = None
) -> TrafficSizing:
    """The cheapest of ``candidates`` (every point that fits and would start) once each is sized for the search's
    request rate; see the module's docstring for the order and the bounds.

    A candidate the search did not simulate is ordered by ``closed_loop_bound`` (the most its closed loop can serve,
    requests/s, from its screen) and simulated when its turn comes, before it is sized."""
    over = CAPACITY_OVER_CLOSED_LOOP
    ranked = sorted(candidates, key=cheapest_key)  # ties of the bound go to the cheaper at full load

    def rate(p: SearchPoint) -> float:
        if p.stage == "simulated" or closed_loop_bound is None:
            return p.replica_requests_per_s or 0.0
        return closed_loop_bound(p)

    def heap_of(points: list[tuple[int, SearchPoint]]) -> list[tuple[tuple[bool, float], int, SearchPoint]]:
        heap = [(least_cost(ev, p, over, rate(p)), rank, p) for rank, p in points]
        heapq.heapify(heap)
        return heap

    pending = heap_of(list(enumerate(ranked)))
    best: tuple[SearchPoint, FleetOption] | None = None
    sized = 0
    first_miss: tuple[SearchPoint, FleetOption] | None = None  # missed the objectives at every fleet size tried
    beyond: list[tuple[float, int, SearchPoint, str]] = []  # (floor / objective, rank, point, why)

    def hopeless(p: SearchPoint) -> bool:
        """While one candidate has missed the objectives and none has met them: ``p`` misses them at the lightest
        load its sizing would try, so no fleet of it meets them (one run, where its sizing takes one a doubling)."""
        return best is None and first_miss is not None and misses_everywhere(ev, p)

    while pending:
        bound, rank, point = heapq.heappop(pending)
        if best is not None and bound >= _cost(best[1]):
            break  # no candidate left can be cheaper: each is at least its bound
        out = beyond_reach(ev, point)
        if out is not None:  # even each request alone misses an objective: no fleet of it meets them
            beyond.append((out[0], rank, point, out[1]))
            continue
        if point.stage != "simulated":
            try:
                if best is not None and cannot_beat_point(ev, point, _beat_nodes(point, best[1])):
                    continue  # its sizing would stop at once: no closed loop to simulate for a bound
                if hopeless(point):
                    continue  # no closed loop to simulate either
            except PlannerError:
                continue  # the replica cannot be simulated at this load: it is no candidate
            ev.simulate(point)  # its closed loop, for a bound of its own
            if point.stage != "simulated":
                continue  # the replica cannot be simulated: it is no candidate
            heapq.heappush(pending, (least_cost(ev, point, over, rate(point)), rank, point))
            continue
        sized += 1
        try:
            if hopeless(point):
                continue
            fleet = size_point(ev, point, _beat_nodes(point, best[1]) if best is not None else None)
        except CannotBeat:
            continue
        except PlannerError:
            continue  # the replica cannot be simulated at this load: it is no candidate
        if not fleet.meets_slo and first_miss is None:
            first_miss = (point, fleet)
        shown = 1.1 * fleet.capacity_requests_per_s / point.replica_requests_per_s  # what it showed, widened
        if shown > over:  # every bound is lower now: order the rest again
            over = shown
            pending = heap_of([(r, p) for _, r, p in pending])
        if fleet.meets_slo and (best is None or _cost(fleet) < _cost(best[1])):
            best = (point, fleet)
    nearest = min(beyond, key=lambda item: item[:2], default=None)
    reach = {
        "out_of_reach": len(beyond),
        "nearest_out_of_reach": None if nearest is None else nearest[2:],
        "first_miss": first_miss,
    }
    if best is not None:
        return TrafficSizing(best[0], best[1], sized, **reach)
    return TrafficSizing(None, None, sized, **reach)
