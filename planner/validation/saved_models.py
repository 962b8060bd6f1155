"""Custom models imported from a ``config.json``, kept in the store, owned and shared like every saved item.

One row per distinct config and owner: its canonical JSON, its SHA-256 (:func:`planner.catalog.config_fingerprint`)
and a name unique per owner regardless of case (:func:`planner.catalog.import_name`: the typed name, else the
config's ``_name_or_path``, never the uploaded file's name). Saving a config the actor can already see (their
own or the team's), under any name, writes nothing and says which name holds it (``duplicate_of``); a
different config under a taken name is refused. Owners, visibility, soft deletion and the audit trail follow
:mod:`planner.validation.owned`. Every write is one transaction, so a refused or failed save leaves the
row count as it was. A row that no longer builds a model is skipped by :func:`list_custom_models` and
reported, never fatal.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "s.sqlite3"
>>> cfg = {"_name_or_path": "acme/tiny", "model_type": "mistral", "num_hidden_layers": 2, "hidden_size": 64,
...     "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100}
>>> save_custom_model(cfg, path=path).name
'acme/tiny'
>>> again = save_custom_model(dict(cfg), "another name", path=path)
>>> again.name, again.duplicate
('acme/tiny', True)
>>> [m.name for m in list_custom_models(path=path).models], custom_model_specs(path=path)[0].origin
(['acme/tiny'], 'imported')
>>> find_custom_model(dict(reversed(list(cfg.items()))), path=path)
'acme/tiny'
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, PrivateAttr

from planner.catalog import ModelSpec, config_fingerprint, import_name, load_config, model_from_config
from planner.store import IntegrityError, transaction
from planner.store import text as sql
from planner.validation.actor import LOCAL_ACTOR, Actor, Visibility
from planner.validation.owned import (
    VISIBLE,
    Owned,
    checked_actor,
    checked_visibility,
    soft_delete,
    write,
)
from planner.validation.owned_rows import list_visible
from planner.validation.store import StoreError, _absent, connect

__all__ = [
    "SavedModel",
    "SavedModelList",
    "SavedModelOutcome",
    "custom_model_specs",
    "delete_custom_model",
    "find_custom_model",
    "list_custom_models",
    "save_custom_model",
]


class SavedModel(Owned):
    name: str
    #: When it was first saved, ISO 8601 UTC.
    created_at: str
    config_sha256: str
    config: dict[str, Any]

    _spec: ModelSpec | None = PrivateAttr(default=None)

    def spec(self) -> ModelSpec:
        """The model, as the planner sizes it (raises PlannerError when the config no longer resolves); built once."""
        if self._spec is None:
            self._spec = model_from_config(self.config, model_id=self.name)
        return self._spec


class SavedModelList(BaseModel):
    """Every readable saved model (by name) and one line per row that was skipped."""

    models: list[SavedModel]
    problems: list[str]


class SavedModelOutcome(BaseModel):
    """What a save did: ``name`` holds the config; ``duplicate`` when it was already saved (nothing written)."""

    name: str
    duplicate: bool
    #: The name the caller asked for (typed, or the config's own) when it differs from ``name``.
    requested: str


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _existing(path: str | Path | None, sha: str, actor: Actor) -> str | None:
    """The name of the config ``sha`` the actor can see (their own first, else the team's earliest)."""
    with connect(path) as conn:
        row = conn.execute(
            sql(
                f"SELECT name FROM custom_models WHERE config_sha256 = :sha AND {VISIBLE} "
                "ORDER BY CASE WHEN owner_id = :actor_id THEN 0 ELSE 1 END, id LIMIT 1"
            ),
            {"sha": sha, "actor_id": actor.id},
        ).fetchone()
    return None if row is None else str(row[0])


def save_custom_model(
    source: dict[str, Any] | bytes | str | Path,
    name: str | None = None,
    *,
    path: str | Path | None = None,
    actor: Actor = LOCAL_ACTOR,
    visibility: Visibility | None = None,
    expected_version: int | None = None,
) -> SavedModelOutcome:
    """Save an imported config under ``name`` (else its ``_name_or_path``) in one transaction.

    The same config already saved is reported as a duplicate with its name; a different config under a
    taken name (any case) is refused with a :class:`StoreError` naming the field ``model_name``.
    """
    actor, visibility = checked_actor(actor), checked_visibility(visibility)
    config = load_config(source, field="config")
    wanted = import_name(config, name)
    model_from_config(config, model_id=wanted)  # never store a config that does not build a model
    sha = config_fingerprint(config)
    text = json.dumps(config, sort_keys=True, ensure_ascii=False, default=str)
    held = _existing(path, sha, actor)
    if held is not None:
        return SavedModelOutcome(name=held, duplicate=True, requested=wanted)
    try:
        with transaction(path) as conn:
            write(
                conn,
                "model",
                wanted,
                {"config_sha256": sha, "created_at": _now(), "json": text},
                actor=actor,
                visibility=visibility,
                replace=False,
                expected_version=expected_version,
            )
    except IntegrityError:
        held = _existing(path, sha, actor)  # another process saved the same config meanwhile
        if held is not None:
            return SavedModelOutcome(name=held, duplicate=True, requested=wanted)
        raise StoreError(
            f"a different saved model is already named {wanted!r}: type another name for this config "
            "(or delete the saved one on the Saved page)",
            field="model_name",
        ) from None
    return SavedModelOutcome(name=wanted, duplicate=False, requested=wanted)


def find_custom_model(
    source: dict[str, Any] | bytes | str | Path, *, path: str | Path | None = None, actor: Actor = LOCAL_ACTOR
) -> str | None:
    """The name the same config is saved under (by content, :func:`planner.catalog.config_fingerprint`) among the
    models the actor can see, or None."""
    actor = checked_actor(actor)
    sha = config_fingerprint(load_config(source, field="config"))
    if _absent(path):
        return None
    return _existing(path, sha, actor)


#: The columns :func:`_row` reads, in its argument order.
_COLUMNS = "name, created_at, config_sha256, json"


def _row(name: object, created_at: object, sha: object, text: object) -> SavedModel:
    """A row that still builds a model (its config read through the same bounds as an upload), else an error."""
    if not isinstance(text, str):
        raise ValueError("the row holds no JSON text")
    config = load_config(text.encode(), field="config")
    saved = SavedModel(name=str(name), created_at=str(created_at), config_sha256=str(sha), config=config)
    saved.spec()
    return saved


def list_custom_models(*, path: str | Path | None = None, actor: Actor = LOCAL_ACTOR) -> SavedModelList:
    """Every saved custom model the actor may see (theirs and the team's) by name (case-insensitive order); rows
    that are not a config are reported."""
    models, problems = list_visible("model", _COLUMNS, _row, path=path, actor=actor)
    return SavedModelList(models=models, problems=problems)


def custom_model_specs(*, path: str | Path | None = None, actor: Actor = LOCAL_ACTOR) -> list[ModelSpec]:
    """Every saved custom model the actor may see that still builds a model (one per name: their own first; the
    others are left out, the list reports them)."""
    specs: dict[str, ModelSpec] = {}
    for saved in sorted(list_custom_models(path=path, actor=actor).models, key=lambda m: not m.owned_by(actor)):
        specs.setdefault(saved.name.lower(), saved.spec())
    return sorted(specs.values(), key=lambda spec: spec.id.lower())


def delete_custom_model(
    name: str,
    *,
    path: str | Path | None = None,
    actor: Actor = LOCAL_ACTOR,
    owner_id: str | None = None,
    expected_version: int | None = None,
) -> None:
    """Delete the saved model ``name`` (any case; the owner only) in one transaction, restorable for 30 days; an
    unknown name is refused."""
    if not isinstance(name, str) or not name.strip():
        raise StoreError(f"no saved model is named {str(name)[:40]!r}", field="model_name")
    soft_delete("model", name.strip(), actor=actor, path=path, owner_id=owner_id, expected_version=expected_version)
