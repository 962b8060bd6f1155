"""Saved: scenarios saved under a name with notes (open one into every page, duplicate, delete, compare two),
imported custom models and saved fleet quotes (list, download, delete after confirming)."""

from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from planner.reports import Report, plain_text
from planner.validation import (
    SavedScenario,
    compare_saved,
    delete_custom_model,
    delete_quote,
    delete_scenario,
    delete_unreadable_row,
    duplicate_scenario,
    list_custom_models,
    list_quotes,
    list_scenarios,
    save_scenario,
    unreadable_rows,
)
from planner.validation import load_scenario as load_saved
from ui._common import download_buttons, error_message, guarded
from ui._frame import ensure_app_frame
from ui._scenario import current_scenario, imported_models, load_scenario, model_choices, scenario_at_click

FLASH_KEY = "saved_flash"
CONFIRM_KEY = "saved_confirm_delete"
MODEL_CONFIRM_KEY = "saved_confirm_delete_model"
QUOTE_CONFIRM_KEY = "saved_confirm_delete_quote"
DAMAGED_CONFIRM_KEY = "saved_confirm_delete_damaged"
GOTO_FLEET_KEY = "saved_goto_fleet"


@st.cache_data(show_spinner="Comparing...", max_entries=32)
def _compare(a_json: str, b_json: str):
    """The comparison of two saved scenarios, keyed by their JSON (a re-saved scenario is compared anew)."""
    return compare_saved(SavedScenario.model_validate_json(a_json), SavedScenario.model_validate_json(b_json))


def _flash(kind: str, text: str) -> None:
    st.session_state[FLASH_KEY] = (kind, text)


def _attempt(action, what: str) -> bool:
    try:
        action()
        return True
    except Exception as exc:  # shown as a message on the next run, never a traceback
        _flash("error", error_message(exc, what))
        return False


def _save() -> None:
    name = st.session_state.get("saved_name", "")
    scenario = scenario_at_click()
    if scenario is None:
        _flash("error", "Fix the scenario in the sidebar first: only a valid scenario is saved.")
        return
    replace = bool(st.session_state.get("saved_replace"))
    saved = []
    if _attempt(
        lambda: saved.append(save_scenario(name, scenario, st.session_state.get("saved_notes", ""), replace=replace)),
        "the name or notes",
    ):
        _flash("success", f"Saved “{plain_text(saved[0].name)}”.")


def _open(name: str) -> None:
    found = []
    if _attempt(lambda: found.append(load_saved(name)), "the saved scenario"):
        scenario = found[0].scenario
        unknown = [m for m in (scenario.target, scenario.draft) if m and m not in model_choices()]
        load_scenario(scenario)
        note = (
            f" Import {', '.join(unknown)} on the Catalog page (config.json) to use it in this session."
            if unknown
            else ""
        )
        _flash("success", f"Opened “{plain_text(found[0].name)}”: every page and the link now show it.{note}")


def _duplicate(name: str) -> None:
    copy = []
    if _attempt(lambda: copy.append(duplicate_scenario(name)), "the saved scenario"):
        _flash("success", f"Duplicated “{plain_text(name)}” as “{plain_text(copy[0].name)}”.")


def _ask_delete(name: str) -> None:
    st.session_state[CONFIRM_KEY] = name


def _delete(name: str) -> None:
    st.session_state.pop(CONFIRM_KEY, None)
    if _attempt(lambda: delete_scenario(name), "the saved scenario"):
        _flash("success", f"Deleted “{plain_text(name)}”.")


def _cancel_delete(key: str = CONFIRM_KEY) -> None:
    st.session_state.pop(key, None)


def _ask(key: str, name: str) -> None:
    st.session_state[key] = name


def _delete_model(name: str) -> None:
    st.session_state.pop(MODEL_CONFIRM_KEY, None)
    if _attempt(lambda: delete_custom_model(name), "the saved model"):
        imported_models().pop(name, None)
        _flash("success", f"Deleted the model “{plain_text(name)}”: it is no longer in the sidebar's model lists.")


def _delete_quote(name: str) -> None:
    st.session_state.pop(QUOTE_CONFIRM_KEY, None)
    if _attempt(lambda: delete_quote(name), "the saved quote"):
        _flash("success", f"Deleted the quote “{plain_text(name)}”.")


def _open_quote(quote) -> None:
    """The quote's scenario into every page, its customer, "prepared by" and notes into the Fleet & Quote page's
    document details and save form; the run this click starts opens that page."""
    load_scenario(quote.scenario)
    st.session_state["doc_customer"] = quote.customer
    st.session_state["doc_prepared_by"] = quote.prepared_by
    st.session_state["quote_save_name"] = quote.name
    st.session_state["quote_save_notes"] = quote.notes
    st.session_state[GOTO_FLEET_KEY] = True


def _delete_damaged(rows, labels: list[str], label: str) -> None:
    st.session_state.pop(DAMAGED_CONFIRM_KEY, None)
    row = rows[labels.index(label)]
    if _attempt(lambda: delete_unreadable_row(row.kind, row.key), "the unreadable row"):
        _flash("success", f"Deleted the unreadable {row.label} “{row.key}”.")


def _pick(where, label: str, names: list[str], key: str) -> str:
    """A selectbox over ``names`` whose kept choice falls back to the first when its item is gone (deleted)."""
    if st.session_state.get(key) not in names:
        st.session_state[key] = names[0]
    return where.selectbox(label, names, key=key)


def _confirm(key: str, names: list[str], what: str, action) -> None:
    """The "Delete …? This cannot be undone." question for the name ``key`` holds, with Yes and Cancel."""
    name = st.session_state.get(key)
    if name in names:
        st.warning(f"Delete {what} “{plain_text(name)}”? This cannot be undone.", icon="🗑️")
        yes, no = st.columns(2)
        yes.button("Yes, delete it", key=f"{key}_yes", on_click=action, args=(name,), type="primary")
        no.button("Cancel", key=f"{key}_no", on_click=_cancel_delete, args=(key,))


ensure_app_frame()
if st.session_state.pop(GOTO_FLEET_KEY, False):
    st.switch_page("ui/fleet.py")
st.title("Saved")
st.caption(
    "Scenarios saved on this machine under a name, with notes: open one to load it into every page (and the link), "
    "duplicate it to try a variant, or compare two side by side."
)
flash = st.session_state.pop(FLASH_KEY, None)
if flash:
    (st.success if flash[0] == "success" else st.error)(flash[1], icon="✅" if flash[0] == "success" else "⚠️")

with st.expander("Save the sidebar's scenario", expanded=True):
    st.text_input("Name", key="saved_name", max_chars=120, placeholder="e.g. 70B + 1B, 32k context, H200")
    st.text_area("Notes", key="saved_notes", max_chars=4000, placeholder="what it is for, what was assumed")
    st.checkbox("Replace a saved scenario of the same name", key="saved_replace")
    st.button("Save", key="saved_save", on_click=_save, disabled=current_scenario() is None)

listing = guarded(list_scenarios, "the saved scenarios")
saved = listing.scenarios if listing else []
for problem in listing.problems if listing else []:
    st.warning(plain_text(problem), icon="⚠️")

st.subheader("Saved scenarios")
if not saved:
    st.info("Nothing saved yet: name the sidebar's scenario above and save it.")
else:
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "Name": s.name,
                    "Notes": s.notes.splitlines()[0] if s.notes else "",
                    "Target": s.scenario.target,
                    "Draft": s.scenario.draft or "none",
                    "Node type": s.scenario.node,
                    "Saved (UTC)": s.created_at.replace("T", " ").rstrip("Z"),
                    "Link": "?" + urlencode(s.scenario.to_query()),
                }
                for s in saved
            ]
        ),
        hide_index=True,
    )
    names = [s.name for s in saved]
    pick = _pick(st, "Saved scenario", names, "saved_pick")
    chosen = next(s for s in saved if s.name == pick)
    if chosen.notes:
        st.caption(plain_text(chosen.notes))
    cols = st.columns(3)
    cols[0].button("Open", key="saved_open", on_click=_open, args=(pick,), help="load it into every page")
    cols[1].button("Duplicate", key="saved_duplicate", on_click=_duplicate, args=(pick,))
    cols[2].button("Delete…", key="saved_delete", on_click=_ask_delete, args=(pick,))
    confirm = st.session_state.get(CONFIRM_KEY)
    if confirm in names:
        st.warning(f"Delete “{plain_text(confirm)}”? This cannot be undone.", icon="🗑️")
        yes, no = st.columns(2)
        yes.button("Yes, delete it", key="saved_delete_yes", on_click=_delete, args=(confirm,), type="primary")
        no.button("Cancel", key="saved_delete_no", on_click=_cancel_delete)

st.subheader("Compare two")
if len(saved) < 2:
    st.info("Save two scenarios to compare them side by side.")
else:
    names = [s.name for s in saved]
    for key, index in (("saved_compare_a", 0), ("saved_compare_b", 1)):
        if st.session_state.get(key) not in names:
            st.session_state[key] = names[index]
    left, right = st.columns(2)
    name_a = left.selectbox("A", names, key="saved_compare_a")
    name_b = right.selectbox("B", names, key="saved_compare_b")
    by_name = {s.name: s for s in saved}
    comparison = guarded(
        lambda: _compare(by_name[name_a].model_dump_json(), by_name[name_b].model_dump_json()), "the comparison"
    )
    if comparison:
        col_a, col_b = f"A: {comparison.a.name}", f"B: {comparison.b.name}"
        for label, problems in ((col_a, comparison.problems_a), (col_b, comparison.problems_b)):
            for problem in problems:
                st.warning(f"{plain_text(label)}: {plain_text(problem)}", icon="⚠️")
        st.markdown("**Results**")
        st.dataframe(
            pd.DataFrame([{"": r.label, col_a: r.a, col_b: r.b} for r in comparison.results]),
            hide_index=True,
        )
        differing = [r for r in comparison.inputs if r.differs]
        st.markdown("**Inputs that differ**")
        if differing:
            st.dataframe(
                pd.DataFrame([{"": r.label, col_a: r.a, col_b: r.b} for r in differing]),
                hide_index=True,
            )
        else:
            st.caption("None: the two scenarios have the same inputs.")
        with st.expander("Every input"):
            st.dataframe(
                pd.DataFrame([{"": r.label, col_a: r.a, col_b: r.b, "Differs": r.differs} for r in comparison.inputs]),
                hide_index=True,
            )

st.subheader("Imported models")
models = guarded(list_custom_models, "the saved models")
for problem in models.problems if models else []:
    st.warning(plain_text(problem), icon="⚠️")
if not models or not models.models:
    st.info("No imported models yet: upload a config.json on the Catalog page and save it.")
else:
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "Name": m.name,
                    "Architecture": str(m.config.get("model_type", "unknown")),
                    "Layers": m.config.get("num_hidden_layers"),
                    "Saved (UTC)": m.created_at.replace("T", " ").rstrip("Z"),
                }
                for m in models.models
            ]
        ),
        hide_index=True,
        key="saved_models_table",
    )
    model_names = [m.name for m in models.models]
    left, right = st.columns([3, 1])
    model_pick = _pick(left, "Imported model", model_names, "saved_model_pick")
    right.button("Delete…", key="saved_model_delete", on_click=_ask, args=(MODEL_CONFIRM_KEY, model_pick))
    _confirm(MODEL_CONFIRM_KEY, model_names, "the model", _delete_model)

st.subheader("Saved quotes")
quotes = guarded(list_quotes, "the saved quotes")
for problem in quotes.problems if quotes else []:
    st.warning(plain_text(problem), icon="⚠️")
if not quotes or not quotes.quotes:
    st.info("No saved quotes yet: use “Save this quote” on the Fleet & Quote page.")
else:
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "Name": q.name,
                    "Notes": q.notes.splitlines()[0] if q.notes else "",
                    "Target": q.scenario.target,
                    "Draft": q.scenario.method or q.scenario.draft or "none",
                    "Saved (UTC)": q.created_at.replace("T", " ").rstrip("Z"),
                }
                for q in quotes.quotes
            ]
        ),
        hide_index=True,
        key="saved_quotes_table",
    )
    quote_names = [q.name for q in quotes.quotes]
    quote_pick = _pick(st, "Saved quote", quote_names, "saved_quote_pick")
    quote = next(q for q in quotes.quotes if q.name == quote_pick)
    details = [("Customer", quote.customer), ("Prepared by", quote.prepared_by)]
    named = [f"{label}: {plain_text(value)}" for label, value in details if value]
    st.caption("  ·  ".join(named) or "No customer named.")
    if quote.notes:
        st.caption(plain_text(quote.notes))
    left, right = st.columns(2)
    left.button(
        "Open in Fleet & Quote",
        key="saved_quote_open",
        on_click=_open_quote,
        args=(quote,),
        help="its scenario, customer and notes",
    )
    right.button("Delete…", key="saved_quote_delete", on_click=_ask, args=(QUOTE_CONFIRM_KEY, quote_pick))
    _confirm(QUOTE_CONFIRM_KEY, quote_names, "the quote", _delete_quote)
    st.markdown("**Download the quote as saved**")
    download_buttons(
        lambda: Report.from_json(quote.result),
        f"quote-{''.join(c if c.isalnum() else '-' for c in quote.name)[:60]}",
        "saved_quote",
    )

st.subheader("Rows that could not be read")
damaged = guarded(unreadable_rows, "the store's rows")
if not damaged:
    st.caption("None: every stored row reads back.")
else:
    st.warning(
        f"{len(damaged)} stored row(s) no longer read back and are left out of the lists above. Download a row to "
        "keep or repair it, or delete it.",
        icon="⚠️",
    )
    st.dataframe(
        pd.DataFrame([{"Kind": r.label, "Name": r.key, "Why it does not read": r.reason} for r in damaged]),
        hide_index=True,
        key="saved_damaged_table",
    )
    labels = [f"{r.label}: {r.key}" for r in damaged]
    picked = _pick(st, "Unreadable row", labels, "saved_damaged_pick")
    row = damaged[labels.index(picked)]
    left, right = st.columns(2)
    left.download_button(
        "Download the row (JSON)",
        row.raw_json,
        file_name=f"unreadable-{row.kind}.json",
        mime="application/json",
        key="saved_damaged_download",
    )
    right.button("Delete…", key="saved_damaged_delete", on_click=_ask, args=(DAMAGED_CONFIRM_KEY, picked))
    _confirm(DAMAGED_CONFIRM_KEY, labels, "the unreadable row", lambda label: _delete_damaged(damaged, labels, label))
