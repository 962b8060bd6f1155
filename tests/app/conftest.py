from __future__ import annotations

import logging
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]
PAGE_FILES = sorted(p for p in (REPO / "ui").glob("*.py") if not p.name.startswith("_"))


def page(name: str) -> AppTest:
    """app.py switched to ``ui/<name>``: the page runs in the app's frame (navigation, scenario sidebar).

    The first run renders the default page, so that st.navigation has registered every page; the
    caller's ``run()`` then renders the chosen one.
    """
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    return at.switch_page(f"ui/{name}")


def internal_errors(records: list[logging.LogRecord]) -> list[str]:
    """The page guard's logged failures (ui/_common.py ``guarded``, ``run_page_guarded``): an exception that is not
    the planner's own error, which the user sees as a generic "Could not use ..." message instead of a box (so
    ``at.exception`` stays empty). Pass ``caplog.records``."""
    return [f"{r.getMessage()}: {r.exc_info[1]!r}" for r in records if r.name == "planner.pages" and r.exc_info]


@pytest.fixture(autouse=True)
def no_internal_error(caplog):
    """Every page test also fails when a page logged an internal error, whatever the test asserts itself."""
    caplog.set_level(logging.ERROR, logger="planner.pages")
    yield
    assert internal_errors(caplog.records) == []


@pytest.fixture
def app() -> AppTest:
    return AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
