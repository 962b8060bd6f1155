"""Every page renders without an exception, and app.py registers every page file exactly once."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import PAGE_FILES, REPO


def test_app_registers_every_page_once():
    source = (REPO / "app.py").read_text()
    registered = re.findall(r'st\.Page\("pages/([a-z_0-9]+\.py)"', source)
    assert sorted(registered) == sorted(p.name for p in PAGE_FILES)


def test_app_entry_renders(app):
    app.run()
    assert not app.exception
    assert app.title


@pytest.mark.parametrize("path", PAGE_FILES, ids=lambda p: p.stem)
def test_page_renders_without_exception(path):
    at = AppTest.from_file(str(path), default_timeout=120).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
