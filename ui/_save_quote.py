"""The Fleet & Quote page's "Save this quote" widget: a name, notes, and one save into the store.

The page calls :func:`save_quote_widget` once with the scenario and the quote (its report); the quote
is saved with :func:`planner.validation.save_quote` and listed on the Saved page, owned by the person using
the app and visible to them or the team as chosen. A refused save (an empty or taken name, someone else's
quote, a quote changed since it was opened on the Saved page) is a message and changes nothing in the store.
"""

from __future__ import annotations

import streamlit as st

from planner.reports import plain_text
from planner.validation import save_quote
from ui._common import error_message
from ui._flash import set_flash, take_flash
from ui._rerun import keep_shown
from ui._sharing import acting, visibility_choice

FLASH_KEY = "quote_save_flash"
#: The quote the Saved page opened here: (name in lower case, owner id, version) (ui/saved.py writes it).
OPENED_QUOTE_KEY = "saved_opened_quote"


def _opened_version(name: str, actor) -> int | None:
    opened = st.session_state.get(OPENED_QUOTE_KEY)
    if opened and opened[0] == name.strip().lower() and opened[1] == actor.id:
        return opened[2]
    return None


def _quote_json(report: object) -> object:
    """The whole quote document: a report's JSON with its charts, customer and "prepared by" from the document
    details (a function building the report is called first, so the report is built only when the user saves),
    else the value itself. The Saved page rebuilds the same document from it and re-exports it in every format."""
    if callable(report) and not hasattr(report, "to_json"):
        report = report()
    if not callable(getattr(report, "to_json", None)):
        return report
    report.customer = st.session_state.get("doc_customer", "") or report.customer
    report.prepared_by = st.session_state.get("doc_prepared_by", "") or report.prepared_by
    return report.to_json(with_figures=True)


def _save(scenario, report) -> None:
    name = st.session_state.get("quote_save_name", "")
    replace = bool(st.session_state.get("quote_save_replace"))
    try:
        actor = acting()
        saved = save_quote(
            name,
            _quote_json(report),
            scenario,
            st.session_state.get("quote_save_notes", ""),
            replace=replace,
            actor=actor,
            visibility=st.session_state.get("quote_save_visibility"),
            expected_version=_opened_version(name, actor) if replace else None,
        )
    except Exception as exc:  # shown as a message (a refusal names the owner, or who changed it), never a traceback
        set_flash(FLASH_KEY, ("error", error_message(exc, "the name or notes")))
        return
    st.session_state[OPENED_QUOTE_KEY] = (saved.name.lower(), actor.id, saved.version)
    set_flash(FLASH_KEY, ("success", f"Saved the quote as “{plain_text(saved.name)}”: see the Saved page."))


def save_quote_widget(scenario, report) -> None:
    """Draw "Save this quote" for ``report`` (the page's quote, or a function building it) made for ``scenario``;
    None disables it."""
    with st.expander("Save this quote", expanded=False):
        flash, slot = take_flash(FLASH_KEY), st.empty()  # in every run: inputs keep their places
        if flash:
            (slot.success if flash[0] == "success" else slot.error)(flash[1])
        keep_shown("quote_save_name", "quote_save_notes")  # a saved quote reopened sets them
        st.text_input(
            "Quote name", key="quote_save_name", max_chars=120, placeholder="e.g. Q3 renewal, 70B on H200",
            persist_state="page",
        )  # fmt: skip
        st.text_area(
            "Notes", key="quote_save_notes", max_chars=4000, placeholder="who it is for, what was assumed",
            persist_state="page",
        )  # fmt: skip
        visibility_choice("quote_save_visibility", acting())
        st.checkbox("Replace my saved quote of the same name", key="quote_save_replace", persist_state="page")
        st.button(
            "Save this quote",
            key="quote_save",
            on_click=_save,
            args=(scenario, report),
            disabled=scenario is None or report is None,
        )
