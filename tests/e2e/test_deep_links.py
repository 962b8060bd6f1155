"""Every page opens by its deep link on a fresh server, inside the app's frame, without an exception.

A fresh server matters: Streamlit picks up a ``ui/`` folder beside the entry script, and before
``app.py`` has registered its navigation a deep link could run the page file on its own (without the
sidebar navigation or the shared scenario), streamlit/streamlit#9992.
"""

from __future__ import annotations

import ast

import pytest

from tests.e2e.conftest import REPO, running_app


def registered_pages() -> list[tuple[str, str, bool]]:
    """(path to open, title, served at the root) of every st.Page in app.py, read from its source.

    The default page is opened at the root; a hidden page (``/sizing``) opens the page of the same title
    at the root, with the link's query.
    """
    pages = []
    for node in ast.walk(ast.parse((REPO / "app.py").read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Page":
            kw = {k.arg: k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)}
            default, hidden = bool(kw.get("default")), kw.get("visibility") == "hidden"
            pages.append(("" if default else kw["url_path"], kw["title"], default or hidden))
    return pages


def visible_titles() -> list[str]:
    return sorted({title for _, title, _ in registered_pages()})


@pytest.fixture
def fresh_app_url():
    with running_app() as url:
        yield url


def test_every_registered_page_is_checked():
    assert len(visible_titles()) == len([p for p in (REPO / "ui").glob("*.py") if not p.name.startswith("_")])
    assert ("sizing", "Sizing", True) in registered_pages()  # the first page's own path works too


def test_no_pages_folder_beside_the_app():
    """Streamlit treats a pages/ folder beside app.py as an old-style multipage app (its helpers become pages)."""
    assert not (REPO / "pages").exists()


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("url_path", "title", "at_root"), registered_pages(), ids=[p[0] or "root" for p in registered_pages()]
)
def test_deep_link_on_a_fresh_server(browser, fresh_app_url, url_path, title, at_root):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{fresh_app_url}/{url_path}?k=3")
        page.get_by_role("heading", name=title, exact=True).wait_for()
        # the app's frame: the sidebar navigation lists every page
        nav = page.locator("[data-testid=stSidebarNav]")
        nav.wait_for()
        for other in visible_titles():
            assert nav.get_by_text(other, exact=True).count() == 1, other
        page.wait_for_load_state("networkidle")
        assert page.locator("[data-testid=stException]").count() == 0
        assert page.get_by_text("Page not found").count() == 0
        # the page keeps its link and the link's scenario (Streamlit shows the default page at the root URL)
        expected = fresh_app_url if at_root else f"{fresh_app_url}/{url_path}"
        page.wait_for_url(f"{expected}/?k=3" if at_root else f"{expected}?k=3")
    finally:
        context.close()
