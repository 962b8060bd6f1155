"""A page whose answer takes long ends its run under a progress bar and the server draws the answer when it is in
(ui/_background.py, ui/_rerun.py): the run that asked never waits for the work, every input keeps its value
through the server's reruns (the browser mounting a widget only in one of them included), and a click to
another page made while the work runs is never undone by them."""

from __future__ import annotations

import time

from playwright.sync_api import expect

from planner.scenario import Scenario
from tests.e2e.conftest import logged_page
from tests.e2e.steps import WAIT_MS, render_log, settled

#: The Fleet page's default node types, as its multiselect shows them.
DEFAULT_NODES = Scenario().fleet_nodes


def _chosen_nodes(page) -> list[str]:
    box = page.locator("[data-testid=stMultiSelect]").filter(has_text="Node types to compare")
    removable = box.get_by_role("button", name="Remove ")  # one "Remove <node>" per chosen node type
    return [button.get_attribute("aria-label").removeprefix("Remove ") for button in removable.all()]


def _logged(log, kind: str, count: int, name: str | None = None) -> None:
    """Wait until the server's render log holds ``count`` entries of ``kind`` (named ``name``, when given)."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while len([e for e in render_log(log, kind) if name is None or e["name"] == name]) < count:
        assert time.monotonic() < deadline, f"fewer than {count} {name or kind} entries in the render log"
        time.sleep(0.05)


def _plan_jobs_done(log, count: int) -> None:
    _logged(log, "job", count, "fleet plan")


def _set_tpot(page, value: str) -> None:
    box = page.locator("[data-testid=stMain]").get_by_label("TPOT objective (ms, 0 = none)", exact=True)
    box.fill(value)
    box.press("Enter")


def _fleet_drawn(page, link: str) -> None:
    """Open ``link`` and wait until its plan is drawn and the page has settled."""
    page.goto(link)
    expect(page.get_by_role("heading", name="Export the quote")).to_be_visible(timeout=WAIT_MS)
    settled(page)


def _inputs_kept(page, rate: str = "20") -> None:
    """Every Fleet input but the objective as the link set it: the browser sent its values back."""
    expect(page.get_by_text("Pick at least one node type")).to_have_count(0)
    assert page.get_by_label("Requests per second", exact=True).input_value() == f"{rate}.00"
    assert tuple(_chosen_nodes(page)) == DEFAULT_NODES


def test_a_fleet_change_ends_its_run_at_once_and_the_plan_follows_with_every_input_kept(browser, tmp_path):
    log = tmp_path / "runs.jsonl"
    asked = 0
    with logged_page(browser, log) as (page, url):
        # three visitors, each in a new browser, open a link with a request rate nobody has asked for yet (every
        # replica simulated anew) and change its objective as soon as the server has rerun the page once: the browser
        # mounts each widget in one of the server's runs or the next
        for rate, changed in (("21", "57"), ("23", "61"), ("27", "53")):
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            visitor = context.new_page()
            runs = len(render_log(log, "run"))
            visitor.goto(f"{url}/fleet?rps={rate}")
            _logged(log, "run", runs + 2)  # the visitor's first run, under a progress bar, and the server's first rerun
            _set_tpot(visitor, changed)
            asked += 2
            _plan_jobs_done(log, asked)  # both plans computed, the second only if every other input was sent back
            expect(visitor.get_by_role("heading", name="Export the quote")).to_be_visible(timeout=WAIT_MS)
            settled(visitor)
            _inputs_kept(visitor, rate)
            context.close()
        # and a change once the page has settled (the first visitor's plan, already made): the run that asks ends at
        # once, the plan follows
        _fleet_drawn(page, f"{url}/fleet?rps=21&slo=57")
        _set_tpot(page, "67")
        _plan_jobs_done(log, asked + 1)
        expect(page.get_by_role("heading", name="Export the quote")).to_be_visible(timeout=WAIT_MS)
        settled(page)
        _inputs_kept(page, "21")
        jobs = [j for j in render_log(log, "job") if j["name"] == "fleet plan"]
        assert len(jobs) == asked + 1, jobs  # each objective planned once (a lost input would have asked for more)
        for job in jobs:
            # the run that started the plan ended before the plan did: it drew the progress bar and returned
            asking = [r for r in render_log(log, "run") if r["start"] <= job["start"]]
            assert asking, "no run before the plan"
            last = asking[-1]
            assert last["start"] + last["seconds"] < job["start"] + job["seconds"], (last, job)


def test_a_click_to_another_page_while_a_plan_runs_is_not_undone(browser, tmp_path):
    log = tmp_path / "runs.jsonl"
    with logged_page(browser, log) as (page, url):
        _fleet_drawn(page, f"{url}/fleet")
        runs = len(render_log(log, "run"))
        _set_tpot(page, "59")
        # the run that asks for the plan has ended (at once, the plan going on without it): the click comes while the
        # plan runs, not before the server has heard of the change (a click first would switch pages before any plan)
        _logged(log, "run", runs + 1)
        page.get_by_role("link", name="Sizing").first.click()
        expect(page.get_by_role("heading", name="Sizing", exact=True)).to_be_visible(timeout=WAIT_MS)
        _plan_jobs_done(log, 2)  # the plan the change asked for is in: the server has been told to rerun
        settled(page)
        expect(page.get_by_role("heading", name="Sizing", exact=True)).to_be_visible()
        expect(page.get_by_role("heading", name="Fleet & Quote", exact=True)).to_have_count(0)
