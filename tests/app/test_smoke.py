"""Every page renders in the app's frame without an exception, and app.py registers every page file exactly once."""

from __future__ import annotations

import re

import pytest

from tests.app.conftest import PAGE_FILES, REPO, page


def test_app_registers_every_page_once():
    source = (REPO / "app.py").read_text()
    registered = re.findall(r'st\.Page\("ui/([a-z_0-9]+\.py)"', source)
    assert sorted(registered) == sorted(p.name for p in PAGE_FILES)


def test_app_entry_renders(app):
    app.run()
    assert not app.exception
    assert app.title


@pytest.mark.parametrize("path", PAGE_FILES, ids=lambda p: p.stem)
def test_page_renders_without_exception(path):
    at = page(path.name).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.title


def test_scenario_sidebar_is_drawn_by_the_app_on_every_page():
    # on every page, so its widgets never leave the screen and never lose their state between pages
    for name in ("sizing.py", "catalog.py", "validation.py"):
        at = page(name).run()
        assert at.sidebar.selectbox(key="scenario_target").value == "meta-llama/Llama-3.1-70B", name
