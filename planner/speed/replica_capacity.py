"""A replica's capacity: the most requests per second it sustains, from its simulated saturated steady state.

An offline run of identical requests moves in lockstep waves that leave KV cache idle, and a deep queue admits in bursts
that preempt (recompute) more, so both sit below what a replica just past saturation sustains: the capacity is the
highest steady rate (``planner.speed.serving_metrics``) of an offline run and Poisson runs just past it.

>>> from planner.catalog.lookup import get_model, get_node
>>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), max_model_len=1024)
>>> run = replica_capacity(dep, ServingWorkload.build(offline=True, prompt_tokens=512, output_tokens=256))
>>> run.steady and run.steady_requests_per_s > 10
True
"""

from __future__ import annotations

from collections.abc import Callable

from planner.deployment import Deployment
from planner.memory.plan import plan_memory
from planner.memory.types import MemoryPlan
from planner.speed.engine_step import EngineStep
from planner.speed.profiles import SpeedProfile
from planner.speed.serving_metrics import ServingMetrics
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import simulate_one

#: Capacity runs hold at least this many rounds of the replica's request slots, so that the steady window (after
#: the first completion, before the last admission) spans whole rounds. Against runs of 16 rounds (nine replicas of
#: 8B and 70B targets, with and without a 1B draft, on H100, H200 and MI300X, 1,024 + 256-token and ShareGPT-like
#: requests: ``make bench-capacity``), two runs of 6 rounds land within 4.5% (median 0.9%) where three of 4 rounds,
#: at the same cost in requests, were 8.0% below to 12.1% above (median 2.3%): identical requests start in lockstep
#: and a draft's acceptance spreads them only slowly, so a short window catches a few uneven waves, and a replica of
#: few slots runs few requests.
CAPACITY_ROUNDS = 6
#: The overloads capacity runs offer: a multiple of the offline run's steady rate, then of the best rate so far. An
#: offline run of identical requests moves in lockstep waves that leave KV cache idle, and a deep queue admits in
#: bursts that preempt (recompute) more, so both sit below what a replica just past saturation sustains; the
#: highest steady rate is kept. One is enough: a run offered a little more than the best so far keeps up with it
#: where the replica has headroom, and its steady rate is then its own Poisson arrivals' (a run of 520
#: requests on one MI300X read 12% above a long run's capacity so).
CAPACITY_OVERLOADS = (1.25,)
#: The most a replica's capacity has exceeded what the same replica serves with its batch cap of requests in flight
#: (a closed loop), as a factor, with room to spare: 1.16 at most over the 354 candidates of ``make bench-search``'s
#: medium space (which prints it). The search's sizing widens it to what each candidate it sizes shows.
CAPACITY_OVER_CLOSED_LOOP = 1.25


#: A capacity run's arrival fields, cleared before each run sets its own.
_ARRIVALS = {"request_rate": None, "concurrency": None, "offline": False}


def offline_capacity(
    dep: Deployment,
    workload: ServingWorkload,
    *,
    alpha: float | None = None,
    k: int | None = None,
    profile: SpeedProfile | None = None,
    simulate: Callable[..., ServingMetrics] = simulate_one,
    engine: EngineStep | None = None,
    plan: MemoryPlan | None = None,
    rounds: int | None = None,
) -> ServingMetrics:
    """The first of :func:`replica_capacity`'s runs: ``workload``'s requests all at once, at least ``rounds``
    (``CAPACITY_ROUNDS``) times the requests the replica holds at once. Its steady rate is at most the capacity,
    which is the highest of it and one more run. The arguments are :func:`replica_capacity`'s.

    >>> from planner.catalog.lookup import get_model, get_node
    >>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), max_model_len=1024)
    >>> wl = ServingWorkload.build(offline=True, prompt_tokens=512, output_tokens=256)
    >>> offline_capacity(dep, wl).steady_requests_per_s <= replica_capacity(dep, wl).steady_requests_per_s
    True
    """
    prompts, outputs = workload.lengths()
    per_request = max(1, round(sum(prompts) / len(prompts) + sum(outputs) / len(outputs)))
    speculative = alpha is not None and dep.is_speculative
    plan = plan or plan_memory(dep if speculative else dep.without_draft(), with_suggestions=False)
    slots = min(plan.limits.max_num_seqs, max(1, plan.kv_cache_tokens // per_request)) if plan.fits else 1
    count = max(workload.num_prompts, (rounds or CAPACITY_ROUNDS) * slots)
    offline = workload.model_copy(update=_ARRIVALS | {"offline": True, "num_prompts": count})
    shared = {"engine": engine, "plan": plan} if engine is not None else {}
    return simulate(dep, offline, alpha=alpha, k=k, profile=profile, **shared)


def replica_capacity(
    dep: Deployment,
    workload: ServingWorkload,
    *,
    alpha: float | None = None,
    k: int | None = None,
    profile: SpeedProfile | None = None,
    simulate: Callable[..., ServingMetrics] = simulate_one,
    engine: EngineStep | None = None,
    plan: MemoryPlan | None = None,
    offline: ServingMetrics | None = None,
    rounds: int | None = None,
    overloads: tuple[float, ...] | None = None,
) -> ServingMetrics:
    """The most ``workload``'s requests one replica sustains: its steady state while requests queue faster than it
    serves them (``steady_requests_per_s``; warm-up and drain left out, so the run length does not move it).

    Runs of at least ``CAPACITY_ROUNDS`` times the requests the replica holds at once: every request queued at once
    (offline, :func:`offline_capacity`; ``offline`` where the caller holds that run already), then Poisson arrivals
    at ``CAPACITY_OVERLOADS`` times the best steady rate so far; the run with the highest steady rate is returned.
    Offered more, a replica serves no more than a few percent above it (``tests/core/speed/test_scheduler.py``).
    ``simulate`` runs each simulation (the memoised callers count them); ``engine`` and ``plan``, the replica's own
    when the caller holds them, go to each run as :func:`simulate_one` takes them. ``rounds`` and ``overloads``
    replace ``CAPACITY_ROUNDS`` and ``CAPACITY_OVERLOADS`` (``python -m bench.capacity_convergence`` compares them).
    """
    options = {"alpha": alpha, "k": k, "profile": profile, "engine": engine, "plan": plan, "rounds": rounds}
    first = offline or offline_capacity(dep, workload, simulate=simulate, **options)
    shared = {"engine": engine, "plan": plan} if engine is not None else {}
    runs = [first]
    for overload in CAPACITY_OVERLOADS if overloads is None else overloads:
        rate = overload * max(run.steady_requests_per_s for run in runs)
        arrivals = workload.model_copy(update=_ARRIVALS | {"request_rate": rate, "num_prompts": first.requests})
        runs.append(simulate(dep, arrivals, alpha=alpha, k=k, profile=profile, **shared))
    return max(runs, key=lambda run: run.steady_requests_per_s)
