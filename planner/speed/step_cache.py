"""Memoised speed results: a replica's simulated run, a speed estimate and a memory plan are computed once per
configuration.

:func:`planner.speed.simulate.simulate_one`, :func:`planner.speed.estimate.estimate_speed` and
:func:`planner.memory.plan.plan_memory` are pure functions of immutable values (the deployment, the workload,
whose arrivals are seeded, α, K and the speed profile): the same inputs always give the same answer. The
functions here key a bounded LRU cache on exactly those inputs (each pydantic value by its JSON, which holds
every field, custom model architectures included), so

- the fleet search's repeated runs (the same replica at the same rate) are simulated once;
- a widget change that leaves a replica's load alone (an objective, the percentile, the price, one node
  type added or removed) reuses every run it shares with the previous answer, across calls and sessions;
- a replica is keyed without its node (``gpu_count``, ``node_id``): the same layout of the same GPU on two node
  types (4x and 8x L40S, 1x and 8x H100) is simulated once; an error stays keyed by its node, whose name it carries;
- the decision matrix at a new batch size sizes none of its candidates' memory again;
- a configuration that cannot run raises the same error again without being recomputed;
- a run asked only whether it misses an objective stops once the miss is certain (:func:`simulate_one_unless_missed`),
  and that answer is kept too;
- what a worker process adds to them (node types quoted side by side, :mod:`planner.decisions.side_by_side`) is
  handed back and kept here as if computed here (:mod:`planner.speed.result_cache`, where the caches are built);
- :func:`planner.facts.clear_caches` forgets them with every other data cache (the speed profiles and
  catalog they were computed from).

The step model itself stays pure and uncached; callers get a shallow copy of a cached result and must not
mutate the lists inside it.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> from planner.speed.serving_workload import ServingWorkload
>>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"))
>>> work = ServingWorkload.build(request_rate=4.0, num_prompts=50)
>>> first = simulate_one_cached(dep, work)
>>> again = simulate_one_cached(dep.model_copy(), work)
>>> again.ttft_values_s is first.ttft_values_s, again == simulate_one(dep, work)
(True, True)
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from pydantic import BaseModel

from planner.defaults import NUM_SPECULATIVE_TOKENS
from planner.deployment import Deployment
from planner.errors import PlannerError
from planner.facts import register_cache
from planner.memory.budget import SharedBudget, plan_budget
from planner.memory.plan import plan_memory
from planner.memory.types import MemoryPlan
from planner.speed.engine_step import EngineStep
from planner.speed.estimate import SpeedEstimate, batch_steps, estimate_speed, speedup_by_k
from planner.speed.objective_watch import CertainMiss, ObjectiveWatch
from planner.speed.profiles import SpeedProfile
from planner.speed.replica_capacity import offline_capacity, replica_capacity
from planner.speed.result_cache import ResultCache
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import ServingMetrics, simulate_one
from planner.speed.workload import SpeedWorkload


def _key(*values: Any) -> tuple:
    """Pydantic values by their JSON (every field), the rest as they are (numbers, None)."""
    return tuple(v.model_dump_json() if isinstance(v, BaseModel) else v for v in values)


#: Fields of a deployment that name its node but leave one replica's simulation unchanged (the replica runs on
#: ``tp x pp`` GPUs of the deployment's GPU type whichever node holds it).
NODE_ONLY_FIELDS = frozenset({"gpu_count", "node_id"})


def replica_key(dep: Deployment) -> str:
    """The deployment as one replica sees it: every field but the node's (``NODE_ONLY_FIELDS``).

    >>> from planner.catalog.lookup import get_model, get_node
    >>> model = get_model("Llama-3.1-70B")
    >>> four, eight = (Deployment.on_node(model, get_node(n), tp=4) for n in ("4x-l40s-48gb", "8x-l40s-48gb"))
    >>> replica_key(four) == replica_key(eight), four == eight
    (True, False)
    """
    return dep.model_dump_json(exclude=set(NODE_ONLY_FIELDS))


class SimulationCounter:
    """How many replica simulations (:func:`planner.speed.simulate.simulate_one`) the caches have run; a thread may
    have a pause taken before each of its own (:meth:`pausing`).

    >>> waits = []
    >>> with SIMULATIONS.pausing(lambda: waits.append("paused")):
    ...     SIMULATIONS.pause()
    >>> SIMULATIONS.pause(); waits
    ['paused']
    """

    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()
        self.local = threading.local()

    @contextmanager
    def pausing(self, pause: Callable[[], None]) -> Iterator[None]:
        """Call ``pause()`` before each simulation this thread runs inside the block: work no one waits for (a
        server's warm-up) gives way to a visitor's between two runs, not only between its larger steps."""
        self.local.pause = pause
        try:
            yield
        finally:
            self.local.pause = None

    def pause(self) -> None:
        """This thread's pause, if it has one."""
        pause = getattr(self.local, "pause", None)
        if pause is not None:
            pause()

    def __call__(self, dep: Deployment, workload: ServingWorkload, **options: Any) -> ServingMetrics:
        self.pause()
        with self.lock:
            self.count += 1
        return simulate_one(dep, workload, **options)

    def add(self, count: int) -> None:
        """Count ``count`` simulations another process ran for this one (their results adopted here)."""
        with self.lock:
            self.count += count


#: Every simulation the caches below run, the capacity runs included (a count that tests and benchmarks read).
SIMULATIONS = SimulationCounter()


def pause_before_each_simulation(pause: Callable[[], None]) -> AbstractContextManager[None]:
    """Within the block, call ``pause()`` before each replica simulation this thread runs
    (:meth:`SimulationCounter.pausing`): how work no visitor waits for gives way to theirs."""
    return SIMULATIONS.pausing(pause)


RUNS = ResultCache(name="runs")
CAPACITIES = ResultCache(name="capacities")
OFFLINE_CAPACITIES = ResultCache(name="offline-capacities")
ESTIMATES = ResultCache(name="estimates")
SPEEDUPS = ResultCache(name="speedups")
PLANS = ResultCache(name="plans")


class ReplicaParts:
    """A replica's :class:`EngineStep` (its static step costs) and memory plan, built once per (replica, speculative,
    profile) and handed to every simulation of it: the runs are the same as when each builds its own
    (:func:`planner.speed.simulate.simulate_one` takes them for exactly this)."""

    def __init__(self, maxsize: int = 256) -> None:
        self.maxsize = maxsize
        self.entries: OrderedDict[tuple, tuple[EngineStep, MemoryPlan]] = OrderedDict()
        #: Step models and memory-plan parts per layout (draft length and batch cap set aside), shared by the
        #: replicas that differ only there.
        self.layouts: OrderedDict[tuple, tuple[EngineStep, SharedBudget]] = OrderedDict()
        self.lock = threading.Lock()
        register_cache(self)

    def get(self, dep: Deployment, speculative: bool, profile: SpeedProfile | None) -> tuple[EngineStep, MemoryPlan]:
        key = (replica_key(dep), speculative, *_key(profile))
        with self.lock:
            parts = self.entries.get(key)
            if parts is not None:
                self.entries.move_to_end(key)
                return parts
        served = dep if speculative else dep.without_draft()
        engine, share = self._layout_parts(served, profile)
        parts = (engine, plan_budget(served, share=share))  # what plan_memory gives without fixes
        with self.lock:
            self.entries[key] = parts
            while len(self.entries) > self.maxsize:
                self.entries.popitem(last=False)
        return parts

    def _layout_parts(self, served: Deployment, profile: SpeedProfile | None) -> tuple[EngineStep, SharedBudget]:
        """``served``'s :class:`EngineStep` and the parts of its memory plan that no draft length or batch cap
        changes, built once for every K and batch cap: the step models of its layout (with the CUDA-graph sizes of
        its own, :meth:`EngineStep.for_deployment`) and its budget's fixed inputs (the plan is the one planned
        alone, :class:`planner.memory.budget.SharedBudget`)."""
        shared = served.replace(num_speculative_tokens=NUM_SPECULATIVE_TOKENS, max_num_seqs=None)
        key = (replica_key(shared), *_key(profile))
        with self.lock:
            found = self.layouts.get(key)
            if found is not None:
                self.layouts.move_to_end(key)
        if found is None:
            found = (EngineStep(shared, profile), SharedBudget())
            with self.lock:
                self.layouts[key] = found
                while len(self.layouts) > self.maxsize:
                    self.layouts.popitem(last=False)
        base, share = found
        return (base if shared == served else base.for_deployment(served)), share

    def cache_clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.layouts.clear()


#: Each replica's engine step and memory plan, shared by its runs.
PARTS = ReplicaParts()


def replica_plan(dep: Deployment, speculative: bool = False) -> MemoryPlan:
    """The memory plan one replica of ``dep`` runs with (with its draft when ``speculative``), built once."""
    return PARTS.get(dep, speculative, None)[1]


def _with_parts(run: Callable[..., ServingMetrics]) -> Callable[..., ServingMetrics]:
    """``run`` given the replica's shared engine step and memory plan (``run`` builds its own when they fail)."""

    def shared(dep: Deployment, workload: ServingWorkload, **options: Any) -> ServingMetrics:
        SIMULATIONS.pause()  # before building the parts too: a thread that pauses gives way before any of the work
        speculative = options.get("alpha") is not None and dep.is_speculative
        try:
            engine, plan = PARTS.get(dep, speculative, options.get("profile"))
        except PlannerError:
            return run(dep, workload, **options)  # the run raises the same error, in its own words
        return run(dep, workload, engine=engine, plan=plan, **options)

    return shared


def _capacity(dep: Deployment, workload: ServingWorkload, **options: Any) -> ServingMetrics:
    asked = {name: options.get(name) for name in ("alpha", "k", "profile")}
    offline = offline_capacity_cached(dep, workload, **asked)  # its first run, kept on its own
    return replica_capacity(dep, workload, simulate=SIMULATIONS, offline=offline, **options)


def _offline_capacity(dep: Deployment, workload: ServingWorkload, **options: Any) -> ServingMetrics:
    return offline_capacity(dep, workload, simulate=SIMULATIONS, **options)


def _run_cache(cache: ResultCache, run: Callable[..., ServingMetrics], what: str):
    """``run(dep, workload, alpha=, k=, profile=)`` computed once per (replica, workload, α, K, profile); an error
    once per (deployment, workload, α, K, profile)."""

    def cached(
        dep: Deployment,
        workload: ServingWorkload,
        *,
        alpha: float | None = None,
        k: int | None = None,
        profile: SpeedProfile | None = None,
    ) -> ServingMetrics:
        return cache.get_or_compute(
            (replica_key(dep), *_key(workload, alpha, k, profile)),
            lambda: run(dep, workload, alpha=alpha, k=k, profile=profile),
            error_key=_key(dep, workload, alpha, k, profile),
        )

    cached.__doc__ = f":func:`{what}`, computed once per (replica, workload, α, K, profile)."
    return cached


#: One replica's simulated run (:func:`planner.speed.simulate.simulate_one`), memoised.
simulate_one_cached = _run_cache(RUNS, _with_parts(SIMULATIONS), "planner.speed.simulate.simulate_one")
#: The first of a replica's capacity runs (:func:`planner.speed.replica_capacity.offline_capacity`), memoised: a
#: lower bound of its capacity without the other two.
offline_capacity_cached = _run_cache(
    OFFLINE_CAPACITIES, _with_parts(_offline_capacity), "planner.speed.replica_capacity.offline_capacity"
)
#: A replica's saturated steady state (:func:`planner.speed.replica_capacity.replica_capacity`), memoised.
replica_capacity_cached = _run_cache(
    CAPACITIES, _with_parts(_capacity), "planner.speed.replica_capacity.replica_capacity"
)


class _Missed(BaseModel):
    """What :data:`MISSED` keeps: the run was stopped, certain to miss an objective."""


#: Runs stopped as soon as they were certain to miss an objective, by run and objectives.
MISSED = ResultCache(name="missed")


def simulate_one_unless_missed(
    dep: Deployment,
    workload: ServingWorkload,
    watch: ObjectiveWatch,
    *,
    alpha: float | None = None,
    k: int | None = None,
    profile: SpeedProfile | None = None,
) -> ServingMetrics | None:
    """:func:`simulate_one_cached`'s run, or None as soon as the run is certain to miss one of ``watch``'s
    objectives (:mod:`planner.speed.objective_watch`): what a fleet search pays to learn that a fleet misses. A
    run kept already is read; one that completes is kept as :func:`simulate_one_cached` keeps it.

    >>> from planner.catalog.lookup import get_model, get_node
    >>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"))
    >>> overload = ServingWorkload.build(request_rate=200.0, num_prompts=400)
    >>> before = SIMULATIONS.count
    >>> simulate_one_unless_missed(dep, overload, ObjectiveWatch(0.5, None, 99.0)) is None, SIMULATIONS.count - before
    (True, 1)
    >>> simulate_one_cached(dep, overload).ttft_at(99) > 0.5  # the whole run misses too
    True
    """
    key = (replica_key(dep), *_key(workload, alpha, k, profile))
    error_key = _key(dep, workload, alpha, k, profile)
    if RUNS.holds(key, error_key):
        return simulate_one_cached(dep, workload, alpha=alpha, k=k, profile=profile)
    missed_key = (*key, watch)
    if MISSED.holds(missed_key):
        return None
    try:
        run = _with_parts(SIMULATIONS)(dep, workload, alpha=alpha, k=k, profile=profile, watch=watch)
    except CertainMiss:
        MISSED.get_or_compute(missed_key, _Missed)
        return None
    except PlannerError:  # kept, and raised in its own words, as simulate_one_cached keeps and raises it
        return simulate_one_cached(dep, workload, alpha=alpha, k=k, profile=profile)
    return RUNS.get_or_compute(key, lambda: run, error_key=error_key)


def plan_memory_cached(deployment: Deployment) -> MemoryPlan:
    """:func:`planner.memory.plan.plan_memory` without suggestions, computed once per deployment: the decision
    matrix sizes every candidate draft again at each batch size, which leaves their memory unchanged."""
    return PLANS.get_or_compute(_key(deployment), lambda: plan_memory(deployment, with_suggestions=False))


def speedup_by_k_cached(deployment: Deployment, workload: SpeedWorkload) -> tuple[tuple[int, float], ...]:
    """:func:`planner.speed.estimate.speedup_by_k` as (K, speedup) pairs (what :func:`estimate_speed_cached` gives as
    ``speedup_by_k``, without the rest of the estimate), computed once per (deployment, workload) on the replica's
    shared engine step."""

    def compute() -> tuple[tuple[int, float], ...]:  # kept as it is: an immutable entry
        engine = PARTS.get(deployment, True, None)[0] if deployment.is_speculative else None
        steps = batch_steps(deployment, workload, engine or EngineStep(deployment, need_draft=True))
        return tuple(speedup_by_k(deployment, workload, steps).items())

    return SPEEDUPS.get_or_compute(_key(deployment, workload), compute)


def estimate_speed_cached(
    deployment: Deployment, workload: SpeedWorkload, profile: SpeedProfile | None = None
) -> SpeedEstimate:
    """:func:`planner.speed.estimate.estimate_speed`, computed once per (deployment, workload, profile)."""
    return ESTIMATES.get_or_compute(
        _key(deployment, workload, profile), lambda: estimate_speed(deployment, workload, profile)
    )


def _renew_locks() -> None:
    """In a forked child, new locks for the counter and the replicas' parts: a thread the child lacks may have held
    the parent's at the fork (the result caches renew theirs, :mod:`planner.speed.result_cache`)."""
    SIMULATIONS.lock = threading.Lock()
    PARTS.lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew_locks)
