"""Rerun a browser session's page from the server: how a page that ended its run under a progress bar draws its
result once the background work has it (ui/_background.py).

Streamlit reruns a session's page by itself when the page's source changes (``runOnSave``): it calls the session's
``request_rerun`` with the client state of the session's last run, that is the page shown and every widget's value.
:class:`PageRerun` asks for the same rerun when a page's background work has moved on, on the server's event loop
(where Streamlit handles a session's reruns) and only once the session runs no script: a run in progress was
started by the visitor, with values at least as new, and the rerun waits for its end and takes them. So a click
to another page, or a widget changed while the work ran, is never undone: the rerun draws whatever the visitor
last asked for. A session asks for one rerun at a time (a request made while one is pending joins it).

A widget whose value the server set (a scenario field seeded into it, a saved quote's customer) gets that value
in the run that first draws it, and later runs leave it to the browser. Where the server's runs follow a page's
first draw within a second or so, the browser can drop such a value and show the widget's default (the Fleet
page's node types and request rate came back empty and zero with the next change, in about half of the tries). A
run the server started therefore sends the value of every such widget again (:func:`keep_shown`, called where
those widgets are seeded); a run the visitor started does not, so what they are typing is never replaced by their
own last value.

This is the one module that reaches into Streamlit's runtime; where it cannot (no live server: AppTest, bare
mode, or a Streamlit whose runtime differs), :func:`page_rerun` gives None and pages wait for their work instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from contextvars import ContextVar
from typing import Any

import streamlit as st

_LOG = logging.getLogger(__name__)

#: While the session runs a script, how often to look again before rerunning it, seconds.
IDLE_POLL_S = 0.05

#: Sessions with a rerun asked for and not yet started (touched on the event loop only).
_pending: set[str] = set()
#: Sessions whose next run the server started (set on the event loop, taken by that run's script thread).
_started_by_server: set[str] = set()
_lock = threading.Lock()
#: Whether the run in progress was started by the server (set at the start of every run, :func:`begin_run`).
_SERVER_RUN: ContextVar[bool] = ContextVar("server_started_run", default=False)


class PageRerun:
    """Rerun one session's current page, from any thread, once it is idle (``PageRerun(...)()``)."""

    def __init__(self, runtime: Any, session_id: str, loop: asyncio.AbstractEventLoop) -> None:
        self.runtime, self.session_id, self.loop = runtime, session_id, loop

    def __call__(self) -> None:
        with contextlib.suppress(RuntimeError):  # the server's loop has closed: nothing to rerun
            self.loop.call_soon_threadsafe(self._ask)

    def _ask(self) -> None:
        if self.session_id in _pending:
            return  # the rerun already asked for starts later than this request: it draws the newer state too
        _pending.add(self.session_id)
        self._when_idle()

    def _when_idle(self) -> None:
        session = self.runtime.get_app_session(self.session_id)
        if session is None:  # the visitor has gone
            _pending.discard(self.session_id)
            with _lock:
                _started_by_server.discard(self.session_id)
            return
        if getattr(session, "_scriptrunner", None) is not None:  # the visitor's own run: rerun after it
            self.loop.call_later(IDLE_POLL_S, self._when_idle)
            return
        _pending.discard(self.session_id)
        with _lock:
            _started_by_server.add(self.session_id)
        try:
            session.request_rerun(session._client_state)  # what runOnSave passes: the last run's page and values
        except Exception:  # a session shutting down: its next visit draws the result
            with _lock:
                _started_by_server.discard(self.session_id)
            _LOG.debug("page rerun refused", exc_info=True)


def page_rerun() -> PageRerun | None:
    """A :class:`PageRerun` of the session running this script, or None outside a live server."""
    try:
        from streamlit.runtime import Runtime  # noqa: PLC0415 (only a live server has one)
        from streamlit.runtime.scriptrunner import get_script_run_ctx  # noqa: PLC0415

        ctx = get_script_run_ctx()
        if ctx is None or not Runtime.exists():
            return None
        runtime = Runtime.instance()
        session = runtime.get_app_session(ctx.session_id)
        loop = getattr(session, "_event_loop", None)
        if session is None or loop is None or not hasattr(session, "_client_state"):
            return None
        return PageRerun(runtime, ctx.session_id, loop)
    except Exception:  # another Streamlit runtime: pages wait for their work instead
        return None


def begin_run() -> None:
    """At the start of every run (app.py): note whether the server started it."""
    started = False
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx  # noqa: PLC0415

        ctx = get_script_run_ctx()
        if ctx is not None:
            with _lock:
                started = ctx.session_id in _started_by_server
                _started_by_server.discard(ctx.session_id)
    except Exception:  # another Streamlit runtime: no run is the server's
        started = False
    _SERVER_RUN.set(started)


def server_started_run() -> bool:
    """Whether the run in progress was started by the server (a page's background work), not by the visitor."""
    return _SERVER_RUN.get()


def keep_shown(*keys: str) -> None:
    """Before the widgets of ``keys`` are drawn: in a run the server started, send their values to the browser
    again (a widget whose value the server set may be mounted by the browser only in this run)."""
    if not _SERVER_RUN.get():
        return
    for key in keys:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]
