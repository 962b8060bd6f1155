"""Node types quoted side by side: each in a worker process, where the machine has more than one CPU.

A node type's quote (:func:`planner.decisions.fleet_quotes.best_quote_on_node`) reads no other node type's, so the
quotes of several can be computed at once. Node types of one GPU share their replicas' runs (the run caches key a
replica without its node, :mod:`planner.speed.step_cache`), so they form one job, quoted one after another in it.
Each job runs in a worker forked from the calling process (a copy of its loaded data and caches: nothing is imported
or read again) and sends back its answers with everything it added to the result caches (runs, capacities, quotes:
:mod:`planner.speed.result_cache`) and the number of simulations it ran, which the caller adopts. The answers are
those of computing the items one after another (tested), and what follows (another objective, the Fleet page's
checks across draws of the traffic) reuses the workers' runs as if they had been computed here.

Workers: the CPUs this process may use (its affinity, within its container's CPU quota), at most one per job, or
``PLANNER_WORKERS`` (1: one after another); computations asked at the same time (a server's visitors) share that
many (:class:`WorkerSlots`), and one that finds fewer than two free runs in its caller; a worker never forks workers
of its own. Where processes are not forked (platforms other than Linux), the jobs run one after another in the
caller; so do the jobs of a worker that dies (out of memory, killed).

>>> from planner.errors import InputError
>>> def halve(n):
...     if n % 2:
...         raise InputError("n", n, "an even number")
...     return n // 2
>>> sorted((i, str(a)) for i, a in side_by_side(halve, [4, 6, 7], workers=2))
[(0, '2'), (1, '3'), (2, 'n = 7 is not allowed: expected an even number')]
"""

from __future__ import annotations

import math
import multiprocessing
import os
import sys
import threading
import warnings
from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, TypeVar

from planner.errors import InputError, PlannerError
from planner.speed.result_cache import RESULT_CACHES, Portable
from planner.speed.step_cache import SIMULATIONS

#: The environment variable that sets how many worker processes quote node types side by side (1: none).
WORKERS_ENV = "PLANNER_WORKERS"

T = TypeVar("T")
R = TypeVar("R")

#: In a worker: [compute, items, the item indices of each job], inherited from the process that forked it.
_JOB: list[Any] = []


#: Where this process's control group keeps its CPU quota (a container's ``--cpus``).
CGROUP_ROOT = Path("/sys/fs/cgroup")


def usable_cpus() -> int:
    """The CPUs this process may use: its affinity where the platform tells it (else the machine's count), never more
    than its control group's CPU quota (:func:`cgroup_cpu_quota`).

    >>> usable_cpus() >= 1
    True
    """
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    quota = cgroup_cpu_quota()
    return max(1, min(cpus, quota)) if quota is not None else cpus


def cgroup_cpu_quota(root: Path = CGROUP_ROOT) -> int | None:
    """The CPU quota of the control group under ``root`` in whole CPUs, rounded up, or None (no quota, or none that
    can be read): cgroup v2's ``cpu.max`` (``150000 100000``: 1.5 CPUs, so 2), else v1's ``cpu/cpu.cfs_quota_us`` over
    ``cpu/cpu.cfs_period_us`` (-1: none). Inside a container the root is the container's own group."""
    for quota_file, period_file in (("cpu.max", None), ("cpu/cpu.cfs_quota_us", "cpu/cpu.cfs_period_us")):
        try:
            fields = (root / quota_file).read_text().split()
            if period_file is not None:
                fields = [fields[0], (root / period_file).read_text().strip()]
            quota, period = fields[0], int(fields[1])
            if quota in ("max", "-1"):
                return None
            return max(1, math.ceil(int(quota) / period)) if period > 0 else None
        except (OSError, ValueError, IndexError):
            continue
    return None


def configured_workers(workers: int | None = None) -> int:
    """The worker processes this process runs at most, all computations together: ``workers``, else
    ``PLANNER_WORKERS``, else :func:`usable_cpus`."""
    if workers is not None:
        return max(1, workers)
    text = os.environ.get(WORKERS_ENV, "").strip()
    if not text:
        return usable_cpus()
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise InputError(WORKERS_ENV, text, "a whole number of worker processes, 1 or more (1: none)")
    return count


def worker_count(jobs: int, workers: int | None = None) -> int:
    """How many workers ``jobs`` jobs get: :func:`configured_workers`, never more than the jobs.

    >>> worker_count(4, 2), worker_count(1, 8), worker_count(3, 1)
    (2, 1, 1)
    """
    return max(1, min(jobs, configured_workers(workers)))


class WorkerSlots:
    """The worker processes running now for this process's computations, never more than it is configured to run
    (:func:`configured_workers`): on a server, the plans of visitors who ask at the same time share the CPUs rather
    than each forking one worker per CPU.

    >>> slots = WorkerSlots()
    >>> slots.take(3, limit=4), slots.take(3, limit=4), slots.take(3, limit=4)
    (3, 1, 0)
    >>> slots.give(4); slots.busy
    0
    """

    def __init__(self) -> None:
        self.busy = 0
        self.lock = threading.Lock()

    def take(self, wanted: int, limit: int) -> int:
        """Up to ``wanted`` slots, as many as leave at most ``limit`` busy; how many were taken."""
        with self.lock:
            taken = max(0, min(wanted, limit - self.busy))
            self.busy += taken
            return taken

    def give(self, count: int) -> None:
        with self.lock:
            self.busy -= count

    def renew(self) -> None:
        """In a forked worker: none of the parent's workers are its own, and its lock is new."""
        self.busy, self.lock = 0, threading.Lock()


#: This process's worker processes, all computations together.
WORKER_SLOTS = WorkerSlots()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=WORKER_SLOTS.renew)


def _forks() -> bool:
    """Whether worker processes are forked here (Linux: a copy of this process, its loaded data and caches)."""
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def outcome_of(compute: Callable[[T], R], item: T) -> R | PlannerError:
    """``compute(item)``, or the PlannerError it raised."""
    try:
        return compute(item)
    except PlannerError as exc:
        return exc


def _start_worker(compute: Callable[[Any], Any], items: Sequence[Any], jobs: list[list[int]]) -> None:
    _JOB[:] = [compute, items, jobs]


def _run_job(job: int) -> tuple[list[tuple[int, Portable]], list[tuple[str, list[tuple[tuple, Portable]]]], int]:
    """In a worker: job ``job``'s answers, what it added to each result cache, and the simulations it ran."""
    compute, items, jobs = _JOB  # set by _start_worker
    kept = {name: cache.kept_keys() for name, cache in RESULT_CACHES.items()}
    simulations = SIMULATIONS.count
    answers = [(i, Portable.of(outcome_of(compute, items[i]))) for i in jobs[job]]
    added = [
        (name, [(key, Portable.of(entry)) for key, entry in cache.added_since(kept[name])])
        for name, cache in RESULT_CACHES.items()
    ]
    return answers, added, SIMULATIONS.count - simulations


def _adopted(answers, added, simulations: int) -> list[tuple[int, Any]]:
    """A job's answers, once what it added to the result caches is kept here and its simulations counted."""
    for name, entries in added:
        cache = RESULT_CACHES.get(name)
        if cache is not None and entries:
            cache.adopt([(key, portable.value()) for key, portable in entries])
    SIMULATIONS.add(simulations)
    return [(i, portable.value()) for i, portable in answers]


def side_by_side(
    compute: Callable[[T], R],
    items: Sequence[T],
    *,
    group: Callable[[T], Hashable] | None = None,
    workers: int | None = None,
    kept: Callable[[T], bool] | None = None,
) -> Iterator[tuple[int, R | PlannerError]]:
    """``(index, compute(items[index]))`` for every item, as each is done (a PlannerError it raised in its place),
    items of one ``group`` computed one after another in one job, jobs side by side in :func:`worker_count`
    workers (see the module's docstring); the items ``kept`` says are answered already (kept by the core's caches)
    first, in order, here. Other exceptions are raised."""
    if kept is not None:
        new = []
        for i, item in enumerate(items):
            if kept(item):
                yield i, outcome_of(compute, item)
            else:
                new.append(i)
        for place, answer in side_by_side(compute, [items[i] for i in new], group=group, workers=workers):
            yield new[place], answer
        return
    jobs: dict[Hashable, list[int]] = {}
    for i, item in enumerate(items):
        jobs.setdefault(group(item) if group is not None else i, []).append(i)
    job_items = list(jobs.values())
    wanted = worker_count(len(job_items), workers)
    count = WORKER_SLOTS.take(wanted, configured_workers(workers)) if wanted > 1 and _forks() and not _JOB else 0
    if count < 2:  # one CPU, one job, no fork here, in a worker, or the CPUs busy with other computations' workers
        WORKER_SLOTS.give(count)
        for i, item in enumerate(items):
            yield i, outcome_of(compute, item)
        return
    left: list[int] = []  # jobs of a worker that died: computed here
    try:
        pool = ProcessPoolExecutor(
            count,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_start_worker,
            initargs=(compute, items, job_items),
        )
    except BaseException:
        WORKER_SLOTS.give(count)
        raise
    try:
        with warnings.catch_warnings():  # Python 3.12+ warns of forking a process with threads: the locks of ours
            # that a thread of the caller's may hold are made anew in each worker (planner/speed/result_cache.py)
            warnings.filterwarnings(
                "ignore", message=r".*use of fork\(\) may lead to deadlocks", category=DeprecationWarning
            )
            pending: dict[Future, int] = {pool.submit(_run_job, j): j for j in range(len(job_items))}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                job = pending.pop(future)
                try:
                    answers = _adopted(*future.result())
                except BrokenProcessPool:
                    left.append(job)
                    continue
                yield from answers
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        WORKER_SLOTS.give(count)
    for job in sorted(left):
        for i in job_items[job]:
            yield i, outcome_of(compute, items[i])


def with_progress(
    answers: Iterator[tuple[int, R]], items: Sequence[T], before_item: Callable[[int, T], None]
) -> Iterator[tuple[int, R]]:
    """``answers`` (:func:`side_by_side`'s, for ``items``) with ``before_item(done, item)`` called before the first
    (``done`` 0) and after each answer while items are left, ``item`` the first of those not answered yet: where
    items run one after another, the next one computed (a page's progress bar says what is being done).

    >>> seen = []
    >>> list(with_progress(iter([(1, "b"), (0, "a")]), "xy", lambda done, item: seen.append((done, item)))), seen
    ([(1, 'b'), (0, 'a')], [(0, 'x'), (1, 'x')])
    """
    left = list(range(len(items)))
    if left:
        before_item(0, items[0])
    for done, (i, answer) in enumerate(answers, start=1):
        left.remove(i)
        yield i, answer
        if left:
            before_item(done, items[left[0]])


def each_in_order(
    compute: Callable[[T], R],
    items: Sequence[T],
    *,
    group: Callable[[T], Hashable] | None = None,
    workers: int | None = None,
    before_item: Callable[[int, T], None] = lambda done, item: None,
) -> list[R]:
    """``compute(item)`` of every item, in the items' order, computed as :func:`side_by_side` computes them, with
    ``before_item`` as :func:`with_progress` calls it; the first PlannerError an item raised is raised.

    >>> each_in_order(lambda n: n * n, [3, 1, 2], workers=2)
    [9, 1, 4]
    """
    found: dict[int, R] = {}
    for i, answer in with_progress(side_by_side(compute, items, group=group, workers=workers), items, before_item):
        if isinstance(answer, PlannerError):
            raise answer
        found[i] = answer
    return [found[i] for i in range(len(items))]
