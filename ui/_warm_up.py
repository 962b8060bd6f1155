"""After a server has drawn its first page, plan the Fleet page's default scenario in the background.

The Fleet plan is the app's longest computation (a replica simulated at several loads on every node type).
Once the first page of a freshly started server is on screen, one background thread per server process
asks the core for the default scenario's plan, which leaves every simulated run in the core's cache
(planner/speed/step_cache.py); a visitor who then opens Fleet & Quote gets the plan from those runs. It
starts a few seconds after the first render so that it never slows that render down, and only in a real
browser session (never under AppTest; on any address, 127.0.0.1 included), and waits while a page's own work
runs in the background (a visitor who opened Fleet & Quote directly is computing the same plan: the warm-up
then finds it in the cache). A failure is silent: the page computes the plan itself.
"""

from __future__ import annotations

import contextlib
import threading
import time

import streamlit as st

from planner import Scenario, get_model, get_node
from planner.decisions import plan_fleet
from ui._background import Jobs, browser_session, server_jobs
from ui._common import fleet_engine
from ui._timing import timed

#: Seconds between the first render and the start of the background work.
START_DELAY_S = 3.0
#: Seconds between two looks at whether a visitor's own background work has finished.
BUSY_POLL_S = 0.5


def _plan_default_fleet(jobs: Jobs) -> None:
    time.sleep(START_DELAY_S)
    while jobs.running():  # a visitor's own work (ui/_background.py) goes first: it would share the CPU with this
        time.sleep(BUSY_POLL_S)
    scenario = Scenario()
    with timed("warm-up", "fleet"), contextlib.suppress(Exception):  # the Fleet page computes the plan itself
        method = scenario.method
        draft = get_model(scenario.draft) if scenario.draft and not method else None
        plan_fleet(
            get_model(scenario.target),
            [get_node(n) for n in scenario.fleet_nodes],
            scenario.traffic(),
            draft=draft,
            method=method,
            engine=fleet_engine(scenario.engine),
            kv_dtype=scenario.kv_dtype,
        )


@st.cache_resource(show_spinner=False)
def _started() -> threading.Thread:
    thread = threading.Thread(target=_plan_default_fleet, args=(server_jobs(),), daemon=True, name="planner-warm-up")
    thread.start()
    return thread


def warm_up_after_first_render() -> None:
    """app.py's last line: start the background plan once per server process (browser sessions only)."""
    if browser_session():
        _started()
