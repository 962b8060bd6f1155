"""Long core work off the script thread: a page asks for a result by key and draws a progress bar until it is in.

A page starts the work once per key in a background thread (``Jobs.start``: a second session, or the same
session's next rerun, asking for the same key shares the running job). Work not done within ``GRACE_S`` leaves
the run with a progress bar (and what the work has shown so far) and no result: the run ends at once, so a page
answers a widget change in a fraction of a second whatever the work costs, and the server reruns the page as the
work moves on and once it is done (ui/_rerun.py: with the visitor's latest page and values, never while a run of
theirs is in progress). The work is pure core calls (``planner`` never draws), so the thread needs no Streamlit
context. Outside a live server (AppTest, bare mode) the run waits for the result.

>>> jobs = Jobs()
>>> job = jobs.start("k", lambda job: 6 * 7, steps=1)
>>> job.result()
42
>>> jobs.start("k", lambda job: 0, steps=1) is job
True
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any

import streamlit as st

from ui._rerun import page_rerun
from ui._timing import timed

#: Finished jobs kept (their results are what a rerun draws); running ones are never dropped.
MAX_JOBS = 32
#: How often the progress bar asks the job whether it is done, seconds.
POLL_S = 0.25
#: How long a run waits for work it asked for before it ends under a progress bar, seconds: work this short is
#: drawn in the same run, without a bar or a second run.
GRACE_S = 0.08
#: The least time between two reruns a job's progress asks for, seconds (its end asks at once).
PROGRESS_RERUN_S = 1.0


class Job:
    """One piece of work: its progress (steps done of ``steps``, with a label) and, once finished, its result or
    its error (raised again to every reader)."""

    def __init__(self, steps: int, ahead: bool = False) -> None:
        self.steps = max(1, steps)
        #: Work drawn ahead of a click no one has made yet (it waits for the visitors' own work, never the reverse).
        self.ahead = ahead
        self.done_steps = 0
        self.label = ""
        #: What the work has to show before it is done (drawn under the progress bar), and how often it changed.
        self.partial: Any = None
        self.partial_version = 0
        self.finished = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None
        #: Who to tell when the work moves on or ends (a page waiting for it, by session), and when it last did.
        self._watchers: dict[Hashable, Callable[[], None]] = {}
        self._watch_lock = threading.Lock()
        self._told = 0.0

    def watch(self, who: Hashable, tell: Callable[[], None]) -> None:
        """Call ``tell()`` as the work shows more or finishes a step (at most every ``PROGRESS_RERUN_S``) and once
        it ends; at once if it has ended already. One watcher per ``who`` (a page asking again replaces it)."""
        with self._watch_lock:
            if not self.finished.is_set():
                self._watchers[who] = tell
                return
        tell()

    def _tell(self, final: bool = False) -> None:
        with self._watch_lock:
            now = time.monotonic()
            if not final and now - self._told < PROGRESS_RERUN_S:
                return
            self._told = now
            watchers = list(self._watchers.values())
            if final:
                self._watchers.clear()
        for tell in watchers:
            with contextlib.suppress(Exception):  # a watcher that cannot be told (session gone) costs others nothing
                tell()

    def end(self) -> None:
        """The work has its value or its error: readers stop waiting and watchers are told."""
        with self._watch_lock:
            self.finished.set()
        self._tell(final=True)

    def advance(self, label: str) -> None:
        """Called by the work as it goes: one more step is starting, described by ``label``."""
        self.label = label

    def show(self, partial: Any) -> None:
        """Called by the work as it goes: ``partial`` is what there is to show so far."""
        self.partial = partial
        self.partial_version += 1
        self._tell()

    def step_done(self) -> None:
        self.done_steps = min(self.steps, self.done_steps + 1)
        self._tell()

    @property
    def fraction(self) -> float:
        return self.done_steps / self.steps

    def result(self) -> Any:
        """Wait for the work; its value, or its error raised again."""
        self.finished.wait()
        if self.error is not None:
            raise self.error.with_traceback(None)
        return self.value


class Jobs:
    """A bounded, thread-safe table of jobs by key, shared by every session of a server."""

    def __init__(self, maxsize: int = MAX_JOBS) -> None:
        self.maxsize = maxsize
        self.entries: OrderedDict[Hashable, Job] = OrderedDict()
        self.lock = threading.Lock()

    def start(self, key: Hashable, work: Callable[[Job], Any], steps: int, name: str = "", ahead: bool = False) -> Job:
        """The job of ``key``: the one already started, else ``work(job)`` started now in a daemon thread (``name``:
        what it computes, in the render log of `make bench-app`; ``ahead``: work drawn ahead of a click)."""
        with self.lock:
            job = self.entries.get(key)
            if job is not None:
                self.entries.move_to_end(key)
                return job
            job = self.entries[key] = Job(steps, ahead)
            finished = [k for k, j in self.entries.items() if j.finished.is_set()]
            for old in finished[: max(0, len(self.entries) - self.maxsize)]:
                del self.entries[old]

        def run() -> None:
            try:
                with timed("job", name):  # `make bench-app`: the work's own seconds
                    job.value = work(job)
            except BaseException as exc:  # raised again to whoever reads the result
                job.error = exc
            finally:
                job.end()

        threading.Thread(target=run, daemon=True, name="planner-page-work").start()
        return job

    def running(self, ahead_too: bool = True) -> bool:
        """Whether any job is still working (``ahead_too`` False: any but work drawn ahead of a click)."""
        with self.lock:
            return any(not job.finished.is_set() and (ahead_too or not job.ahead) for job in self.entries.values())


class Activity:
    """The script runs in progress on a server and when the last one ended: background work that no visitor asked
    for (ui/_warm_up.py) waits for a quiet moment, so that it never slows a visitor's page."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = 0
        self.last_end = time.monotonic()

    @contextmanager
    def run(self) -> Iterator[None]:
        """Around one script run (app.py)."""
        with self.lock:
            self.active += 1
        try:
            yield
        finally:
            with self.lock:
                self.active -= 1
                self.last_end = time.monotonic()

    def quiet_for_s(self) -> float:
        """Seconds since the last script run ended; 0 while one runs."""
        with self.lock:
            return 0.0 if self.active else time.monotonic() - self.last_end


#: Seconds with no script run and no job before work no visitor asked for goes on. A visitor's next click usually
#: comes sooner after a page is drawn; one that lands while such work runs shares the interpreter with it until
#: its current step ends (for the Fleet warm-up, one simulation: tens of milliseconds).
QUIET_S = 5.0


def wait_until_quiet(jobs: Jobs, activity: Activity, quiet_s: float = QUIET_S, ahead: bool = False) -> None:
    """Return once no job runs and no script run has started for ``quiet_s`` seconds. Work drawn ahead of a click
    (``ahead``, itself such a job) waits only for the visitors' own jobs: two of them never wait for each other."""
    while jobs.running(ahead_too=not ahead) or activity.quiet_for_s() < quiet_s:
        time.sleep(POLL_S)


#: Seconds of quiet before work drawn ahead of a click (a quote's charts, for its PDF) goes on: a visitor's next
#: widget change, usually sooner, runs without it, and a PDF clicked before it draws its charts itself.
AHEAD_QUIET_S = 1.0


@st.cache_resource(show_spinner=False)
def server_activity() -> Activity:
    """The server's one record of script runs."""
    return Activity()


@st.cache_resource(show_spinner=False)
def server_jobs() -> Jobs:
    """The server's one table of jobs."""
    return Jobs()


def browser_session() -> bool:
    """Whether a browser is connected to this run (AppTest and bare mode have no request headers)."""
    try:
        return bool(st.context.headers)
    except Exception:  # no script context at all
        return False


def result_or_progress(
    job: Job, what: str, draw_partial: Callable[[Any], None] | None = None, *, wait: bool = False
) -> Any:
    """``job``'s result, or None while it works (in a browser session): then a progress bar of its steps above the
    page, under it what the work has shown so far (:meth:`Job.show`), drawn by ``draw_partial``, and the run ends;
    the server reruns the page as the work moves on and when it is done (ui/_rerun.py).

    Work done within ``GRACE_S`` is returned in the same run. With ``wait`` (a page that draws, below the result,
    inputs whose values cannot outlive a run that leaves them out, such as uploaded files), outside a live server
    (AppTest, bare mode), or where the server cannot rerun a page, the run waits for the result, updating the bar a
    few times a second: each update is a point where a newer widget change interrupts it.
    """
    slot = st.empty()  # in every run: the elements below keep their places (an open expander stays open)
    shown = st.empty() if draw_partial is not None else None
    if job.finished.is_set() or not browser_session() or job.finished.wait(GRACE_S):
        return job.result()
    rerun = None if wait else page_rerun()
    if rerun is not None:
        job.watch(rerun.session_id, rerun)
        slot.progress(job.fraction, text=job.label or f"{what}...")
        if shown is not None and job.partial_version:
            with shown.container():
                draw_partial(job.partial)
        return None
    bar = slot.progress(job.fraction, text=job.label or f"{what}...")
    version = 0
    while not job.finished.wait(POLL_S):
        bar.progress(job.fraction, text=job.label or f"{what}...")
        if shown is not None and job.partial_version != version:
            version, partial = job.partial_version, job.partial
            with shown.container():
                draw_partial(partial)
    slot.empty()
    if shown is not None:
        shown.empty()
    return job.result()
