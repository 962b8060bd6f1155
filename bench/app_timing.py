"""`make bench-app`: how fast the app answers (prints, never asserts).

Three parts, in this order: the core's speed of use (bench/core_timing.py: the ``params`` process, the
Fleet default plan cold and warm); each page through a real server and headless Chromium
(bench/app_browser.py: first render after server start, a widget change, Fleet with six node types, the
PDF); and the server-side render times in AppTest below. ``--only core,browser,apptest`` picks parts.

AppTest: server-side time of each page's first render and rerun.

For every page registered in app.py, ``N`` samples (default 20, ``python -m bench.app_timing 5`` for fewer;
``python -m bench.app_timing 20 saved catalog`` for some pages only):
a fresh AppTest session opens the app, switches to the page and renders it (first render), then reruns it
unchanged (rerun). "cold" clears Streamlit's caches and the planner's data caches before each sample (a
server's first visitor); "warm" keeps them (every later visitor). The median and the slowest sample are
printed per page, in milliseconds, with the median CPU time of the script thread (ui/_timing.py), which the
machine's other work does not inflate. Imports are paid once per process and are not in any figure.
``--pages sizing,fleet`` times only those pages; ``--warm`` only the warm samples (a server's later visitors).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

from planner import Scenario, validation
from planner.facts import clear_caches
from ui._timing import LOG_ENV

REPO = Path(__file__).resolve().parents[1]
PAGES = ["sizing", "catalog", "performance", "draft_selection", "fleet", "validation", "saved"]


def _last_run_cpu_s() -> float:
    """CPU seconds of the script thread in the last logged run (ui/_timing.py), whatever else the machine runs."""
    lines = Path(os.environ[LOG_ENV]).read_text(encoding="utf-8").splitlines()
    runs = [e for e in map(json.loads, lines) if e["kind"] == "run"]
    return runs[-1]["cpu_seconds"] if runs else float("nan")


def _sample(page: str, cold: bool) -> tuple[float, float, float, float]:
    """(first render, rerun) of ``page`` in a new session: wall seconds, then the script thread's CPU seconds."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300)
    if page != "sizing":
        at.run()  # the default page registers the navigation; the switch below is the page's first render
        at.switch_page(f"ui/{page}.py")
    if cold:
        st.cache_data.clear()
        st.cache_resource.clear()
        clear_caches()
    start = time.perf_counter()
    at.run()
    first, first_cpu = time.perf_counter() - start, _last_run_cpu_s()
    if at.exception:
        raise SystemExit(f"{page}: {at.exception[0].value}")
    start = time.perf_counter()
    at.run()
    return first, time.perf_counter() - start, first_cpu, _last_run_cpu_s()


def _seeded_store() -> Path:
    """A throw-away store the Saved page lists: two scenarios (compared side by side), a model and a quote."""
    path = Path(tempfile.mkdtemp(prefix="bench-app-")) / "store.sqlite3"
    validation.save_scenario("70B on H100", Scenario(max_model_len=32768), path=path)
    validation.save_scenario("70B on H200", Scenario(node="8x-h200-sxm-141gb", max_model_len=32768), path=path)
    tiny = {"_name_or_path": "bench/tiny", "model_type": "falcon", "num_hidden_layers": 2, "hidden_size": 64,
            "num_attention_heads": 4, "vocab_size": 500}  # fmt: skip
    if hasattr(validation, "save_quote"):  # (a release before saved models and quotes lists scenarios only)
        validation.save_custom_model(tiny, path=path)
        validation.save_quote("Q1", {"title": "quote"}, Scenario(), path=path)
    return path


def main(argv: list[str]) -> int:
    for name in [n for n in logging.root.manager.loggerDict if n.startswith("streamlit")]:
        logging.getLogger(name).setLevel(logging.ERROR)
    os.environ["PLANNER_STORE_PATH"] = str(_seeded_store())  # never the user's store
    os.environ[LOG_ENV] = tempfile.mkstemp(prefix="bench-app-runs-", suffix=".jsonl")[1]  # each run's CPU time
    parser = argparse.ArgumentParser(prog="python -m bench.app_timing")
    parser.add_argument("samples", nargs="?", type=int, default=20)
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated pages to time")
    parser.add_argument("--warm", action="store_true", help="only the warm samples")
    parser.add_argument("--only", default="core,browser,apptest", help="parts to run: core, browser, apptest")
    args = parser.parse_args(argv)
    parts = set(args.only.split(","))
    if "core" in parts:
        from bench import core_timing  # noqa: PLC0415

        core_timing.main()
        print()
    if "browser" in parts:
        from bench import app_browser  # noqa: PLC0415

        app_browser.main(["--pages", args.pages])
        print()
    if "apptest" not in parts:
        return 0
    samples, pages = args.samples, [p for p in args.pages.split(",") if p]
    modes = (False,) if args.warm else (True, False)
    _sample("sizing", cold=False)  # imports and Streamlit's own start-up, paid once per process
    print(f"AppTest server-side render time per page, ms: median (max) of {samples} samples; wall, then the")
    print("script thread's CPU time (what the render costs, whatever else the machine runs)")
    heads = [f"{mode} {part}" for mode in ("cold" if m else "warm" for m in modes) for part in ("first", "rerun")]
    print(f"{'page':<16} " + " ".join(f"{h:>22}" for h in heads))
    for page in pages:
        cells = []
        for cold in modes:
            runs = [_sample(page, cold) for _ in range(samples)]
            for part in (0, 1):
                wall, cpu = ([r[i] * 1e3 for r in runs] for i in (part, part + 2))
                cells.append(f"{statistics.median(wall):6.0f} ({max(wall):5.0f}) {statistics.median(cpu):6.0f}")
        print(f"{page:<16} " + " ".join(f"{c:>22}" for c in cells), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
