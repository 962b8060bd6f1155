"""Server-side timing for ``make bench-app``: off unless ``PLANNER_RENDER_LOG`` names a file.

With it set, every script run of app.py and every export built on a download click appends one JSON line
``{"kind": "run" | "export", "name": page or format, "start": epoch s, "seconds": s, "cpu_seconds": s}`` to that
file, so a benchmark driving a real browser can read how long the server worked for each render: ``seconds`` on
the wall clock, ``cpu_seconds`` the CPU time of the thread that rendered (what the render costs, whatever else the
machine runs). Nothing is shown.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

LOG_ENV = "PLANNER_RENDER_LOG"


@contextmanager
def timed(kind: str, name: str = "") -> Iterator[SimpleNamespace]:
    """Time the block (``label.name`` may be set inside it); a line is logged however it ends (st.stop too)."""
    label = SimpleNamespace(name=name)
    path = os.environ.get(LOG_ENV)
    start_epoch, start, cpu = time.time(), time.perf_counter(), time.thread_time()
    try:
        yield label
    finally:
        if path:
            line = {
                "kind": kind,
                "name": label.name,
                "start": start_epoch,
                "seconds": time.perf_counter() - start,
                "cpu_seconds": time.thread_time() - cpu,
            }
            try:
                with open(path, "a", encoding="utf-8") as log:
                    log.write(json.dumps(line) + "\n")
            except OSError:
                pass
