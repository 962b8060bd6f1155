"""Browser journey with hostile Markdown: a share link, a saved note and a pasted log that each hold a Markdown
image (a tracking pixel) and a link. The browser sends no request to any other host, and the page holds no link
or image the user typed: the text is shown as typed."""

from __future__ import annotations

from urllib.parse import quote, urlsplit

import pytest
from playwright.sync_api import expect

from planner import Scenario
from planner.validation import save_scenario
from tests.conftest import ENGINE_LOGS
from tests.e2e.conftest import running_app

PIXEL = "![px](https://tracker.example/pixel.png)"
LINK = "[click me](https://evil.example/phish)"
HOSTILE = f"{PIXEL} {LINK} **loud** <img src=https://tracker.example/i.png> www.evil.example"
WAIT_MS = 120_000


@pytest.fixture
def hostile_app(tmp_path, monkeypatch):
    """A fresh server whose store holds a scenario saved with a hostile note."""
    store = tmp_path / "store.sqlite3"
    monkeypatch.setenv("PLANNER_STORE_PATH", str(store))
    monkeypatch.setenv("PLANNER_MEASUREMENTS_DIR", str(tmp_path / "measurements"))
    save_scenario("hostile note", Scenario(), notes=HOSTILE, path=store)
    with running_app() as url:
        yield url


def _settled(page) -> None:
    page.locator("[data-testid=stStatusWidget]").wait_for(state="detached", timeout=WAIT_MS)


#: Every link and image on the page that points at another host (the app's own links carry the scenario's query).
OFF_HOST = """() => [...document.querySelectorAll('a[href], img[src], image, source, iframe')]
    .map(e => e.href?.baseVal ?? e.href ?? e.src)
    .filter(u => u && !['127.0.0.1', 'localhost', ''].includes(new URL(u, document.baseURI).hostname))"""


def _nothing_rendered(page) -> None:
    assert page.evaluate(OFF_HOST) == []
    assert page.locator("[data-testid=stMarkdownContainer] strong", has_text="loud").count() == 0
    assert page.locator("[data-testid=stException]").count() == 0


@pytest.mark.e2e
def test_hostile_markdown_never_renders_or_reaches_another_host(browser, hostile_app):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    elsewhere: list[str] = []

    def only_this_server(route):
        if urlsplit(route.request.url).hostname not in ("127.0.0.1", "localhost"):
            elsewhere.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    context.route("**/*", only_this_server)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    try:
        # a share link carrying the Markdown in a value the page rejects and in one it keeps (the search box)
        page.goto(f"{hostile_app}/catalog?ev={quote(HOSTILE)}&q={quote(HOSTILE)}&{quote(LINK)}=1")
        expect(page.get_by_text("Parts of this link were not used")).to_be_visible(timeout=WAIT_MS)
        expect(page.get_by_text("tracker.example/pixel.png").first).to_be_visible(timeout=WAIT_MS)  # shown as text
        _settled(page)
        _nothing_rendered(page)

        # the saved note
        page.goto(f"{hostile_app}/saved")
        expect(page.get_by_text("evil.example/phish").first).to_be_visible(timeout=WAIT_MS)
        _settled(page)
        _nothing_rendered(page)

        # a pasted log whose model name is the Markdown
        log = (ENGINE_LOGS / "vllm-v1-019-llmd-llama31-8b-16k.log").read_text()
        page.goto(f"{hostile_app}/validation")
        page.get_by_label("…or paste the log").fill(log.replace("meta-llama/Llama-3.1-8B-Instruct", HOSTILE))
        page.get_by_role("button", name="Check the log").click()
        expect(page.get_by_text("tracker.example/pixel.png").first).to_be_visible(timeout=WAIT_MS)
        _settled(page)
        _nothing_rendered(page)
        page.wait_for_load_state("networkidle")
        assert elsewhere == []
    finally:
        context.close()
