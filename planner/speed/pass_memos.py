"""Priced parts of forward passes, kept per model configuration and shared by every step model of it.

A serving run prices a few hundred thousand passes, but only a few thousand different batch mixes: the same
decode batch sizes, token counts and prefill chunk mixes come back step after step, and again in the next run of
the same deployment (a capacity search runs one replica at many request rates). What a pass costs apart from its
decode context depends only on the mix and on the model's configuration: its per-GPU costs, GPU, speed profile,
CUDA graphs and kernel tables. So each priced part is kept under that configuration and reused exactly.

Each entry also holds the operators its pricing left to the roofline (a kernel table that did not cover the
shape), so a step model that reuses an entry records the same fallbacks as one that priced it afresh: a model's
source label never depends on what other runs priced before it.

>>> memos = PassMemos()
>>> memos.tokens.get((8, 8)) is None  # not priced yet: price it, then keep it
True
>>> memos.kept(memos.tokens, (8, 8), (1.0, 2.0), set())
((1.0, 2.0), frozenset())
>>> memos.tokens[(8, 8)]
((1.0, 2.0), frozenset())
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import TypeVar

from planner.facts import register_cache

T = TypeVar("T")

#: Entries one table of one configuration keeps (a serving run meets a few thousand mixes; beyond, it starts over).
MEMO_ENTRIES = 16_384
#: Model configurations kept (a fleet comparison or a search prices a few dozen).
CONFIGURATIONS = 64
#: An entry whose pricing left nothing to the roofline.
NO_NOTES: frozenset[str] = frozenset()


class PassMemos:
    """The priced pass mixes, token counts and prefill chunk mixes of one model configuration."""

    __slots__ = ("chunks", "counts", "logits", "mixes", "tokens")

    def __init__(self) -> None:
        self.mixes: dict[Hashable, tuple] = {}
        self.tokens: dict[Hashable, tuple] = {}
        #: The parts of a (tokens, logits) entry kept per token count and per logits count.
        self.counts: dict[Hashable, tuple] = {}
        self.logits: dict[Hashable, tuple] = {}
        self.chunks: dict[Hashable, tuple] = {}

    @staticmethod
    def kept(table: dict[Hashable, tuple], key: Hashable, value: T, notes: set[str]) -> tuple[T, frozenset[str]]:
        """Keep ``value``, just priced for ``key`` (``notes``: each operator its pricing left to the roofline), in
        ``table``, and return the entry (value, fallbacks). Callers look ``key`` up first and price only on a miss."""
        if len(table) >= MEMO_ENTRIES:
            table.clear()
        entry = table[key] = (value, frozenset(notes) if notes else NO_NOTES)
        return entry


class _Configurations:
    """:class:`PassMemos` per configuration key, the least recently used dropped past :data:`CONFIGURATIONS`."""

    def __init__(self) -> None:
        self._memos: OrderedDict[Hashable, PassMemos] = OrderedDict()
        self._lock = threading.Lock()  # pages plan in background threads

    def get(self, key: Hashable) -> PassMemos:
        with self._lock:
            memos = self._memos.get(key)
            if memos is None:
                memos = self._memos[key] = PassMemos()
                if len(self._memos) > CONFIGURATIONS:
                    self._memos.popitem(last=False)
            else:
                self._memos.move_to_end(key)
            return memos

    def cache_clear(self) -> None:
        with self._lock:
            self._memos.clear()

    def renew_lock(self) -> None:
        """A new lock (in a forked child, where a thread the child lacks may have held the parent's)."""
        self._lock = threading.Lock()


_CONFIGURATIONS = _Configurations()
register_cache(_CONFIGURATIONS)  # data reloaded (another data folder, new kernel tables): price afresh
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_CONFIGURATIONS.renew_lock)


def pass_memos(configuration: Hashable) -> PassMemos:
    """The memos of the model configuration ``configuration`` (a key naming everything its pricing reads)."""
    return _CONFIGURATIONS.get(configuration)
