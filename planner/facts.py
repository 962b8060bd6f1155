"""The data folder: where facts live, how one file is read, and one registry of every cache over it.

Every loader of ``data/*.json`` is decorated with :func:`data_cache`, so :func:`clear_caches` forgets
all of them at once (after ``PLANNER_DATA_DIR`` changes, or an edit to ``data/``). Nothing is read at
import time. :class:`SourcedFact` is the base of every catalog entry: each fact carries its source.

>>> read_data_file("gpus.json")["gpus"][0]["id"] != ""
True
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner.errors import CatalogError, first_pydantic_error

REPO_ROOT = Path(__file__).resolve().parent.parent
F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound=BaseModel)
M = TypeVar("M", bound=BaseModel)
_CACHES: list[Any] = []


def data_dir() -> Path:
    """The folder of catalog facts: ``PLANNER_DATA_DIR`` or the repository's ``data/``."""
    return Path(os.environ.get("PLANNER_DATA_DIR", REPO_ROOT / "data"))


def read_data_file(name: str) -> dict[str, Any]:
    """Parse one JSON file of the data folder (errors name the file)."""
    path = data_dir() / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise CatalogError(f"catalog file {path} is missing") from exc
    except json.JSONDecodeError as exc:
        raise CatalogError(f"catalog file {path} is not valid JSON: {exc.msg} at line {exc.lineno}") from exc


def load_model(name: str, model: type[M]) -> M:
    """One data file validated as ``model``; a bad file is a CatalogError naming it and the first bad field."""
    try:
        return model.model_validate(read_data_file(name))
    except ValidationError as exc:
        raise CatalogError(f"{name}: {first_pydantic_error(exc)}") from exc


def data_cache(func: F) -> F:
    """``functools.cache``, registered so :func:`clear_caches` clears it with every other data cache."""
    cached = cache(func)
    _CACHES.append(cached)
    return cached  # type: ignore[return-value]


def register_cache(cached: Any) -> None:
    """Have :func:`clear_caches` clear ``cached`` too (anything with ``cache_clear()``, e.g. an ``lru_cache``)."""
    _CACHES.append(cached)


def clear_caches() -> None:
    """Forget everything loaded from the data folder, in every module."""
    for cached in _CACHES:
        cached.cache_clear()


class SourcedFact(BaseModel):
    """A catalog entry: every fact carries where it came from."""

    model_config = ConfigDict(extra="forbid")

    source: str | list[str] = Field(min_length=1)


def load_entries(name: str, key: str, model: type[M]) -> tuple[M, ...]:
    """The list under ``key`` of data file ``name``, each entry validated as ``model``; ids must be unique."""
    raw = read_data_file(name)
    entries = raw.get(key)
    if not isinstance(entries, list):
        raise CatalogError(f"catalog file {name} must hold a list under {key!r}")
    parsed = []
    for index, entry in enumerate(entries):
        try:
            parsed.append(model.model_validate(entry))
        except ValidationError as exc:
            label = entry.get("id", index) if isinstance(entry, dict) else index
            raise CatalogError(f"{name} entry {label}: {first_pydantic_error(exc)}") from exc
    ids = [getattr(p, "id", getattr(p, "gpu", None)) for p in parsed]
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        raise CatalogError(f"{name} has duplicate ids: {sorted(duplicates)}")
    return tuple(parsed)
