"""One-shot messages ("Saved the quote as …", an import, a point made the scenario) that an interrupted run cannot lose.

A callback stores a message under its key in the session; the page draws it with :func:`take_flash`. A run can be
stopped part-way (a newer click or keystroke reruns the page at once): a message taken out of the session by such a
run would never reach the screen. So a message stays until a run that drew it has finished: ``app.py`` numbers every
run (:func:`begin_run`) and records the last one that finished (:func:`end_run`); a message drawn in a run that
finished is dropped by the next run, one drawn in a run that was stopped is drawn again.

>>> state = {}
>>> _begin(state); state["msg"] = ("success", "Saved"); _take(state, "msg")
('success', 'Saved')
>>> _take(state, "msg")  # the same run (interrupted or not) draws it again
('success', 'Saved')
>>> _begin(state); _take(state, "msg")  # the run that drew it was stopped: drawn again
('success', 'Saved')
>>> _end(state); _begin(state); _take(state, "msg", keep=True)  # a run the server started draws it again
('success', 'Saved')
>>> _end(state); _begin(state); _take(state, "msg") is None  # it reached the screen in a finished run
True

A run the server started (a page's background work moving on or done, ui/_rerun.py) is not the visitor's next
step: it draws the message again rather than drop it, so a confirmation stays on screen until the visitor acts.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import streamlit as st

from ui._rerun import server_started_run

RUN_KEY = "_run_number"
DONE_KEY = "_run_finished"
SHOWN_KEY = "_flash_shown_in_run"


def _begin(state: MutableMapping[str, Any]) -> None:
    state[RUN_KEY] = state.get(RUN_KEY, 0) + 1


def _end(state: MutableMapping[str, Any]) -> None:
    state[DONE_KEY] = state.get(RUN_KEY, 0)


def _take(state: MutableMapping[str, Any], key: str, keep: bool = False) -> Any:
    message = state.get(key)
    shown = state.setdefault(SHOWN_KEY, {})
    if message is None:
        shown.pop(key, None)
        return None
    if key in shown and state.get(DONE_KEY, 0) >= shown[key]:
        if keep:
            return message
        del state[key]
        del shown[key]
        return None
    shown[key] = state.get(RUN_KEY, 0)
    return message


def begin_run() -> None:
    """At the start of every run (``app.py``)."""
    _begin(st.session_state)


def end_run() -> None:
    """At the end of every run that drew its page to the end (``app.py``)."""
    _end(st.session_state)


def take_flash(key: str) -> Any:
    """The message stored under ``key`` (None when there is none), to be drawn in this run; it is dropped by the
    visitor's next run once a run that drew it has finished (a run the server started draws it again)."""
    return _take(st.session_state, key, keep=server_started_run())


def set_flash(key: str, message: Any) -> None:
    """Store ``message`` under ``key`` for the next run to draw (a new message replaces one not yet dropped)."""
    st.session_state[key] = message
    st.session_state.setdefault(SHOWN_KEY, {}).pop(key, None)
