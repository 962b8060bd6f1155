"""Two app servers, one PostgreSQL: two ``streamlit run`` processes on different ports against one database (as
two replicas of a team's deployment behind a load balancer, or old and new during a rolling restart). Saves
clicked at the same moment on both are all kept and listed by both, and a scenario saved on one opens on the other
with the same link."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from planner.validation import list_scenarios
from tests.e2e.conftest import running_app
from tests.e2e.steps import WAIT_MS, choose, choose_in, settled

ROUNDS = 3  # saves per server, each clicked on both servers at once


def _name_it(page, name: str) -> None:
    box = page.get_by_label("Name", exact=True)
    box.fill(name)
    box.press("Enter")
    settled(page)


def _open_saved(page, url: str) -> None:
    page.goto(f"{url}/saved")
    expect(page.get_by_role("heading", name="Saved", exact=True)).to_be_visible(timeout=WAIT_MS)
    settled(page)


def _button(page, label: str):
    """The app's own button ``label`` (a selectbox's "Open" toggle is a button too)."""
    return page.get_by_role("button", name=label, exact=True).and_(page.locator("[data-testid^=stBaseButton]"))


def _pick(page, name: str) -> None:
    """Choose ``name`` in the Saved page's "Saved scenario" list (it is there, or this fails)."""
    choose_in(page, page.locator("[data-testid=stMain]").get_by_label("Saved scenario", exact=True), name)


def _sidebar_value(page, label: str) -> str:
    return page.locator("[data-testid=stSidebar]").get_by_label(label).input_value()


@pytest.mark.e2e
def test_two_servers_on_one_postgresql_keep_every_save_and_open_the_same_scenario(browser, postgres_server):
    database = {"PLANNER_DATABASE_URL": postgres_server.new_database()}
    with running_app(env=database) as one, running_app(env=database) as two:
        pages = []
        for url in (one, two):
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            pages.append(context.new_page())
            pages[-1].set_default_timeout(60_000)
            _open_saved(pages[-1], url)
        first, second = pages
        expected = set()
        for i in range(ROUNDS):
            names = (f"Server one {i}", f"Server two {i}")
            for page, name in zip(pages, names, strict=True):
                _name_it(page, name)
            for page in pages:  # both saves in flight together: neither waits for the other
                _button(page, "Save").click()
            for page, name in zip(pages, names, strict=True):
                expect(page.get_by_text(f"Saved “{name}”.")).to_be_visible(timeout=WAIT_MS)
                settled(page)
            expected.update(names)

        # a scenario saved on server one, with a node other than the default
        choose(first, "Node type", "8x-h200-sxm-141gb")
        _name_it(first, "H200 from server one")
        _button(first, "Save").click()
        expect(first.get_by_text("Saved “H200 from server one”.")).to_be_visible(timeout=WAIT_MS)
        expected.add("H200 from server one")

        # every save kept, whichever server made it
        saved = list_scenarios(path=database["PLANNER_DATABASE_URL"])
        assert not saved.problems
        assert sorted(s.name for s in saved.scenarios) == sorted(expected)

        # each server lists the other's saves: opened on server two, then its link on server one
        _open_saved(first, one)
        _pick(first, "Server two 0")
        _open_saved(second, two)
        _pick(second, "H200 from server one")
        _button(second, "Open").click()
        expect(second.get_by_text("Opened “H200 from server one”")).to_be_visible(timeout=WAIT_MS)
        settled(second)
        assert _sidebar_value(second, "Node type") == "8x-h200-sxm-141gb"
        query = urlsplit(second.url).query
        assert "h200" in query
        first.goto(f"{one}/saved?{query}")
        expect(first.get_by_role("heading", name="Saved", exact=True)).to_be_visible(timeout=WAIT_MS)
        settled(first)
        for label in ("Node type", "Target model"):
            assert _sidebar_value(first, label) == _sidebar_value(second, label), label
        assert urlsplit(first.url).query == query
        for page in pages:
            assert page.locator("[data-testid=stException]").count() == 0
            page.context.close()
