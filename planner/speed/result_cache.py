"""A bounded, thread-safe LRU of results (and of the errors of inputs that cannot run), which a worker process can
hand back to the process that forked it.

Every cache is registered under a name (:data:`RESULT_CACHES`). A worker forked to compute part of an answer
(:mod:`planner.decisions.side_by_side`) starts with a copy of its parent's caches; what it adds to them
(:meth:`ResultCache.added_since`) travels back as :class:`Portable` entries, which the parent keeps
(:meth:`ResultCache.adopt`) as if it had computed them itself. Each cache's lock is made anew in a forked child:
a lock another thread of the parent held at the fork would otherwise stay held there for ever.

>>> from planner.errors import InputError
>>> cache = ResultCache(maxsize=2, name="doctest")
>>> kept = cache.kept_keys()
>>> cache.get_or_compute(("a",), lambda: (1, 2))
(1, 2)
>>> try:
...     cache.get_or_compute(("b",), lambda: (_ for _ in ()).throw(InputError("tp", 3, "1, 2 or 4")))
... except InputError as exc:
...     print(exc)
tp = 3 is not allowed: expected 1, 2 or 4
>>> sent = [(key, Portable.of(entry)) for key, entry in cache.added_since(kept)]
>>> other = ResultCache(maxsize=2, name="doctest-copy")
>>> other.adopt([(key, portable.value()) for key, portable in sent])
>>> other.holds(("a",)), type(other.entries[("b",)]).__name__, other.entries[("b",)].field
(True, 'InputError', 'tp')
"""

from __future__ import annotations

import os
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from pydantic import BaseModel

from planner.errors import PlannerError
from planner.facts import register_cache

#: Results kept per cache. A 400-request run holds every request's TTFT and TPOT and 200 occupancy samples
#: (about 55 kB), so the runs' cache stays near 60 MB; a six-node Fleet plan needs about 150 runs.
MAX_ENTRIES = 1024

R = TypeVar("R", bound=BaseModel)
Entry = BaseModel | PlannerError | tuple

#: Every :class:`ResultCache`, by name: what a worker process hands back, cache by cache.
RESULT_CACHES: dict[str, ResultCache] = {}


class ResultCache:
    """A bounded, thread-safe LRU of results and of the errors of inputs that cannot run.

    Streamlit serves sessions from several threads; two threads missing the same key both compute it
    (the results are equal), neither blocks the other.
    """

    def __init__(self, maxsize: int = MAX_ENTRIES, *, name: str) -> None:
        if name in RESULT_CACHES:
            raise ValueError(f"a result cache named {name!r} exists already")
        self.maxsize = maxsize
        self.name = name
        self.entries: OrderedDict[tuple, Entry] = OrderedDict()
        self.lock = threading.Lock()
        self.hits = self.misses = 0
        RESULT_CACHES[name] = self
        register_cache(self)

    def get_or_compute(self, key: tuple, compute: Callable[[], R], error_key: tuple | None = None) -> R:
        """The entry of ``key`` (or the error kept under ``error_key``), else ``compute()`` kept under ``key`` (an
        error under ``error_key`` when given: an error that names its input is kept apart from a shared result)."""
        with self.lock:
            found = key if key in self.entries else error_key if error_key in self.entries else None
            entry = self.entries[found] if found is not None else None
            if found is not None:
                self.entries.move_to_end(found)
                self.hits += 1
            else:
                self.misses += 1
        if entry is None:
            try:
                entry = compute()
            except PlannerError as exc:
                entry = exc
                key = error_key if error_key is not None else key
            self._keep([(key, entry)])
        if isinstance(entry, PlannerError):
            raise _fresh(entry)
        return entry.model_copy() if isinstance(entry, BaseModel) else entry  # type: ignore[return-value]

    def _keep(self, entries: Iterable[tuple[tuple, Entry]], replace: bool = True) -> None:
        with self.lock:
            for key, entry in entries:
                if replace or key not in self.entries:
                    self.entries[key] = entry
                    self.entries.move_to_end(key)
            while len(self.entries) > self.maxsize:
                self.entries.popitem(last=False)

    def holds(self, key: tuple, error_key: tuple | None = None) -> bool:
        """Whether a result (or an error, under ``error_key``) is kept for ``key``."""
        with self.lock:
            return key in self.entries or (error_key is not None and error_key in self.entries)

    def kept_keys(self) -> set[tuple]:
        """The keys kept now (what :meth:`added_since` compares with)."""
        with self.lock:
            return set(self.entries)

    def added_since(self, keys: set[tuple]) -> list[tuple[tuple, Entry]]:
        """The entries kept now under keys not in ``keys`` (:meth:`kept_keys`' answer, taken before), oldest first."""
        with self.lock:
            return [(key, entry) for key, entry in self.entries.items() if key not in keys]

    def adopt(self, entries: Iterable[tuple[tuple, Entry]]) -> None:
        """Keep ``entries`` (another process's :meth:`added_since`), each unless its key is kept already."""
        self._keep(entries, replace=False)

    def renew_lock(self) -> None:
        """A new lock (in a forked child, where the parent's may have been held by a thread the child lacks)."""
        self.lock = threading.Lock()

    def cache_clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.hits = self.misses = 0


def _fresh(error: PlannerError) -> PlannerError:
    """A new exception equal to ``error`` (the cached one is never raised, so it gains no traceback or context)."""
    fresh = type(error).__new__(type(error))
    fresh.args = error.args
    fresh.__dict__.update(error.__dict__)
    return fresh


class Portable:
    """A cache entry (a result, or an error a planner input raised) pickled to cross to another process. Errors
    travel as their type, arguments and attributes, rebuilt as :func:`_fresh` copies them: pickling an exception
    calls its constructor with its message alone, which :class:`planner.errors.InputError` does not take."""

    __slots__ = ("data", "error")

    def __init__(self, data: bytes, error: bool) -> None:
        self.data, self.error = data, error

    @classmethod
    def of(cls, entry: Any) -> Portable:
        if isinstance(entry, PlannerError):
            return cls(pickle.dumps((type(entry), entry.args, entry.__dict__)), True)
        return cls(pickle.dumps(entry), False)

    def value(self) -> Any:
        if not self.error:
            return pickle.loads(self.data)
        kind, args, attributes = pickle.loads(self.data)
        error = kind.__new__(kind)
        error.args = args
        error.__dict__.update(attributes)
        return error


def _renew_locks() -> None:
    for cache in RESULT_CACHES.values():
        cache.renew_lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew_locks)
