"""Worker processes for the search: its plans, screens and simulations on every CPU the process may use.

Each is a pure function of a point's configuration (its layout, speculator, K and batch cap), kept by the
:class:`~planner.decisions.search.evaluate.Evaluator` under that key. Where the space is large
(``PARALLEL_MIN_POINTS``), the process has CPUs to spare and may fork safely (a process of one thread: the command
line, never a page's server), :class:`Workers` forks one process per spare CPU (each inherits the catalog, the kernel
tables and the points) and deals the layouts out: each process, this one included, plans, screens and simulates the
points of its own layouts, whose step models and priced passes it keeps warm, and each worker sends back what it
found for every key (a :class:`~planner.decisions.search.evaluate.PlanSummary`, two step times, a simulated run).
The search then takes every figure from those kept values exactly as it does without workers: the same numbers,
only sooner. A layout's speculators stay in one process, so the target's passes priced for one serve the others.

A worker that fails or dies leaves its share to this process, which computes it as it would alone; a run that
stopped with an error is computed here again (so the error raised is this process's own).

>>> from planner.decisions.search.space import Objectives, SearchSpace, SearchWorkload
>>> from planner.decisions.search.evaluate import Evaluator
>>> space = SearchSpace.build(target="Llama-3.1-8B", nodes=("1x-h100-sxm-80gb",), methods=("none",),
...                           dtypes=("bf16", "fp8"), batch_caps=(8, 64))
>>> ev = Evaluator(space, SearchWorkload(requests_per_s=5, prompt_tokens=512, output_tokens=128), Objectives())
>>> points = ev.points()
>>> [len(share) for share in deal(ev, points, 2)]  # two layouts (bf16, fp8), one per process
[2, 2]
>>> with Workers(ev, points) as workers:  # four points: searched here alone
...     workers.plan_and_screen(); workers.simulate(points)
>>> workers.count, sorted({p.stage for p in points})
(1, ['screened'])
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from planner.decisions.search.evaluate import Evaluator
from planner.decisions.search.points import SearchPoint
from planner.defaults import MAX_SEARCH_PROCESSES
from planner.errors import PlannerError

#: Spaces smaller than this are searched in this process alone: a worker costs a fork and the step models it
#: prices again, which only a large space repays (the default search has about 10,000 points).
PARALLEL_MIN_POINTS = 2_000


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity where the system says, else the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def can_fork() -> bool:
    """Whether this process may fork workers safely: the ``fork`` start method exists and no other thread runs (a
    thread holding a lock at the fork would leave it held in the worker for good)."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def worker_count(points: int, wanted: int | None = None) -> int:
    """Processes to search ``points`` points in: ``wanted`` (default: one per usable CPU, at most
    ``MAX_SEARCH_PROCESSES``, where the space has ``PARALLEL_MIN_POINTS`` or more), or one where this process may not
    fork.

    >>> worker_count(500), worker_count(500, wanted=1)
    (1, 1)
    """
    if wanted is None:
        wanted = min(usable_cpus(), MAX_SEARCH_PROCESSES) if points >= PARALLEL_MIN_POINTS else 1
    return wanted if wanted > 1 and can_fork() else 1


def plan_all(ev: Evaluator, points: list[SearchPoint]) -> None:
    """Plan every point; a layout and speculator that does not fit (or start) at its smallest K and batch cap is
    marked for every larger one without planning it (both only add memory)."""
    groups: dict[tuple, list[SearchPoint]] = defaultdict(list)
    for p in points:
        groups[ev.group(p)].append(p)
    for members in groups.values():
        members.sort(key=lambda p: (p.k or 0, p.max_num_seqs or 0))
        probe = members[0]
        ev.plan(probe)
        if probe.fits and probe.starts:
            for p in members[1:]:
                ev.plan(p)
        else:
            for p in members[1:]:
                ev.mark_like(p, probe)


def screen_all(ev: Evaluator, points: list[SearchPoint]) -> None:
    """Screen every point that fits and starts."""
    for p in points:
        if p.fits and p.starts:
            ev.screen(p)


def deal(ev: Evaluator, points: list[SearchPoint], count: int) -> list[list[SearchPoint]]:
    """The points in ``count`` shares of whole layouts, the largest layouts dealt first to the lightest share."""
    layouts: dict[tuple, list[SearchPoint]] = defaultdict(list)
    for p in points:
        layouts[ev.layout(p)].append(p)
    dealt: list[list[SearchPoint]] = [[] for _ in range(count)]
    for members in sorted(layouts.values(), key=len, reverse=True):
        min(dealt, key=len).extend(members)
    return [share for share in dealt if share]


@dataclass
class _Worker:
    process: Any
    conn: Connection
    alive: bool = True


def _serve(conn: Connection, ev: Evaluator, share: list[SearchPoint], by_index: dict[int, SearchPoint]) -> None:
    """A worker's loop: plan and screen its share, or simulate the points named, until told to stop."""
    kept = ev.kept
    while True:
        request, payload = conn.recv()
        if request == "stop":
            return
        try:
            if request == "prepare":
                had_summaries, had_steps = len(kept.summaries), len(kept.steps)
                plan_all(ev, share)
                screen_all(ev, share)
                answer: Any = (list(kept.summaries.items())[had_summaries:], list(kept.steps.items())[had_steps:])
            else:  # simulate
                answer = []
                for index in payload:
                    point = by_index[index]
                    ev.simulate(point)
                    run = kept.runs[ev.plan_key(point)]
                    if not isinstance(run, PlannerError):  # an error is raised again where it is used
                        answer.append((ev.plan_key(point), run))
            conn.send(("ok", answer))
        except Exception as exc:  # any failure leaves the share to the parent
            conn.send(("failed", repr(exc)))


class Workers:
    """Forked processes that each plan, screen and simulate a share of the search's layouts (``count`` − 1 of
    them: this process does the first share). With ``count`` 1 nothing is forked and every method leaves the work
    to the search's own loop. Use as a context manager: the workers stop when it closes."""

    def __init__(self, ev: Evaluator, points: list[SearchPoint], count: int | None = None) -> None:
        self.ev, self.points = ev, points
        wanted = worker_count(len(points), count)
        self.shares = deal(ev, points, wanted) if wanted > 1 else [points]
        self.count = len(self.shares)
        self.workers: list[_Worker] = []
        self.owner: dict[tuple, int] = {}
        for i, share in enumerate(self.shares):
            for p in share:
                self.owner[ev.layout(p)] = i
        #: Seconds the last screen of every point here took (after planning, in every process at once).
        self.screen_s = 0.0

    def __enter__(self) -> Workers:
        if self.count > 1:
            context = multiprocessing.get_context("fork")
            by_index = {p.index: p for p in self.points}
            for share in self.shares[1:]:
                ours, theirs = context.Pipe()
                process = context.Process(target=_serve, args=(theirs, self.ev, share, by_index), daemon=True)
                process.start()
                theirs.close()
                self.workers.append(_Worker(process, ours))
        return self

    def __exit__(self, *exc_info) -> None:
        for worker in self.workers:
            if worker.alive:
                with contextlib.suppress(OSError):
                    worker.conn.send(("stop", None))
            worker.process.join(timeout=5)
            if worker.process.is_alive():
                worker.process.kill()
            worker.conn.close()
        self.workers = []

    def _ask(self, requests: list[tuple[_Worker, str, Any]]) -> list[tuple[_Worker, bool]]:
        """Send each worker its request (this process works on its own share meanwhile): each worker, and whether
        the request reached it (:meth:`_answer` then reads the answer)."""
        sent = []
        for worker, request, payload in requests:
            if not worker.alive:
                sent.append((worker, False))
                continue
            try:
                worker.conn.send((request, payload))
                sent.append((worker, True))
            except OSError:
                worker.alive = False
                sent.append((worker, False))
        return sent

    @staticmethod
    def _answer(worker: _Worker, was_sent: bool) -> Any | None:
        """The worker's answer, or None where the request never reached it, it failed or it died."""
        if not was_sent:
            return None
        try:
            status, answer = worker.conn.recv()
        except (EOFError, OSError):
            worker.alive = False
            return None
        return answer if status == "ok" else None

    def plan_and_screen(self, planned_fitting: Callable[[int], None] = lambda fitting: None) -> None:
        """Plan every point and screen those that fit: each share in its process, then every point here from the
        kept values (a failed worker's share is computed here). ``planned_fitting`` is told how many fit and start
        once every point is planned, before the screen (a page's progress bar)."""
        ev = self.ev
        if self.workers:
            sent = self._ask([(w, "prepare", None) for w in self.workers])
            plan_all(ev, self.shares[0])
            screen_all(ev, self.shares[0])
            for worker, was_sent in sent:
                answer = self._answer(worker, was_sent)
                if answer is not None:
                    summaries, steps = answer
                    ev.kept.summaries.update(summaries)
                    ev.kept.steps.update(steps)
        plan_all(ev, self.points)
        planned = time.perf_counter()
        planned_fitting(sum(1 for p in self.points if p.fits and p.starts))
        screen_all(ev, self.points)
        self.screen_s = time.perf_counter() - planned

    def simulate(self, points: list[SearchPoint]) -> None:
        """Simulate ``points`` (each run kept by the evaluator) in the processes that own their layouts; the search
        then takes each run from the evaluator."""
        if not self.workers:
            return
        mine: list[list[SearchPoint]] = [[] for _ in range(self.count)]
        for p in points:
            mine[self.owner.get(self.ev.layout(p), 0)].append(p)
        sent = self._ask(
            [(w, "simulate", [p.index for p in mine[i + 1]]) for i, w in enumerate(self.workers) if mine[i + 1]]
        )
        for p in mine[0]:
            self.ev.simulate(p)
        for worker, was_sent in sent:
            answer = self._answer(worker, was_sent)
            if answer is not None:
                self.ev.kept.runs.update(answer)
