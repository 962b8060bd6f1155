from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]
PAGE_FILES = sorted(p for p in (REPO / "pages").glob("*.py") if not p.name.startswith("_"))


def page(name: str) -> AppTest:
    return AppTest.from_file(str(REPO / "pages" / name), default_timeout=120)


@pytest.fixture
def app() -> AppTest:
    return AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
