from __future__ import annotations

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


@pytest.fixture
def app() -> AppTest:
    return AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
