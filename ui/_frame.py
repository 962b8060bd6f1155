"""Pages run inside app.py's navigation (its sidebar, its shared scenario), even when opened by a deep link.

The page scripts live in ``ui/``, not in a ``pages/`` folder: Streamlit treats a ``pages/`` folder beside
``app.py`` as an old-style multipage app, lists every file in it (helper modules included) and answers a
deep link such as ``/draft-selection`` with a "Page not found" dialog before ``st.navigation`` runs
(streamlit/streamlit#9992). :func:`ensure_app_frame` stays as a safeguard: a page script run on its own
(``streamlit run ui/catalog.py``) hands the request over to app.py, whose ``st.navigation`` resolves it.
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
