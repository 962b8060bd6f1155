"""Owners, sharing, versions, soft deletion and the audit trail of saved scenarios, quotes and imported models.

Every saved item has an owner (the :class:`~planner.validation.actor.Actor` who first saved it), a visibility
(``private``: its owner only; ``team``: everyone using the store), created and changed times, who changed it,
a version counter (1 on creation, +1 on every change) and, once deleted, a deleted time. The rules:

- A person sees their own items and the team's, never another person's private ones, by list or by name.
- Names are unique per owner regardless of case. A name lookup finds the actor's own item first, else the
  team's item of that name (the earliest saved, when teammates share a name); ``owner_id`` picks one owner's.
  Lists carry each item's ``id`` and owner, and pages show a teammate's item as "name (owner)".
- Only the owner changes, shares or deletes an item (:class:`NotOwnerError` names the owner otherwise).
- A change that says which version it was made on (``expected_version``) is refused when the item has moved
  on since (:class:`EditConflictError` names who changed it and when): no lost update. The check and the
  write are one ``UPDATE ... WHERE version = :expected``, atomic on SQLite and PostgreSQL alike.
- Deletion is soft: the owner sees the item under "Recently deleted" and restores it for
  :data:`RETENTION_DAYS` days; older deleted rows are purged.
- Every change writes its audit row in the same transaction (actions :data:`ACTIONS`).

Without sign-in everything is done by :data:`~planner.validation.actor.LOCAL_ACTOR`, so a single user sees,
changes and deletes everything as before; new items of that actor are shared with the team (so enabling
sign-in later keeps them visible), a signed-in person's new items are private unless they choose "team".

>>> import tempfile, pathlib
>>> from planner.scenario import Scenario
>>> from planner.validation.saved import save_scenario, delete_scenario
>>> path = pathlib.Path(tempfile.mkdtemp()) / "s.sqlite3"
>>> ada = Actor(id="ada", name="Ada")
>>> _ = save_scenario("mine", Scenario(), path=path, actor=ada)
>>> delete_scenario("mine", path=path, actor=ada)
>>> [(d.name, d.kind) for d in list_recently_deleted(path=path, actor=ada)]
[('mine', 'scenario')]
>>> [e.action for e in audit_trail("scenario", list_recently_deleted(path=path, actor=ada)[0].id, path=path,
...     actor=ada)]
['created', 'deleted']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel
from sqlalchemy import Connection

from planner.errors import InputError
from planner.store import IntegrityError, transaction
from planner.store import text as sql
from planner.validation.actor import LOCAL_ACTOR, VISIBILITIES, Actor, Visibility
from planner.validation.store import StoreError, _absent, connect

__all__ = [
    "ACTIONS",
    "KINDS",
    "RETENTION_DAYS",
    "AuditEntry",
    "DeletedItem",
    "EditConflictError",
    "NotOwnerError",
    "Owned",
    "audit_trail",
    "list_recently_deleted",
    "record_export",
    "restore_deleted",
    "set_visibility",
]

#: How long a deleted item can be restored (days); older deleted rows are purged.
RETENTION_DAYS = 30
Action = Literal["created", "changed", "shared", "unshared", "exported", "deleted", "restored"]
ACTIONS: tuple[Action, ...] = ("created", "changed", "shared", "unshared", "exported", "deleted", "restored")
Kind = Literal["scenario", "quote", "model"]


@dataclass(frozen=True)
class _Kind:
    table: str
    label: str
    field: str


#: Each kind of owned item: its table, how a message names it, the input field a name error points at.
KINDS: dict[str, _Kind] = {
    "scenario": _Kind("scenarios", "saved scenario", "name"),
    "quote": _Kind("quotes", "saved quote", "name"),
    "model": _Kind("custom_models", "saved model", "model_name"),
}

#: The ownership columns every list reads after an item's own columns (in :func:`attach`'s order).
OWNER_COLUMNS = (
    "id, owner_id, owner_name, visibility, COALESCE(changed_at, created_at), "
    "COALESCE(changed_by_name, owner_name), version"
)
_N_OWNER = 7  # id, owner_id, owner_name, visibility, changed_at, changed_by, version
#: Rows an actor may read: not deleted, and theirs or the team's.
VISIBLE = "deleted_at IS NULL AND (owner_id = :actor_id OR visibility = 'team')"


class NotOwnerError(StoreError):
    """Someone other than the owner tried to change, share or delete an item."""


class EditConflictError(StoreError):
    """The item changed (or was deleted) since the version the edit was made on."""


class Owned(BaseModel):
    """Who owns a saved item, who may see it, and its version (defaults: this machine's, shared)."""

    id: int = 0
    owner_id: str = LOCAL_ACTOR.id
    owner_name: str = LOCAL_ACTOR.name
    visibility: Visibility = "team"
    #: When it last changed (its creation time until then), ISO 8601 UTC.
    changed_at: str = ""
    changed_by: str = ""
    version: int = 1

    def owned_by(self, actor: Actor) -> bool:
        return self.owner_id == actor.id

    def label_for(self, actor: Actor) -> str:
        """The item's name, with its owner's when it is a teammate's: "Q1 (Ada)"."""
        name = getattr(self, "name", "")
        return name if self.owned_by(actor) else f"{name} ({self.owner_name})"


class DeletedItem(BaseModel):
    """An item its owner deleted and can still restore (until ``purge_after``)."""

    kind: str
    id: int
    name: str
    deleted_at: str
    deleted_by: str
    purge_after: str


class AuditEntry(BaseModel):
    kind: str
    item_id: int
    name: str
    action: str
    actor_id: str
    actor_name: str
    at: str
    detail: str


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _cutoff() -> str:
    return (datetime.now(UTC) - timedelta(days=RETENTION_DAYS)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _purge_after(deleted_at: str) -> str:
    try:
        when = datetime.strptime(deleted_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return ""
    return (when + timedelta(days=RETENTION_DAYS)).strftime("%Y-%m-%dT%H:%M:%SZ")


def checked_actor(actor: object) -> Actor:
    if not isinstance(actor, Actor):
        raise InputError("actor", type(actor).__name__, "an Actor")
    return actor


def checked_visibility(visibility: object) -> Visibility | None:
    if visibility is not None and visibility not in VISIBILITIES:
        raise InputError("visibility", visibility, "private or team")
    return visibility  # type: ignore[return-value]


def _kind(kind: object) -> _Kind:
    spec = KINDS.get(kind) if isinstance(kind, str) else None
    if spec is None:
        raise InputError("kind", kind, f"one of {', '.join(KINDS)}")
    return spec


T = TypeVar("T", bound=Owned)


def attach(parse: Callable[..., T]) -> Callable[..., T]:
    """``parse`` of an item's own columns, followed by :data:`OWNER_COLUMNS` read into its ownership fields."""

    def parse_owned(*row: Any) -> T:
        item = parse(*row[:-_N_OWNER])
        item_id, owner_id, owner_name, visibility, changed_at, changed_by, version = row[-_N_OWNER:]
        item.id, item.owner_id, item.owner_name = int(item_id), str(owner_id), str(owner_name)
        item.visibility = "private" if visibility == "private" else "team"
        item.changed_at, item.changed_by, item.version = str(changed_at), str(changed_by), int(version)
        return item

    return parse_owned


@dataclass(frozen=True)
class _Found:
    id: int
    name: str
    owner_id: str
    owner_name: str
    visibility: str
    version: int
    changed_at: str
    changed_by: str

    def ownership(self) -> dict[str, Any]:
        """The :class:`Owned` fields of the item found."""
        return {
            "id": self.id,
            "owner_id": self.owner_id,
            "owner_name": self.owner_name,
            "visibility": self.visibility,
            "changed_at": self.changed_at,
            "changed_by": self.changed_by,
            "version": self.version,
        }


_FOUND = (
    "id, name, owner_id, owner_name, visibility, version, COALESCE(changed_at, created_at), "
    "COALESCE(changed_by_name, owner_name)"
)


def find(
    conn: Connection, kind: str, name_or_id: str | int, actor: Actor, *, owner_id: str | None = None
) -> _Found | None:
    """The live item ``name_or_id`` the actor may see: their own first, else the team's earliest of that name."""
    table = _kind(kind).table
    params: dict[str, Any] = {"actor_id": actor.id}
    if isinstance(name_or_id, int):
        where, params["id"] = "id = :id", name_or_id
    else:
        where, params["name"] = "lower(name) = lower(:name)", name_or_id
    if owner_id is not None:
        where, params["owner_id"] = f"{where} AND owner_id = :owner_id", owner_id
    row = conn.execute(
        sql(
            f"SELECT {_FOUND} FROM {table} WHERE {where} AND {VISIBLE} "
            "ORDER BY CASE WHEN owner_id = :actor_id THEN 0 ELSE 1 END, id LIMIT 1"
        ),
        params,
    ).fetchone()
    return None if row is None else _Found(int(row[0]), str(row[1]), *map(str, row[2:5]), int(row[5]), *row[6:])


def audit(conn: Connection, kind: str, item_id: int, name: str, action: Action, actor: Actor, detail: str = "") -> None:
    conn.execute(
        sql(
            "INSERT INTO audit_trail (kind, item_id, name, action, actor_id, actor_name, at, detail) "
            "VALUES (:kind, :item_id, :name, :action, :actor_id, :actor_name, :at, :detail)"
        ),
        {
            "kind": kind,
            "item_id": item_id,
            "name": name,
            "action": action,
            "actor_id": actor.id,
            "actor_name": actor.name,
            "at": now(),
            "detail": detail[:500],
        },
    )


def _refuse_non_owner(kind: str, found: _Found, verb: str) -> NotOwnerError:
    spec = KINDS[kind]
    return NotOwnerError(
        f"the {spec.label} {found.name!r} belongs to {found.owner_name}: only its owner can {verb} it "
        "(save a copy under your own name instead)",
        field=spec.field,
    )


def _conflict(kind: str, found: _Found | None, name: str, expected: int) -> EditConflictError:
    spec = KINDS[kind]
    if found is None:
        return EditConflictError(
            f"the {spec.label} {name!r} was deleted since you opened it: nothing was changed", field=spec.field
        )
    return EditConflictError(
        f"the {spec.label} {found.name!r} was changed by {found.changed_by} at {found.changed_at} since you "
        f"opened it (version {expected}, now {found.version}): nothing was changed; reload it and edit again",
        field=spec.field,
    )


def check_version(kind: str, found: _Found | None, name: str, expected_version: int | None) -> None:
    if expected_version is not None and (found is None or found.version != expected_version):
        raise _conflict(kind, found, name, expected_version)


def _new_visibility(actor: Actor, visibility: Visibility | None) -> Visibility:
    if visibility is not None:
        return visibility
    return "team" if actor == LOCAL_ACTOR else "private"


def write(
    conn: Connection,
    kind: str,
    name: str,
    values: dict[str, str],
    *,
    actor: Actor,
    visibility: Visibility | None,
    replace: bool,
    expected_version: int | None,
) -> _Found:
    """Insert ``name`` (owned by ``actor``) or, with ``replace``, change the actor's own item of that name; its audit
    row in the same transaction. Raises StoreError (name taken), NotOwnerError or EditConflictError."""
    spec = KINDS[kind]
    own = find(conn, kind, name, actor, owner_id=actor.id)
    if own is None:
        other = find(conn, kind, name, actor)
        if (replace or expected_version is not None) and other is not None:
            raise _refuse_non_owner(kind, other, "change")
        check_version(kind, None, name, expected_version)
        chosen = _new_visibility(actor, visibility)
        columns = ", ".join(values)
        stamp = now()
        item_id = conn.execute(
            sql(
                f"INSERT INTO {spec.table} (name, {columns}, owner_id, owner_name, visibility, changed_at, "
                f"changed_by_id, changed_by_name, version) VALUES (:name, {', '.join(':' + c for c in values)}, "
                ":actor_id, :actor_name, :visibility, :stamp, :actor_id, :actor_name, 1) RETURNING id"
            ),
            {
                **values,
                "name": name,
                "actor_id": actor.id,
                "actor_name": actor.name,
                "visibility": chosen,
                "stamp": stamp,
            },
        ).scalar_one()
        audit(conn, kind, item_id, name, "created", actor, f"visibility {chosen}")
        return _Found(item_id, name, actor.id, actor.name, chosen, 1, stamp, actor.name)
    if not replace and expected_version is None:
        if kind == "model":
            raise StoreError(
                f"a different saved model is already named {name!r}: type another name for this config "
                "(or delete the saved one on the Saved page)",
                field=spec.field,
            )
        raise StoreError(
            f"a {spec.label} is already named {name!r}: choose another name or replace it", field=spec.field
        )
    check_version(kind, own, name, expected_version)
    chosen = own.visibility if visibility is None else visibility
    values = {k: v for k, v in values.items() if k != "created_at"}
    stamp = now()
    updated = conn.execute(
        sql(
            f"UPDATE {spec.table} SET name = :name, {', '.join(f'{c} = :{c}' for c in values)}, "
            "visibility = :visibility, changed_at = :stamp, changed_by_id = :actor_id, changed_by_name = :actor_name, "
            "version = version + 1 WHERE id = :id AND version = :version AND deleted_at IS NULL"
        ),
        {
            **values,
            "name": name,
            "visibility": chosen,
            "stamp": stamp,
            "actor_id": actor.id,
            "actor_name": actor.name,
            "id": own.id,
            "version": own.version,
        },
    ).rowcount
    if not updated:  # another writer got in between the read and the update (PostgreSQL read committed)
        raise _conflict(kind, find(conn, kind, own.id, actor), name, own.version)
    audit(conn, kind, own.id, name, "changed", actor)
    if chosen != own.visibility:
        audit(conn, kind, own.id, name, "shared" if chosen == "team" else "unshared", actor)
    return _Found(own.id, name, own.owner_id, own.owner_name, chosen, own.version + 1, stamp, actor.name)


def _purge(conn: Connection) -> None:
    for spec in KINDS.values():
        conn.execute(
            sql(f"DELETE FROM {spec.table} WHERE deleted_at IS NOT NULL AND deleted_at < :cutoff"),
            {"cutoff": _cutoff()},
        )


def soft_delete(
    kind: str,
    name: str,
    *,
    actor: Actor,
    path: str | Path | None,
    owner_id: str | None = None,
    expected_version: int | None = None,
) -> None:
    """Mark the item deleted (restorable for :data:`RETENTION_DAYS` days); only its owner may."""
    spec, actor = KINDS[kind], checked_actor(actor)
    found = None
    if not _absent(path):
        with transaction(path) as conn:
            found = find(conn, kind, name, actor, owner_id=owner_id)
            if found is not None:
                if found.owner_id != actor.id:
                    raise _refuse_non_owner(kind, found, "delete")
                check_version(kind, found, name, expected_version)
                done = conn.execute(
                    sql(
                        f"UPDATE {spec.table} SET deleted_at = :stamp, deleted_by_name = :actor_name, "
                        "version = version + 1 WHERE id = :id AND version = :version AND deleted_at IS NULL"
                    ),
                    {"stamp": now(), "actor_name": actor.name, "id": found.id, "version": found.version},
                ).rowcount
                if not done:
                    raise _conflict(kind, find(conn, kind, found.id, actor), name, found.version)
                audit(conn, kind, found.id, found.name, "deleted", actor)
                _purge(conn)
    if found is None:
        raise StoreError(f"no {spec.label} is named {name[:120]!r}", field=spec.field)


def list_recently_deleted(
    kind: str | None = None, *, actor: Actor = LOCAL_ACTOR, path: str | Path | None = None
) -> list[DeletedItem]:
    """The actor's own items deleted in the last :data:`RETENTION_DAYS` days, newest first (older ones purged)."""
    actor = checked_actor(actor)
    kinds = list(KINDS) if kind is None else [kind]
    for k in kinds:
        _kind(k)
    if _absent(path):
        return []
    found: list[DeletedItem] = []
    with transaction(path) as conn:
        _purge(conn)
        for k in kinds:
            rows = conn.execute(
                sql(
                    f"SELECT id, name, deleted_at, COALESCE(deleted_by_name, owner_name) FROM {KINDS[k].table} "
                    "WHERE deleted_at IS NOT NULL AND owner_id = :actor_id"
                ),
                {"actor_id": actor.id},
            ).fetchall()
            found += [
                DeletedItem(
                    kind=k,
                    id=int(r[0]),
                    name=str(r[1]),
                    deleted_at=str(r[2]),
                    deleted_by=str(r[3]),
                    purge_after=_purge_after(str(r[2])),
                )
                for r in rows
            ]
    return sorted(found, key=lambda d: (d.deleted_at, d.id), reverse=True)


def restore_deleted(kind: str, item_id: int, *, actor: Actor = LOCAL_ACTOR, path: str | Path | None = None) -> str:
    """Bring back the actor's deleted item ``item_id``; refused when a live item of theirs took its name. Its name."""
    spec, actor = _kind(kind), checked_actor(actor)
    if not isinstance(item_id, int) or isinstance(item_id, bool):
        raise InputError("item_id", item_id, "the id of a recently deleted item")
    row = None
    try:
        if not _absent(path):
            with transaction(path) as conn:
                row = conn.execute(
                    sql(
                        f"SELECT name FROM {spec.table} WHERE id = :id AND owner_id = :actor_id "
                        "AND deleted_at IS NOT NULL AND deleted_at >= :cutoff"
                    ),
                    {"id": item_id, "actor_id": actor.id, "cutoff": _cutoff()},
                ).fetchone()
                if row is not None:
                    conn.execute(
                        sql(
                            f"UPDATE {spec.table} SET deleted_at = NULL, deleted_by_name = NULL, changed_at = :stamp, "
                            "changed_by_id = :actor_id, changed_by_name = :actor_name, version = version + 1 "
                            "WHERE id = :id"
                        ),
                        {"stamp": now(), "actor_id": actor.id, "actor_name": actor.name, "id": item_id},
                    )
                    audit(conn, kind, item_id, str(row[0]), "restored", actor)
    except IntegrityError:
        raise StoreError(
            f"you already have a {spec.label} named {row[0]!r}: rename or delete it, then restore this one",
            field=spec.field,
        ) from None
    if row is None:
        raise StoreError(f"no recently deleted {spec.label} of yours has id {item_id}", field="item_id")
    return str(row[0])


def audit_trail(
    kind: str, name_or_id: str | int, *, actor: Actor = LOCAL_ACTOR, path: str | Path | None = None
) -> list[AuditEntry]:
    """Who created, changed, shared, exported, deleted and restored the item, oldest first (an item the actor
    may see: their own, deleted or not, or the team's)."""
    spec, actor = _kind(kind), checked_actor(actor)
    item_id = None
    if not _absent(path):
        with connect(path) as conn:
            found = find(conn, kind, name_or_id, actor)
            if found is not None:
                item_id = found.id
            elif isinstance(name_or_id, int):
                own_deleted = conn.execute(
                    sql(f"SELECT id FROM {spec.table} WHERE id = :id AND owner_id = :actor_id"),
                    {"id": name_or_id, "actor_id": actor.id},
                ).fetchone()
                item_id = None if own_deleted is None else int(own_deleted[0])
            if item_id is not None:
                rows = conn.execute(
                    sql(
                        "SELECT kind, item_id, name, action, actor_id, actor_name, at, detail FROM audit_trail "
                        "WHERE kind = :kind AND item_id = :id ORDER BY id"
                    ),
                    {"kind": kind, "id": item_id},
                ).fetchall()
                return [
                    AuditEntry(
                        kind=str(r[0]),
                        item_id=int(r[1]),
                        name=str(r[2]),
                        action=str(r[3]),
                        actor_id=str(r[4]),
                        actor_name=str(r[5]),
                        at=str(r[6]),
                        detail=str(r[7] or ""),
                    )
                    for r in rows
                ]
    raise StoreError(f"no {spec.label} you can see is {name_or_id!r}", field=spec.field)


def record_export(
    kind: str, name_or_id: str | int, fmt: str, *, actor: Actor = LOCAL_ACTOR, path: str | Path | None = None
) -> None:
    """Write an "exported" audit row for an item the actor may see (``fmt``: pdf, xlsx, html, json, md...)."""
    spec, actor = _kind(kind), checked_actor(actor)
    found = None
    if not _absent(path):
        with transaction(path) as conn:
            found = find(conn, kind, name_or_id, actor)
            if found is not None:
                audit(conn, kind, found.id, found.name, "exported", actor, f"as {str(fmt)[:20]}")
    if found is None:
        raise StoreError(f"no {spec.label} you can see is {name_or_id!r}", field=spec.field)


def set_visibility(
    kind: str,
    name: str,
    visibility: Visibility,
    *,
    actor: Actor = LOCAL_ACTOR,
    path: str | Path | None = None,
    expected_version: int | None = None,
) -> int:
    """Share an item with the team or make it private again (its owner only); the new version."""
    spec, actor = _kind(kind), checked_actor(actor)
    if checked_visibility(visibility) is None:
        raise InputError("visibility", visibility, "private or team")
    found = None
    if not _absent(path):
        with transaction(path) as conn:
            found = find(conn, kind, name, actor)
            if found is not None:
                if found.owner_id != actor.id:
                    raise _refuse_non_owner(kind, found, "share")
                check_version(kind, found, name, expected_version)
                if found.visibility == visibility:
                    return found.version
                done = conn.execute(
                    sql(
                        f"UPDATE {spec.table} SET visibility = :visibility, changed_at = :stamp, "
                        "changed_by_id = :actor_id, changed_by_name = :actor_name, version = version + 1 "
                        "WHERE id = :id AND version = :version AND deleted_at IS NULL"
                    ),
                    {
                        "visibility": visibility,
                        "stamp": now(),
                        "actor_id": actor.id,
                        "actor_name": actor.name,
                        "id": found.id,
                        "version": found.version,
                    },
                ).rowcount
                if not done:
                    raise _conflict(kind, find(conn, kind, found.id, actor), name, found.version)
                audit(conn, kind, found.id, found.name, "shared" if visibility == "team" else "unshared", actor)
                return found.version + 1
    raise StoreError(f"no {spec.label} is named {name[:120]!r}", field=spec.field)
