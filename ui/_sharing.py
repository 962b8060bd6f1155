"""Owners and sharing on the pages: who is acting, the "Who can see it" choice, the owner and changed columns,
owner-only buttons (disabled with the reason otherwise), each item's history and the "Recently deleted" list.

The rules themselves are the store's (:mod:`planner.validation.owned`); these helpers only draw them. Without
sign-in the actor is this machine, which owns everything it saves, so every button works as before.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from planner.reports import plain_text
from planner.validation import (
    LOCAL_ACTOR,
    RETENTION_DAYS,
    VISIBILITIES,
    Actor,
    Owned,
    audit_trail,
    list_recently_deleted,
    restore_deleted,
    set_visibility,
)
from ui import _identity
from ui._common import guarded
from ui._rerun import keep_shown

#: How the visibility choice reads.
VISIBILITY_WORDS = {"private": "Only me", "team": "The team"}
KIND_WORDS = {"scenario": "scenario", "quote": "quote", "model": "imported model"}


def acting() -> Actor:
    """The person using the page (the signed-in one), or this machine when sign-in is not configured."""
    return _identity.current_actor()


def visibility_choice(key: str, actor: Actor, label: str = "Who can see it") -> str:
    """A radio of private / team; a new choice starts at the store's default for ``actor``."""
    if st.session_state.get(key) not in VISIBILITIES:
        st.session_state[key] = "team" if actor == LOCAL_ACTOR else "private"
    keep_shown(key)
    return st.radio(
        label,
        VISIBILITIES,
        format_func=VISIBILITY_WORDS.__getitem__,
        key=key,
        persist_state="page",
        horizontal=True,
        help="Only you, or everyone signed in to this planner; only you can change or delete it either way.",
    )


def _when(stamp: str) -> str:
    return stamp.replace("T", " ").rstrip("Z")


def owner_columns(item: Owned, actor: Actor) -> dict[str, str]:
    """The table columns every saved item shows: owner, who sees it, when it changed and by whom."""
    return {
        "Owner": "you" if item.owned_by(actor) else item.owner_name,
        "Visible to": VISIBILITY_WORDS[item.visibility].lower().replace("only me", "owner only"),
        "Changed (UTC)": _when(item.changed_at),
        "Changed by": item.changed_by,
    }


def owner_only(item: Owned, actor: Actor) -> str | None:
    """Why ``actor`` may not change or delete ``item`` (None when they own it)."""
    if item.owned_by(actor):
        return None
    return f"Only its owner, {item.owner_name}, can change or delete it: duplicate or save a copy to make your own."


def by_label(items: list, actor: Actor) -> dict[str, object]:
    """Items keyed by the label a list shows: the name, with the owner's for a teammate's ("Q1 (Ada)")."""
    return {item.label_for(actor): item for item in items}


def share_button(
    where, kind: str, item: Owned, actor: Actor, attempt: Callable, key: str,
    at_click: Callable[[], Owned] | None = None,
) -> None:  # fmt: skip
    """ "Share with the team" / "Make private" for the owner; disabled with the reason for anyone else.

    ``at_click`` gives the item picked when the button is pressed (a new choice can arrive with the click): the
    button's meaning (share, or make private) is the one drawn, applied to that item."""
    new = "private" if item.visibility == "team" else "team"
    reason = owner_only(item, actor)

    def share() -> None:
        target = at_click() if at_click is not None else item
        attempt(
            lambda: set_visibility(
                kind, target.name, new, actor=actor, expected_version=target.version
            ),  # the version shown: a change since is refused
            f"the {KIND_WORDS[kind]}",
            f"“{plain_text(target.name)}” is now visible to {'the team' if new == 'team' else 'you only'}.",
        )

    where.button(
        "Share with the team" if new == "team" else "Make private",
        key=key,
        disabled=reason is not None,
        help=reason or ("everyone signed in sees it" if new == "team" else "only you see it"),
        on_click=share,
    )


def history(kind: str, item: Owned, actor: Actor, key: str) -> None:
    """The item's audit trail in an expander: who created, changed, shared, exported, deleted and restored it."""
    with st.expander(f"History of “{plain_text(item.name)}”"):
        trail = guarded(lambda: audit_trail(kind, item.id, actor=actor), "the history")
        if trail:
            st.dataframe(
                pd.DataFrame(
                    [
                        {"When (UTC)": _when(e.at), "Who": e.actor_name, "What": e.action, "Detail": e.detail}
                        for e in trail
                    ]
                ),
                hide_index=True,
                key=key,
            )


def recently_deleted(actor: Actor, attempt: Callable, on_restored: Callable[[str, str], None] | None = None) -> None:
    """The actor's deleted items of the last 30 days, with Restore."""
    st.subheader("Recently deleted")
    deleted = guarded(lambda: list_recently_deleted(actor=actor), "the recently deleted items")
    if not deleted:
        st.caption(f"Nothing deleted in the last {RETENTION_DAYS} days.")
        return
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "Kind": KIND_WORDS[d.kind],
                    "Name": d.name,
                    "Deleted (UTC)": _when(d.deleted_at),
                    "Restorable until (UTC)": _when(d.purge_after),
                }
                for d in deleted
            ]
        ),
        hide_index=True,
        key="saved_deleted_table",
    )
    labels = [f"{KIND_WORDS[d.kind]}: {d.name} (deleted {_when(d.deleted_at)})" for d in deleted]
    if st.session_state.get("saved_deleted_pick") not in labels:
        st.session_state["saved_deleted_pick"] = labels[0]
    picked = st.selectbox("Deleted item", labels, key="saved_deleted_pick")
    item = deleted[labels.index(picked)]

    def restore() -> None:
        if (
            attempt(
                lambda: restore_deleted(item.kind, item.id, actor=actor),
                f"the deleted {KIND_WORDS[item.kind]}",
                f"Restored the {KIND_WORDS[item.kind]} “{plain_text(item.name)}”.",
            )
            and on_restored
        ):
            on_restored(item.kind, item.name)

    st.button("Restore", key="saved_restore", on_click=restore)
