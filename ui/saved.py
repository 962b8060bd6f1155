"""Saved: scenarios saved under a name with notes (open one into every page, duplicate, delete, compare two),
imported custom models and saved fleet quotes (list, download, delete after confirming), each with its owner,
who can see it, when it changed and its history; only the owner shares, replaces or deletes; deleted items are
restorable for 30 days under "Recently deleted"."""

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
    record_export,
    save_scenario,
    unreadable_rows,
)
from planner.validation import load_scenario as load_saved
from ui._common import download_buttons, error_message, guarded
from ui._flash import set_flash, take_flash
from ui._frame import ensure_app_frame
from ui._scenario import current_scenario, imported_models, load_scenario, model_choices, scenario_at_click
from ui._sharing import (
    acting,
    by_label,
    history,
    owner_columns,
    owner_only,
    recently_deleted,
    share_button,
    visibility_choice,
)

FLASH_KEY = "saved_flash"
CONFIRM_KEY = "saved_confirm_delete"
MODEL_CONFIRM_KEY = "saved_confirm_delete_model"
QUOTE_CONFIRM_KEY = "saved_confirm_delete_quote"
#: Session key (after a picker's own) of the items its labels stand for, as last drawn.
ITEMS_SUFFIX = "__items"
DAMAGED_CONFIRM_KEY = "saved_confirm_delete_damaged"
GOTO_FLEET_KEY = "saved_goto_fleet"
#: The scenario last opened here: (name in lower case, owner id, version), so a replace of it is checked.
OPENED_KEY = "saved_opened"
#: The quote opened into Fleet & Quote, read by its save widget (ui/_save_quote.py).
OPENED_QUOTE_KEY = "saved_opened_quote"


@st.cache_data(show_spinner="Comparing...", max_entries=32)
def _compare(a_json: str, b_json: str):
    """The comparison of two saved scenarios, keyed by their JSON (a re-saved scenario is compared anew)."""
    return compare_saved(SavedScenario.model_validate_json(a_json), SavedScenario.model_validate_json(b_json))


def _flash(kind: str, text: str) -> None:
    set_flash(FLASH_KEY, (kind, text))


def _attempt(action, what: str, success: str | None = None) -> bool:
    try:
        action()
    except Exception as exc:  # shown as a message on the next run (a refusal names the owner), never a traceback
        _flash("error", error_message(exc, what))
        return False
    if success:
        _flash("success", success)
    return True


def _opened_version(key: str, name: str, actor) -> int | None:
    """The version of ``name`` this session opened (the actor's own), so a replace of a newer one is refused."""
    opened = st.session_state.get(key)
    if opened and opened[0] == name.strip().lower() and opened[1] == actor.id:
        return opened[2]
    return None


def _save() -> None:
    name = st.session_state.get("saved_name", "")
    scenario = scenario_at_click()
    if scenario is None:
        _flash("error", "Fix the scenario in the sidebar first: only a valid scenario is saved.")
        return
    replace = bool(st.session_state.get("saved_replace"))
    actor = acting()
    saved = []
    if _attempt(
        lambda: saved.append(
            save_scenario(
                name,
                scenario,
                st.session_state.get("saved_notes", ""),
                replace=replace,
                actor=actor,
                visibility=st.session_state.get("saved_visibility"),
                expected_version=_opened_version(OPENED_KEY, name, actor) if replace else None,
            )
        ),
        "the name or notes",
    ):
        st.session_state[OPENED_KEY] = (saved[0].name.lower(), actor.id, saved[0].version)
        _flash("success", f"Saved “{plain_text(saved[0].name)}”.")


def _open(item) -> None:
    found = []
    actor = acting()
    if _attempt(lambda: found.append(load_saved(item.name, actor=actor, owner_id=item.owner_id)), "the saved scenario"):
        if found[0].owned_by(actor):
            st.session_state[OPENED_KEY] = (found[0].name.lower(), actor.id, found[0].version)
        scenario = found[0].scenario
        unknown = [m for m in (scenario.target, scenario.draft) if m and m not in model_choices()]
        load_scenario(scenario)
        note = (
            f" Import {', '.join(unknown)} on the Catalog page (config.json) to use it in this session."
            if unknown
            else ""
        )
        _flash("success", f"Opened “{plain_text(found[0].name)}”: every page and the link now show it.{note}")


def _duplicate(item) -> None:
    copy = []
    actor = acting()
    if _attempt(
        lambda: copy.append(duplicate_scenario(item.name, actor=actor, owner_id=item.owner_id)), "the saved scenario"
    ):
        _flash("success", f"Duplicated “{plain_text(item.name)}” as “{plain_text(copy[0].name)}”.")


def _delete(item) -> None:
    st.session_state.pop(CONFIRM_KEY, None)
    if _attempt(
        lambda: delete_scenario(item.name, actor=acting(), owner_id=item.owner_id, expected_version=item.version),
        "the saved scenario",
    ):
        _flash("success", f"Deleted “{plain_text(item.name)}”: restore it under Recently deleted within 30 days.")


def _cancel_delete(key: str = CONFIRM_KEY) -> None:
    st.session_state.pop(key, None)


def _delete_model(item) -> None:
    st.session_state.pop(MODEL_CONFIRM_KEY, None)
    if _attempt(
        lambda: delete_custom_model(item.name, actor=acting(), owner_id=item.owner_id, expected_version=item.version),
        "the saved model",
    ):
        imported_models().pop(item.name, None)
        _flash(
            "success",
            f"Deleted the model “{plain_text(item.name)}”: it is no longer in the sidebar's model lists "
            "(restore it under Recently deleted within 30 days).",
        )


def _delete_quote(item) -> None:
    st.session_state.pop(QUOTE_CONFIRM_KEY, None)
    if _attempt(
        lambda: delete_quote(item.name, actor=acting(), owner_id=item.owner_id, expected_version=item.version),
        "the saved quote",
    ):
        _flash(
            "success", f"Deleted the quote “{plain_text(item.name)}”: restore it under Recently deleted within 30 days."
        )


def _open_quote(quote) -> None:
    """The quote's scenario into every page, its customer, "prepared by" and notes into the Fleet & Quote page's
    document details and save form; the run this click starts opens that page."""
    load_scenario(quote.scenario)
    st.session_state["doc_customer"] = quote.customer
    st.session_state["doc_prepared_by"] = quote.prepared_by
    st.session_state["quote_save_name"] = quote.name
    st.session_state["quote_save_notes"] = quote.notes
    actor = acting()
    if quote.owned_by(actor):  # a replace from Fleet & Quote is checked against the version opened here
        st.session_state[OPENED_QUOTE_KEY] = (quote.name.lower(), actor.id, quote.version)
    st.session_state[GOTO_FLEET_KEY] = True


def _delete_damaged(rows, labels: list[str], label: str) -> None:
    st.session_state.pop(DAMAGED_CONFIRM_KEY, None)
    row = rows[labels.index(label)]
    if _attempt(lambda: delete_unreadable_row(row.kind, row.key, actor=acting()), "the unreadable row"):
        _flash("success", f"Deleted the unreadable {row.label} “{row.key}”.")


def _pick(where, label: str, items: dict, key: str) -> str:
    """A selectbox over the labels of ``items`` whose kept choice falls back to the first when its item is gone
    (deleted). The labels' items are kept for :func:`_picked`."""
    names = list(items)
    if st.session_state.get(key) not in names:
        st.session_state[key] = names[0]
    st.session_state[key + ITEMS_SUFFIX] = items
    return where.selectbox(label, names, key=key)


def _picked(key: str):
    """The item the picker ``key`` holds at the click. A busy browser can send a new choice and a button's click in
    one run; a callback bound to the item drawn last would act on the previous choice."""
    return st.session_state[key + ITEMS_SUFFIX][st.session_state[key]]


def _on_picked(key: str, action) -> None:
    """Button callback: ``action`` on the item picked at the click."""
    action(_picked(key))


def _ask_picked(confirm_key: str, key: str) -> None:
    """ "Delete…": ask about the item picked at the click."""
    st.session_state[confirm_key] = st.session_state[key]


def _confirm(key: str, items: dict, what: str, action, undo: str = "You can restore it for 30 days.") -> None:
    """The "Delete …?" question for the label ``key`` holds (``items``: label -> what ``action`` takes)."""
    label = st.session_state.get(key)
    if label in items:
        st.warning(f"Delete {what} “{plain_text(label)}”? {undo}", icon="🗑️")
        yes, no = st.columns(2)
        yes.button("Yes, delete it", key=f"{key}_yes", on_click=action, args=(items[label],), type="primary")
        no.button("Cancel", key=f"{key}_no", on_click=_cancel_delete, args=(key,))


ensure_app_frame()
actor = acting()
if st.session_state.pop(GOTO_FLEET_KEY, False):
    st.switch_page("ui/fleet.py")
st.title("Saved")
st.caption(
    "Scenarios saved under a name, with notes: open one to load it into every page (and the link), duplicate it to "
    "try a variant, or compare two side by side. You see your own and the team's; only an item's owner changes, "
    "shares or deletes it, and a teammate's item shows their name after its own."
)
# The message slot is drawn in every run, so the inputs below keep their places (a value being typed is kept).
flash, flash_slot = take_flash(FLASH_KEY), st.empty()
if flash:
    (flash_slot.success if flash[0] == "success" else flash_slot.error)(
        flash[1], icon="✅" if flash[0] == "success" else "⚠️"
    )

with st.expander("Save the sidebar's scenario", expanded=True):
    st.text_input("Name", key="saved_name", max_chars=120, placeholder="e.g. 70B + 1B, 32k context, H200")
    st.text_area("Notes", key="saved_notes", max_chars=4000, placeholder="what it is for, what was assumed")
    visibility_choice("saved_visibility", actor)
    st.checkbox("Replace my saved scenario of the same name", key="saved_replace")
    st.button("Save", key="saved_save", on_click=_save, disabled=current_scenario() is None)

listing = guarded(lambda: list_scenarios(actor=actor), "the saved scenarios")
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
                    **owner_columns(s, actor),
                    "Link": "?" + urlencode(s.scenario.to_query()),
                }
                for s in saved
            ]
        ),
        hide_index=True,
    )
    scenarios_by_label = by_label(saved, actor)
    names = list(scenarios_by_label)
    pick = _pick(st, "Saved scenario", scenarios_by_label, "saved_pick")
    chosen = scenarios_by_label[pick]
    if chosen.notes:
        st.caption(plain_text(chosen.notes))
    not_owner = owner_only(chosen, actor)
    cols = st.columns(4)
    cols[0].button(
        "Open", key="saved_open", on_click=_on_picked, args=("saved_pick", _open), help="load it into every page"
    )
    cols[1].button(
        "Duplicate", key="saved_duplicate", on_click=_on_picked, args=("saved_pick", _duplicate),
        help="a copy of your own",
    )  # fmt: skip
    share_button(cols[2], "scenario", chosen, actor, _attempt, "saved_share", at_click=lambda: _picked("saved_pick"))
    cols[3].button(
        "Delete…", key="saved_delete", on_click=_ask_picked, args=(CONFIRM_KEY, "saved_pick"),
        disabled=bool(not_owner), help=not_owner,
    )  # fmt: skip
    if not_owner:
        st.caption(plain_text(not_owner))
    confirm = st.session_state.get(CONFIRM_KEY)
    if confirm in names:
        st.warning(f"Delete “{plain_text(confirm)}”? You can restore it for 30 days.", icon="🗑️")
        yes, no = st.columns(2)
        yes.button(
            "Yes, delete it",
            key="saved_delete_yes",
            on_click=_delete,
            args=(scenarios_by_label[confirm],),
            type="primary",
        )
        no.button("Cancel", key="saved_delete_no", on_click=_cancel_delete)
    history("scenario", chosen, actor, "saved_history")

st.subheader("Compare two")
if len(saved) < 2:
    st.info("Save two scenarios to compare them side by side.")
else:
    by_name = by_label(saved, actor)
    names = list(by_name)
    for key, index in (("saved_compare_a", 0), ("saved_compare_b", 1)):
        if st.session_state.get(key) not in names:
            st.session_state[key] = names[index]
    left, right = st.columns(2)
    name_a = left.selectbox("A", names, key="saved_compare_a")
    name_b = right.selectbox("B", names, key="saved_compare_b")
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
models = guarded(lambda: list_custom_models(actor=actor), "the saved models")
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
                    **owner_columns(m, actor),
                }
                for m in models.models
            ]
        ),
        hide_index=True,
        key="saved_models_table",
    )
    models_by_label = by_label(models.models, actor)
    left, middle, right = st.columns([3, 1, 1])
    model_pick = _pick(left, "Imported model", models_by_label, "saved_model_pick")
    model = models_by_label[model_pick]
    model_not_owner = owner_only(model, actor)
    share_button(
        middle, "model", model, actor, _attempt, "saved_model_share", at_click=lambda: _picked("saved_model_pick")
    )
    right.button(
        "Delete…",
        key="saved_model_delete",
        on_click=_ask_picked,
        args=(MODEL_CONFIRM_KEY, "saved_model_pick"),
        disabled=bool(model_not_owner),
        help=model_not_owner,
    )
    _confirm(MODEL_CONFIRM_KEY, models_by_label, "the model", _delete_model)
    history("model", model, actor, "saved_model_history")

st.subheader("Saved quotes")
quotes = guarded(lambda: list_quotes(actor=actor), "the saved quotes")
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
                    **owner_columns(q, actor),
                }
                for q in quotes.quotes
            ]
        ),
        hide_index=True,
        key="saved_quotes_table",
    )
    quotes_by_label = by_label(quotes.quotes, actor)
    quote_pick = _pick(st, "Saved quote", quotes_by_label, "saved_quote_pick")
    quote = quotes_by_label[quote_pick]
    quote_not_owner = owner_only(quote, actor)
    details = [("Customer", quote.customer), ("Prepared by", quote.prepared_by)]
    named = [f"{label}: {plain_text(value)}" for label, value in details if value]
    st.caption("  ·  ".join(named) or "No customer named.")
    if quote.notes:
        st.caption(plain_text(quote.notes))
    left, middle, right = st.columns(3)
    left.button(
        "Open in Fleet & Quote",
        key="saved_quote_open",
        on_click=_on_picked,
        args=("saved_quote_pick", _open_quote),
        help="its scenario, customer and notes",
    )
    share_button(
        middle, "quote", quote, actor, _attempt, "saved_quote_share", at_click=lambda: _picked("saved_quote_pick")
    )
    right.button(
        "Delete…",
        key="saved_quote_delete",
        on_click=_ask_picked,
        args=(QUOTE_CONFIRM_KEY, "saved_quote_pick"),
        disabled=bool(quote_not_owner),
        help=quote_not_owner,
    )
    _confirm(QUOTE_CONFIRM_KEY, quotes_by_label, "the quote", _delete_quote)
    st.markdown("**Download the quote as saved**")
    download_buttons(
        lambda: Report.from_json(quote.result),
        f"quote-{''.join(c if c.isalnum() else '-' for c in quote.name)[:60]}",
        "saved_quote",
        on_export=lambda fmt: record_export("quote", quote.id, fmt, actor=actor),
    )
    history("quote", quote, actor, "saved_quote_history")

recently_deleted(actor, _attempt)

st.subheader("Rows that could not be read")
damaged = guarded(lambda: unreadable_rows(actor=actor), "the store's rows")
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
    by_itself = {label: label for label in labels}
    picked = _pick(st, "Unreadable row", by_itself, "saved_damaged_pick")
    row = damaged[labels.index(picked)]
    left, right = st.columns(2)
    left.download_button(
        "Download the row (JSON)",
        row.raw_json,
        file_name=f"unreadable-{row.kind}.json",
        mime="application/json",
        key="saved_damaged_download",
    )
    right.button(
        "Delete…", key="saved_damaged_delete", on_click=_ask_picked, args=(DAMAGED_CONFIRM_KEY, "saved_damaged_pick")
    )
    _confirm(
        DAMAGED_CONFIRM_KEY,
        by_itself,
        "the unreadable row",
        lambda label: _delete_damaged(damaged, labels, label),
        undo="This cannot be undone.",
    )
