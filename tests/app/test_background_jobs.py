"""Long page work in the background (ui/_background.py): one job per key shared by every asker, its error raised
to every reader, finished jobs forgotten beyond the bound, running ones never."""

from __future__ import annotations

import threading
import time

import pytest

from planner.errors import PlannerError
from ui._background import Activity, Jobs, wait_until_quiet


def test_one_job_per_key_and_its_result_for_every_reader():
    jobs, calls, release = Jobs(), [], threading.Event()

    def work(job):
        calls.append(1)
        job.advance("working")
        release.wait(30)
        job.step_done()
        return "plan"

    first = jobs.start("key", work, steps=2)
    assert jobs.start("key", work, steps=2) is first and jobs.running()
    release.set()
    assert first.result() == "plan" and first.result() == "plan"
    assert calls == [1] and first.fraction == 0.5 and not jobs.running()


def test_an_error_reaches_every_reader():
    jobs = Jobs()

    def work(job):
        raise PlannerError("no node type fits this model", field="fleet_nodes")

    job = jobs.start("bad", work, steps=1)
    for _ in range(2):
        with pytest.raises(PlannerError, match="no node type fits"):
            job.result()


def test_finished_jobs_are_forgotten_beyond_the_bound_and_running_ones_kept():
    jobs, release = Jobs(maxsize=2), threading.Event()
    slow = jobs.start("slow", lambda job: release.wait(30), steps=1)
    for n in range(4):
        jobs.start(n, lambda job, n=n: n, steps=1).result()
    jobs.start("last", lambda job: 0, steps=1).result()
    assert "slow" in jobs.entries and len(jobs.entries) <= 3
    release.set()
    assert slow.result() is True


def test_work_no_one_asked_for_waits_for_a_quiet_moment():
    """The warm-up (ui/_warm_up.py) goes on only once no script run and no job has been active for a while."""
    jobs, activity, release, returned = Jobs(), Activity(), threading.Event(), threading.Event()
    job = jobs.start("visitor's plan", lambda job: release.wait(30), steps=1)
    waiter = threading.Thread(target=lambda: (wait_until_quiet(jobs, activity, quiet_s=0.2), returned.set()))
    with activity.run():
        assert activity.quiet_for_s() == 0.0
        waiter.start()
        assert not returned.wait(0.6)  # a script run in progress
    release.set()
    job.result()
    assert returned.wait(30)  # the run ended and the job finished: quiet
    assert activity.quiet_for_s() > 0.0


def test_a_job_alone_holds_the_quiet_back():
    jobs, activity, release, returned = Jobs(), Activity(), threading.Event(), threading.Event()
    job = jobs.start("charts", lambda job: release.wait(30), steps=1)
    waiter = threading.Thread(target=lambda: (wait_until_quiet(jobs, activity, quiet_s=0.0), returned.set()))
    waiter.start()
    assert not returned.wait(0.6)  # no script run, but a job works
    release.set()
    job.result()
    assert returned.wait(30)


def test_work_drawn_ahead_waits_for_the_visitors_jobs_and_never_for_other_work_drawn_ahead():
    """A quote's charts, drawn ahead of a PDF click, wait for a visitor's plan and a quiet moment; two such jobs
    never wait for each other (each would hold the other back for ever)."""
    jobs, activity, release = Jobs(), Activity(), threading.Event()
    plan = jobs.start("plan", lambda job: release.wait(30), steps=1)
    drawn: list[str] = []

    def charts(name):
        def work(job):
            wait_until_quiet(jobs, activity, quiet_s=0.0, ahead=True)
            drawn.append(name)
            return name

        return work

    first = jobs.start("charts 1", charts("one"), steps=1, ahead=True)
    second = jobs.start("charts 2", charts("two"), steps=1, ahead=True)
    time.sleep(0.6)
    assert drawn == []  # the plan still works
    release.set()
    assert first.finished.wait(30) and second.finished.wait(30), "work drawn ahead waited for itself"
    assert plan.result() is True and first.result() == "one" and second.result() == "two"
    assert not jobs.running()


def test_what_work_shows_before_it_is_done_is_kept_with_how_often_it_changed():
    """The Fleet page's job shows each node type's own plan as it is done (ui/fleet.py), drawn under the bar."""
    jobs, release = Jobs(), threading.Event()

    def work(job):
        job.show(("8x-h100-sxm-80gb",))
        release.wait(30)
        job.show(("8x-h100-sxm-80gb", "8x-h200-sxm-141gb"))
        return "plan"

    job = jobs.start("shown", work, steps=2)
    deadline = time.monotonic() + 30
    while job.partial_version < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert job.partial == ("8x-h100-sxm-80gb",) and job.partial_version == 1
    release.set()
    assert job.result() == "plan" and job.partial_version == 2 and len(job.partial) == 2


def test_a_watching_page_is_told_as_work_moves_on_at_most_so_often_and_always_at_its_end():
    """A page that ended its run under a progress bar is rerun by the server when it is told (ui/_rerun.py)."""
    jobs, release, told = Jobs(), threading.Event(), []
    shown = threading.Event()

    def work(job):
        job.show("first node type")  # told: the first news
        job.step_done()  # within PROGRESS_RERUN_S of it: not told again
        shown.set()
        release.wait(30)
        return "plan"

    job = jobs.start("watched", work, steps=2)
    job.watch("session A", lambda: told.append("A"))
    job.watch("session A", lambda: told.append("A again"))  # the same page asking again replaces its watcher
    assert shown.wait(30)
    release.set()
    assert job.result() == "plan"
    deadline = time.monotonic() + 30
    while "A again" not in told and time.monotonic() < deadline:
        time.sleep(0.01)
    assert told[-1] == "A again" and told.count("A") + told.count("A again") <= 2, told
    late = []
    job.watch("session B", lambda: late.append("B"))  # a page asking after the end is told at once
    assert late == ["B"]


def test_a_watcher_that_cannot_be_told_costs_the_others_nothing():
    jobs, told = Jobs(), []
    release = threading.Event()

    def broken():
        raise RuntimeError("that session has gone")

    job = jobs.start("two watchers", lambda job: release.wait(30), steps=1)
    job.watch("gone", broken)
    job.watch("here", lambda: told.append("here"))
    release.set()
    job.result()
    deadline = time.monotonic() + 30
    while not told and time.monotonic() < deadline:
        time.sleep(0.01)
    assert told == ["here"]
