"""Reading and saving the rows of one kind of owned item (saved scenarios, quotes, imported models).

What :mod:`planner.validation.saved`, :mod:`planner.validation.saved_quotes` and
:mod:`planner.validation.saved_models` share: every live row an actor may see, one row by name, and one save in a
transaction of its own; ownership, sharing, versions and the audit trail are :mod:`planner.validation.owned`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from planner.store import IntegrityError, transaction
from planner.store import text as sql
from planner.validation.actor import Actor, Visibility
from planner.validation.owned import (
    KINDS,
    OWNER_COLUMNS,
    VISIBLE,
    Owned,
    attach,
    checked_actor,
    find,
    write,
)
from planner.validation.owned import _Found as Found
from planner.validation.store import StoreError, _absent, connect, parse_rows

T = TypeVar("T", bound=Owned)


def list_visible(
    kind: str, columns: str, parse: Callable[..., T], *, path: str | Path | None, actor: Actor
) -> tuple[list[T], list[str]]:
    """Every live item of ``kind`` the actor may see (theirs and the team's), each read by ``parse`` from its own
    ``columns`` (then :data:`OWNER_COLUMNS`, :func:`attach`), by name (case-insensitive, then as written, then the
    oldest first); a row that does not read is skipped and reported (:func:`planner.validation.store.parse_rows`).

    >>> import tempfile, pathlib
    >>> from planner.scenario import Scenario
    >>> from planner.validation.actor import LOCAL_ACTOR
    >>> from planner.validation.saved import save_scenario
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.sqlite3"
    >>> _ = save_scenario("b", Scenario(), path=path); _ = save_scenario("A", Scenario(), path=path)
    >>> class Named(Owned):
    ...     name: str
    >>> items, problems = list_visible("scenario", "name", lambda name: Named(name=name), path=path, actor=LOCAL_ACTOR)
    >>> [item.name for item in items], problems
    (['A', 'b'], [])
    """
    actor = checked_actor(actor)
    if _absent(path):
        return [], []
    with connect(path) as conn:
        rows = conn.execute(
            sql(
                f"SELECT {columns}, {OWNER_COLUMNS} FROM {KINDS[kind].table} WHERE {VISIBLE} "
                "ORDER BY lower(name), name, id"
            ),
            {"actor_id": actor.id},
        ).fetchall()
    return parse_rows(rows, attach(parse), kind)


def load_visible(
    kind: str,
    name: str,
    columns: str,
    parse: Callable[..., T],
    *,
    path: str | Path | None,
    actor: Actor,
    owner_id: str | None = None,
    reads_as: str = "",
) -> T:
    """The live item ``name`` of ``kind`` the actor may see (their own, else the team's; ``owner_id`` picks an
    owner's), read as :func:`list_visible` reads it. An unknown name, or a row that no longer reads (``reads_as``
    ends that message: " as a scenario"), is a :class:`StoreError` on the name."""
    spec = KINDS[kind]
    row = None
    if not _absent(path):
        with connect(path) as conn:
            found = find(conn, kind, name, actor, owner_id=owner_id)
            if found is not None:
                row = conn.execute(
                    sql(f"SELECT {columns}, {OWNER_COLUMNS} FROM {spec.table} WHERE id = :id"), {"id": found.id}
                ).fetchone()
    if row is None:
        raise StoreError(f"no {spec.label} is named {name!r}", field=spec.field)
    try:
        return attach(parse)(*row)
    except (ValueError, ValidationError) as exc:
        raise StoreError(
            f"{spec.label} {name!r} no longer reads{reads_as} ({str(exc).splitlines()[0][:160]})", field=spec.field
        ) from None


def save_owned(
    kind: str,
    name: str,
    values: dict[str, str],
    *,
    path: str | Path | None,
    actor: Actor,
    visibility: Visibility | None,
    replace: bool,
    expected_version: int | None,
) -> Found:
    """:func:`write` in a transaction of its own; a name another save took meanwhile (the store's unique index on
    owner and name, any case) is the same refusal as a taken name."""
    try:
        with transaction(path) as conn:
            return write(
                conn, kind, name, values, actor=actor, visibility=visibility, replace=replace,
                expected_version=expected_version,
            )  # fmt: skip
    except IntegrityError:
        spec = KINDS[kind]
        raise StoreError(
            f"a {spec.label} is already named {name!r}: choose another name or replace it", field=spec.field
        ) from None
