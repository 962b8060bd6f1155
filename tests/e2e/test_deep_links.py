"""Every page opens by its deep link on a fresh server, inside the app's frame, without an exception.

A fresh server matters: Streamlit picks up a ``ui/`` folder beside the entry script, and before
``app.py`` has registered its navigation a deep link could run the page file on its own (without the
sidebar navigation or the shared scenario), streamlit/streamlit#9992.
"""

from __future__ import annotations

import ast

import pytest

from tests.e2e.conftest import REPO, free_port, start_server, stop_server, streamlit_command, wait_healthy


def registered_pages() -> list[tuple[str, str, bool]]:
    """(url_path, title, is_default) of every st.Page in app.py, read from its source."""
    pages = []
    for node in ast.walk(ast.parse((REPO / "app.py").read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Page":
            kw = {k.arg: k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)}
            pages.append((kw["url_path"], kw["title"], bool(kw.get("default"))))
    return pages


@pytest.fixture
def fresh_app_url():
    port = free_port()
    proc = start_server(streamlit_command(port))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        yield url
    finally:
        stop_server(proc)


def test_every_registered_page_is_checked():
    assert len(registered_pages()) == len([p for p in (REPO / "ui").glob("*.py") if not p.name.startswith("_")])


@pytest.mark.e2e
@pytest.mark.parametrize(("url_path", "title", "default"), registered_pages(), ids=[p[0] for p in registered_pages()])
def test_deep_link_on_a_fresh_server(browser, fresh_app_url, url_path, title, default):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{fresh_app_url}/{url_path}")
        page.get_by_role("heading", name=title, exact=True).wait_for()
        # the app's frame: the sidebar navigation lists every page
        nav = page.locator("[data-testid=stSidebarNav]")
        nav.wait_for()
        for _, other, _ in registered_pages():
            assert nav.get_by_text(other, exact=True).count() == 1, other
        page.wait_for_load_state("networkidle")
        assert page.locator("[data-testid=stException]").count() == 0
        # the page keeps its link (Streamlit shows the default page at the root URL)
        assert page.url.rstrip("/") == (fresh_app_url if default else f"{fresh_app_url}/{url_path}")
    finally:
        context.close()
