"""Pages run inside app.py's navigation (its sidebar, its shared scenario), even when opened by a deep link.

On a fresh server Streamlit still treats the ``pages/`` folder beside ``app.py`` as an old-style
multipage app until some session has called ``st.navigation``, so a first request for ``/catalog``
runs ``pages/catalog.py`` on its own (streamlit/streamlit#9992). :func:`ensure_app_frame` notices
that (app.py did not open the frame in this run) and re-runs the request through app.py, whose
``st.navigation`` then resolves the same URL to the same page.
"""

from __future__ import annotations

import runpy
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path

import streamlit as st

APP_PATH = Path(__file__).resolve().parents[1] / "app.py"
#: True while app.py's navigation runs the current page (set and reset around ``page.run()``).
_IN_APP: ContextVar[bool] = ContextVar("in_app_frame", default=False)


def run_in_app_frame(run: Callable[[], None]) -> None:
    """app.py: run the selected page with the frame marked open (closed again however the run ends)."""
    token = _IN_APP.set(True)
    try:
        run()
    finally:
        _IN_APP.reset(token)


def ensure_app_frame() -> None:
    """A page's first line: outside app.py's navigation, hand the request over to app.py and stop."""
    if _IN_APP.get():
        return
    runpy.run_path(str(APP_PATH), run_name="__streamlit_app__")
    st.stop()
