"""The search: plan every point, screen those that fit with the step model, simulate those near the frontier.

1. Memory: each point's plan (:func:`planner.memory.plan_budget`, worked out once per layout and speculator
   and finished per K and batch cap, :class:`planner.memory.budget.SharedBudget`). A layout and speculator
   that does not fit (or would not start) at its smallest K and batch cap is marked for every larger K and cap
   without planning them again (both only add memory: lookahead slots, CUDA-graph batches, the sampler's peak).
2. Screen: every point that fits gets static figures (:meth:`Evaluator.screen`).
3. Simulate: the points on the static frontiers first; then, repeatedly, of the unsimulated points whose
   screen, corrected by the most favourable error the screen has shown against the simulator so far, could
   still meet the objectives and reach either simulated frontier, those on the frontiers of their screened
   figures (the most promising first, so the simulated frontiers tighten before the rest are weighed again).
   The screen's error is learned per family (method, KV-limited or not, GPU, layout, then the running batch
   within it: the narrowest family with a simulated point) and widened by
   ``SCREEN_MARGIN`` on the frontier axes, so a point whose error is a little beyond any yet seen still counts. The loop
   stops when no such point is left, so the frontiers are the ones simulating every point would give
   (a test checks this on a small space).

A large space is planned, screened and simulated in one process per usable CPU where the process may fork
(:mod:`planner.decisions.search.workers`): the same figures, sooner.

>>> from planner.decisions.search.space import Objectives, SearchSpace, SearchWorkload
>>> space = SearchSpace.build(target="Llama-3.1-8B", nodes=("1x-h100-sxm-80gb",), methods=("none", "ngram"),
...                           ks=(2, 4), dtypes=("bf16",), batch_caps=(8, 64))
>>> result = search(space, SearchWorkload(requests_per_s=5, prompt_tokens=512, output_tokens=128),
...                 Objectives(tpot_slo_s=0.05))
>>> len(result.points), result.recommended.meets_objectives
(6, True)
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from math import log2

import numpy as np

from planner.decisions.fleet import MAX_REPLICA_FACTOR
from planner.decisions.fleet_models import FleetOption
from planner.decisions.search.evaluate import Evaluator
from planner.decisions.search.frontier import (
    Dominance,
    FrontierStep,
    cheapest,
    cost_xy,
    frontier_points,
    frontier_steps,
    pareto,
    throughput_xy,
)
from planner.decisions.search.points import SearchPoint
from planner.decisions.search.space import MAX_POINTS, Objectives, SearchSpace, SearchWorkload
from planner.decisions.search.traffic_sizing import (
    TrafficSizing,
    sized_recommendation,
    sizing_across_draws,
    sizing_speed_margin,
)
from planner.decisions.search.workers import Workers
from planner.decisions.speed_margins import SpeedMargin
from planner.decisions.traffic_draws import CountAcrossDraws
from planner.errors import InputError
from planner.units import fmt_counted

PLANES = ("throughput", "cost")
#: How much more favourable than the most favourable error seen so far a point's figures may still turn out
#: (the screen's error is learned from the points simulated; a few samples need not show its extreme).
SCREEN_MARGIN = 1.1


@dataclass
class SearchResult:
    space: SearchSpace
    workload: SearchWorkload
    objectives: Objectives
    points: list[SearchPoint]
    frontiers: dict[str, list[SearchPoint]]
    recommended: SearchPoint | None
    steps: list[FrontierStep]
    seconds: float
    simulated: int
    evaluator: Evaluator = field(repr=False)
    notes: list[str] = field(default_factory=list)
    #: Seconds spent enumerating and planning, screening, simulating, and sizing the recommendation for the traffic.
    stage_seconds: dict[str, float] = field(default_factory=dict)
    #: At a request rate: the recommendation's fleet sized as a quote sizes it (Poisson arrivals, the fewest replicas
    #: that meet the objectives; :mod:`planner.decisions.search.traffic_sizing`), and the candidates sized.
    sizing: TrafficSizing | None = None

    @property
    def recommended_fleet(self) -> FleetOption | None:
        """The recommendation's fleet sized for the traffic (None at a concurrency, or when nothing qualifies)."""
        return self.sizing.fleet if self.sizing is not None else None

    def recommendation_across_draws(self, draws: int) -> CountAcrossDraws | None:
        """The recommendation's fleet sized again on ``draws`` draws of the traffic (None at a concurrency, or when
        nothing qualifies): :mod:`planner.decisions.traffic_draws`."""
        return None if self.sizing is None else sizing_across_draws(self.evaluator, self.sizing, draws)

    def recommendation_speed_margin(self) -> SpeedMargin | None:
        """How much slower than estimated the recommendation's fleet may be (None at a concurrency, or when nothing
        qualifies): :mod:`planner.decisions.speed_margins`."""
        return None if self.sizing is None else sizing_speed_margin(self.evaluator, self.sizing)

    @property
    def fitting_points(self) -> int:
        return sum(1 for p in self.points if p.fits and p.starts)

    @property
    def frontier(self) -> list[SearchPoint]:
        """Every point on either frontier, once, in index order."""
        seen = {p.index: p for plane in PLANES for p in self.frontiers[plane]}
        return [seen[i] for i in sorted(seen)]

    @property
    def headline(self) -> str:
        best = self.recommended
        if best is None:
            return f"No configuration meets every objective ({self.objectives.describe()}){self._why_none()}"
        fleet = self.recommended_fleet
        nodes, gpus, per_million = (
            (fleet.nodes, fleet.gpus, fleet.usd_per_million_output_tokens)
            if fleet is not None
            else (best.nodes, best.gpus, best.usd_per_million_output_tokens)
        )
        cost = f"${per_million:,.3f} per million output tokens" if per_million is not None else "no catalog price"
        load = f" at {self.workload.requests_per_s:g} req/s" if fleet is not None else ""
        return (
            f"Cheapest configuration that meets every objective{load}: {nodes} × {best.label}: "
            f"{fmt_counted(gpus, 'GPU')}, {cost}"
        )

    def _why_none(self) -> str:
        """Why no candidate sized for the traffic meets the objectives: where every one lies beyond an objective's
        reach, the nearest one's floor; else what the first one sized reached at the largest fleet it tried, in
        words."""
        sizing = self.sizing
        if sizing is None:
            return ""
        if not sizing.sized and sizing.nearest_out_of_reach is not None:
            point, why = sizing.nearest_out_of_reach
            return f"; no fleet of any meets them, the nearest being {point.label}: {why}"
        if sizing.first_miss is not None:
            point, fleet = sizing.first_miss
            rate, factor = self.workload.requests_per_s, MAX_REPLICA_FACTOR
            return (
                f"; sized for {rate:g} req/s, none meets them with up to {factor} times the replicas that carry the "
                f"rate at capacity; the first sized, {point.label}, {fleet.limited_by}"
            )
        return ""

    def as_json(self, *, all_points: bool = True) -> dict:
        """The CLI's ``--json``: points, fitting points, seconds, the frontier, the recommended point."""
        return {
            "target": self.space.target,
            "workload": self.workload.model_dump(),
            "objectives": self.objectives.model_dump(),
            "points": [p.as_dict() for p in self.points] if all_points else len(self.points),
            "fitting_points": self.fitting_points,
            "simulated_points": self.simulated,
            "seconds": round(self.seconds, 3),
            "stage_seconds": {k: round(v, 3) for k, v in self.stage_seconds.items()},
            "frontier": [p.as_dict() for p in self.frontier],
            "recommended": None if self.recommended is None else self._recommended_dict(),
            "recommendation": self.headline,
            "frontier_steps": [s.model_dump() for s in self.steps],
            "notes": self.notes,
        }

    def _recommended_dict(self) -> dict:
        """The recommended point, with its fleet sized for the traffic at a request rate."""
        out = self.recommended.as_dict()
        fleet = self.recommended_fleet
        if fleet is not None:
            out["sized_for_traffic"] = fleet.model_dump(mode="json")
        return out


def _feasible(points: list[SearchPoint]) -> list[SearchPoint]:
    return [p for p in points if p.stage == "simulated" and p.meets_objectives]


class _Ratios:
    """The most favourable ratio simulated / screened seen so far, per figure; 1 (the screen as it is) for a figure
    no simulation has shown yet."""

    def __init__(self) -> None:
        self.user = self.gpu = 0.0
        self.tpot = self.ttft = self.cost = float("inf")
        self.samples = 0

    def add(self, s: tuple, p: SearchPoint) -> None:
        s_user, s_gpu, s_ttft, s_tpot, s_cost = s
        self.samples += 1
        if s_user and p.output_tok_s_per_user:
            self.user = max(self.user, p.output_tok_s_per_user / s_user)
        if s_gpu and p.output_tok_s_per_gpu:
            self.gpu = max(self.gpu, p.output_tok_s_per_gpu / s_gpu)
        if s_ttft and p.ttft_s is not None:
            self.ttft = min(self.ttft, p.ttft_s / s_ttft)
        if s_tpot and p.tpot_s is not None:
            self.tpot = min(self.tpot, p.tpot_s / s_tpot)
        if s_cost and p.usd_per_million_output_tokens:
            self.cost = min(self.cost, p.usd_per_million_output_tokens / s_cost)

    def factors(self) -> tuple[float, float, float, float, float]:
        """(user, gpu, ttft, tpot, cost): each figure's most favourable ratio, 1 where none was seen."""
        return (
            self.user or 1.0,
            self.gpu or 1.0,
            *(1.0 if r == float("inf") else r for r in (self.ttft, self.tpot, self.cost)),
        )


def _family(p: SearchPoint) -> tuple[tuple, ...]:
    """The families of points the screen errs alike on, narrowest first: those of one layout (the speculation
    method, whether the KV cache limits the batch, the GPU, TP and PP) at about the same running batch (its
    nearest power of two: the screen's error against the simulator varies with the batch, ``make bench-search``
    prints it), then every batch of the layout."""
    layout = (p.method, (p.batch_size or 0) < (p.concurrency_per_replica or 0), p.gpu, p.tp, p.pp)
    return ((*layout, 2 ** round(log2(max(1.0, p.batch_size or 1.0)))), layout)


class _Bounds:
    """Screen errors per family of points: those of a point's narrowest family that has any, else those of every
    simulated point."""

    def __init__(self) -> None:
        self.overall = _Ratios()
        self.by_family: dict[tuple, _Ratios] = defaultdict(_Ratios)
        self.seen: set[int] = set()

    def update(self, screened: dict[int, tuple], families: dict[int, tuple], simulated: list[SearchPoint]) -> None:
        for p in simulated:
            if p.index not in self.seen:
                self.seen.add(p.index)
                self.overall.add(screened[p.index], p)
                for family in families[p.index]:
                    self.by_family[family].add(screened[p.index], p)

    def of(self, families: tuple[tuple, ...]) -> _Ratios:
        for family in families:
            found = self.by_family.get(family)
            if found is not None and found.samples:
                return found
        return self.overall


def search(
    space: SearchSpace,
    workload: SearchWorkload,
    objectives: Objectives,
    progress: Callable[[str], None] = lambda stage: None,
    workers: int | None = None,
) -> SearchResult:
    """Every point of ``space`` for ``workload``: planned, screened, the frontier simulated; the frontiers.
    ``progress(stage)`` is told what the search is doing, in words, as it goes (a page's progress bar).
    ``workers``: processes to plan, screen and simulate in (default:
    :func:`~planner.decisions.search.workers.worker_count`; the figures do not depend on it)."""
    started = time.perf_counter()
    ev = Evaluator(space, workload, objectives)
    points = ev.points()
    if len(points) > MAX_POINTS:
        raise InputError("space", len(points), f"at most {MAX_POINTS:,} points: narrow the nodes, K or batch caps")
    progress(f"Planning the memory of {len(points):,} configurations...")
    with Workers(ev, points, workers) as pool:
        pool.plan_and_screen(
            lambda fitting: progress(f"Screening the {fitting:,} configurations that fit with the step model...")
        )
        fitting = [p for p in points if p.fits and p.starts]
        families = {p.index: _family(p) for p in fitting}
        screened_at = time.perf_counter()
        screened = {
            p.index: (
                p.output_tok_s_per_user, p.output_tok_s_per_gpu, p.ttft_s, p.tpot_s, p.usd_per_million_output_tokens
            )
            for p in fitting
        }  # fmt: skip
        ok = [p for p in fitting if p.meets_objectives] or fitting
        seeds = {p.index for plane in PLANES for p in frontier_points(ok, plane)}
        bounds = _Bounds()
        weigh = _Screened(fitting, screened, families)
        todo = [p for p in fitting if p.index in seeds]
        simulated: list[SearchPoint] = []
        tried = 0
        while todo:
            promising = _most_promising(todo, screened)
            pool.simulate(promising)  # each run kept by the evaluator, in the process that owns its layout
            for p in promising:
                tried += 1
                progress(f"Simulating the configurations that could reach a frontier: {tried:,} so far...")
                ev.simulate(p)
                weigh.done(p)
                if p.stage == "simulated":
                    simulated.append(p)
            simulated.sort(key=lambda p: p.index)
            bounds.update(screened, families, simulated)
            feasible = _feasible(simulated)
            fronts = {plane: Dominance([xy(p) for p in frontier_points(feasible, plane)]) for plane, xy in
                      (("throughput", throughput_xy), ("cost", cost_xy))}  # fmt: skip
            todo = weigh.may_reach(bounds, fronts, objectives)
    simulated_at = time.perf_counter()
    feasible = _feasible(points)
    frontiers = {plane: frontier_points(feasible, plane) for plane in PLANES}
    for plane in PLANES:
        for p in frontiers[plane]:
            p.frontiers.append(plane)
    full_load = cheapest(feasible)
    sizing = None
    if workload.requests_per_s is not None:

        def closed_loop_bound(p: SearchPoint) -> float:
            """The most an unsimulated point's closed loop can serve: its screen corrected by the most favourable
            error seen in its family, widened as the frontiers' weighing widens it."""
            # never below the screen itself: the sizing's order needs a bound the rate cannot exceed
            gpu = max(1.0, bounds.of(families[p.index]).factors()[1])
            return (p.replica_requests_per_s or 0.0) * gpu * SCREEN_MARGIN

        progress(f"Sizing the cheapest fleet for {workload.requests_per_s:g} req/s...")
        sizing = sized_recommendation(ev, fitting, closed_loop_bound)
    recommended = sizing.point if sizing is not None else full_load
    sized_at = time.perf_counter()
    notes = [
        "figures per replica with its batch cap of requests in flight (closed loop); replicas enough for the "
        "workload at that throughput; cost per million output tokens at the catalog's median on-demand price",
        "points that fit were screened with the step model; those that could reach a frontier"
        + (" or be the cheapest once sized for the traffic" if sizing is not None else "")
        + f" were simulated ({sum(p.stage == 'simulated' for p in points):,} of {len(fitting):,})",
    ]
    if sizing is not None:
        sizing.note = _sizing_note(sizing, full_load, workload)
        notes.append(sizing.note)
    return SearchResult(
        space=space,
        workload=workload,
        objectives=objectives,
        points=points,
        frontiers=frontiers,
        recommended=recommended,
        steps=frontier_steps(frontiers["cost"], objectives.percentile),
        seconds=time.perf_counter() - started,
        simulated=sum(p.stage == "simulated" for p in points),
        evaluator=ev,
        notes=notes,
        stage_seconds={
            **(
                {"plan": screened_at - started - pool.screen_s, "screen": pool.screen_s}
                if pool.count == 1
                else {f"plan and screen in {pool.count} processes": screened_at - started}
            ),
            "simulate": simulated_at - screened_at,
            "size": sized_at - simulated_at,
        },
        sizing=sizing,
    )


def _sizing_note(sizing: TrafficSizing, full_load: SearchPoint | None, workload: SearchWorkload) -> str:
    """How the recommendation was sized for the traffic, and what that changed."""
    note = (
        f"the recommendation is sized for {workload.requests_per_s:g} req/s as a fleet quote is: each replica offered "
        "its share as Poisson arrivals, the fewest replicas whose percentiles meet the objectives "
        f"({sizing.sized:,} candidate{'' if sizing.sized == 1 else 's'} sized)"
    )
    fleet, best = sizing.fleet, sizing.point
    if fleet is None:
        return note + "; none meets the objectives at any fleet size"
    if best is not None and not best.meets_objectives:
        note += (
            f"; with its batch cap of requests in flight it would miss {' and '.join(best.misses)}, but offered its "
            f"share of the rate each replica runs fewer at once ({fleet.batch_size:,.0f} on average) and meets every "
            "objective"
        )
    if best is not None and fleet.gpus != best.gpus:
        note += (
            f"; at its batch cap it would carry the rate on {fmt_counted(best.gpus, 'GPU')}, but with requests "
            "arriving at random "
            f"it needs {fleet.gpus:,} ({fleet.limited_by})"
        )
    if full_load is not None and best is not None and full_load.index != best.index:
        at_full_load = full_load.usd_per_hour if fleet.usd_per_hour is not None else full_load.gpus
        sized = fleet.usd_per_hour if fleet.usd_per_hour is not None else fleet.gpus
        if at_full_load is not None and at_full_load < sized:
            note += (
                f"; {full_load.label} would cost less at its batch cap ({fmt_counted(full_load.gpus, 'GPU')}) but is "
                "no cheaper once sized for the traffic"
            )
    return note


def _most_promising(todo: list[SearchPoint], screened: dict[int, tuple]) -> list[SearchPoint]:
    """The points of ``todo`` on either frontier of their screened figures: simulated first, so that the
    simulated frontiers tighten before the points further from them are weighed again."""
    user_gpu = [(s[0] or 0.0, s[1] or 0.0) for s in (screened[p.index] for p in todo)]
    tpot_cost = [(-(s[3] or 0.0), -(s[4] or 0.0)) for s in (screened[p.index] for p in todo)]
    chosen = set(pareto(user_gpu, higher_x=True, higher_y=True)) | set(pareto(tpot_cost, higher_x=True, higher_y=True))
    return [todo[i] for i in sorted(chosen)]


class _Screened:
    """The screened figures of the points that fit, as arrays, to weigh every unsimulated point at once."""

    def __init__(self, fitting: list[SearchPoint], screened: dict[int, tuple], families: dict[int, tuple]) -> None:
        self.points = fitting
        self.position = {p.index: j for j, p in enumerate(fitting)}
        rows = [screened[p.index] for p in fitting]
        self.user = np.array([r[0] or 0.0 for r in rows], dtype=float)
        self.gpu = np.array([r[1] or 0.0 for r in rows], dtype=float)
        self.ttft = np.array([r[2] for r in rows], dtype=float)
        self.tpot = np.array([r[3] for r in rows], dtype=float)
        self.priced = np.array([r[4] is not None for r in rows], dtype=bool)
        self.cost = np.array([0.0 if r[4] is None else r[4] for r in rows], dtype=float)
        keys = list(dict.fromkeys(families[p.index] for p in fitting))
        self.families = keys
        number = {key: i for i, key in enumerate(keys)}
        self.family = np.array([number[families[p.index]] for p in fitting], dtype=np.intp)
        self.open = np.array([p.stage == "screened" for p in fitting], dtype=bool)

    def done(self, p: SearchPoint) -> None:
        """``p`` was simulated (or stopped): it is no longer weighed."""
        self.open[self.position[p.index]] = False

    def may_reach(self, bounds: _Bounds, fronts: dict[str, Dominance], objectives: Objectives) -> list[SearchPoint]:
        """The unsimulated points that, at their most favourable plausible figures (the screen corrected by the
        most favourable error seen in their family, widened by ``SCREEN_MARGIN``), could meet the objectives and
        reach either frontier."""
        ratios = [bounds.of(key) for key in self.families]
        per = np.array([b.factors() for b in ratios], dtype=float)[self.family]
        m = SCREEN_MARGIN
        ttft, tpot = self.ttft * per[:, 2], self.tpot * per[:, 3]
        meets = np.ones(len(ttft), dtype=bool)
        if objectives.ttft_slo_s is not None:  # the closed loop's rounds, a coarser screen: widened too
            meets &= ~(ttft / m > objectives.ttft_slo_s)
        if objectives.tpot_slo_s is not None:
            meets &= ~(tpot > objectives.tpot_slo_s)
        reach = ~fronts["throughput"].dominated_many(self.user * per[:, 0] * m, self.gpu * per[:, 1] * m)
        reach |= self.priced & ~fronts["cost"].dominated_many(-tpot / m, -self.cost * per[:, 4])
        return [self.points[j] for j in np.flatnonzero(self.open & meets & reach)]
