"""Saved: scenarios saved under a name with notes; open one into every page, duplicate, delete, compare two."""

from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from pages._common import error_message, guarded
from pages._frame import ensure_app_frame
from pages._scenario import current_scenario, load_scenario, model_choices
from planner.validation import (
    compare_scenarios,
    delete_scenario,
    duplicate_scenario,
    list_scenarios,
    save_scenario,
)
from planner.validation import load_scenario as load_saved

FLASH_KEY = "saved_flash"
CONFIRM_KEY = "saved_confirm_delete"


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
    scenario = current_scenario()
    if scenario is None:
        _flash("error", "Fix the scenario in the sidebar first: only a valid scenario is saved.")
        return
    replace = bool(st.session_state.get("saved_replace"))
    saved = []
    if _attempt(
        lambda: saved.append(save_scenario(name, scenario, st.session_state.get("saved_notes", ""), replace=replace)),
        "the name or notes",
    ):
        _flash("success", f"Saved “{saved[0].name}”.")


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
        _flash("success", f"Opened “{found[0].name}”: every page and the link now show it.{note}")


def _duplicate(name: str) -> None:
    copy = []
    if _attempt(lambda: copy.append(duplicate_scenario(name)), "the saved scenario"):
        _flash("success", f"Duplicated “{name}” as “{copy[0].name}”.")


def _ask_delete(name: str) -> None:
    st.session_state[CONFIRM_KEY] = name


def _delete(name: str) -> None:
    st.session_state.pop(CONFIRM_KEY, None)
    if _attempt(lambda: delete_scenario(name), "the saved scenario"):
        _flash("success", f"Deleted “{name}”.")


def _cancel_delete() -> None:
    st.session_state.pop(CONFIRM_KEY, None)


ensure_app_frame()
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
    st.warning(problem, icon="⚠️")

st.subheader("Saved scenarios")
if not saved:
    st.info("Nothing saved yet: name the sidebar's scenario above and save it.")
else:
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "name": s.name,
                    "notes": s.notes.splitlines()[0] if s.notes else "",
                    "target": s.scenario.target,
                    "draft": s.scenario.draft or "none",
                    "node": s.scenario.node,
                    "saved (UTC)": s.created_at.replace("T", " ").rstrip("Z"),
                    "link": "?" + urlencode(s.scenario.to_query()),
                }
                for s in saved
            ]
        ),
        hide_index=True,
    )
    names = [s.name for s in saved]
    if st.session_state.get("saved_pick") not in names:
        st.session_state["saved_pick"] = names[0]
    pick = st.selectbox("Saved scenario", names, key="saved_pick")
    chosen = next(s for s in saved if s.name == pick)
    if chosen.notes:
        st.caption(chosen.notes)
    cols = st.columns(3)
    cols[0].button("Open", key="saved_open", on_click=_open, args=(pick,), help="load it into every page")
    cols[1].button("Duplicate", key="saved_duplicate", on_click=_duplicate, args=(pick,))
    cols[2].button("Delete…", key="saved_delete", on_click=_ask_delete, args=(pick,))
    confirm = st.session_state.get(CONFIRM_KEY)
    if confirm in names:
        st.warning(f"Delete “{confirm}”? This cannot be undone.", icon="🗑️")
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
    comparison = guarded(lambda: compare_scenarios(name_a, name_b), "the comparison")
    if comparison:
        col_a, col_b = f"A: {comparison.a.name}", f"B: {comparison.b.name}"
        for label, problems in ((col_a, comparison.problems_a), (col_b, comparison.problems_b)):
            for problem in problems:
                st.warning(f"{label}: {problem}", icon="⚠️")
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
                pd.DataFrame([{"": r.label, col_a: r.a, col_b: r.b, "differs": r.differs} for r in comparison.inputs]),
                hide_index=True,
            )
