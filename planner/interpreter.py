"""How a planner process runs Python: its garbage collector, and its exit.

The planner's long computations (a Fleet plan, a design-space search) allocate millions of short-lived tuples and
floats that never form reference cycles, beside long-lived data loaded once (the catalog, the kernel tables, the
memoised step prices). CPython 3.11's collector scans its youngest generation every 700 container allocations and
every generation now and then, the long-lived data included: about 7% of a Fleet plan's CPU time (3.7 s against
3.5 s for the default scenario; `python -m bench.core_timing` prints both) is spent finding no garbage.
:func:`tune_collector` moves what is alive at start-up out of the collector's sight (``gc.freeze``, meant for
exactly this: https://docs.python.org/3/library/gc.html#gc.freeze) and collects the youngest generation every
``GEN0_THRESHOLD`` allocations instead; cycles are still collected.

A command-line process that has printed its answer also spends up to a second and a half freeing every object one
by one on its way out (the interpreter's teardown after a search of ten thousand configurations).
:func:`exit_without_teardown` ends it at once, after every other exit handler has run (the chart browser of the
exports is closed by one): output is flushed and nothing the command opened is still open by then (mypy ends
its process the same way, for the same reason).

>>> import gc
>>> before = gc.get_threshold()
>>> tune_collector(); gc.get_threshold()[0] == GEN0_THRESHOLD
True
>>> gc.unfreeze(); gc.set_threshold(*before)
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
from collections.abc import Callable

#: Container allocations between collections of the youngest generation (CPython's default is 700).
GEN0_THRESHOLD = 50_000


def tune_collector() -> None:
    """Freeze what is alive now (start-up imports and data) and collect the youngest generation less often."""
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GEN0_THRESHOLD, gen1, gen2)


def exit_without_teardown() -> Callable[[int], int]:
    """Make this process end without the interpreter's teardown. Call it first thing, so that its exit handler is
    the first registered and runs last; it returns ``leaving(code)``, which records the command's exit code (and
    returns it, for :func:`sys.exit`). A process that leaves any other way (an exception that escaped) exits 1."""
    recorded = [1]

    def hard_exit() -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(recorded[0])

    def leaving(code: int) -> int:
        recorded[0] = code
        return code

    atexit.register(hard_exit)
    return leaving
