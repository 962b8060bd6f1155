"""After a server has drawn its first page, plan the Fleet page's default scenario in the background.

The Fleet plan is the app's longest computation (a replica simulated at several loads on every node type).
Once the first page of a freshly started server is on screen, one background thread per server process
asks the core for the default scenario's plan, which leaves every simulated run in the core's cache
(planner/speed/step_cache.py); a visitor who then opens Fleet & Quote gets the plan from those runs. It runs only
in a real browser session (never under AppTest; on any address, 127.0.0.1 included) and only in quiet moments:
before each simulation it runs it waits until no script run has started for 5 s and no page's own work
runs in the background (ui/_background.py ``wait_until_quiet``), so a visitor's clicks never share the CPU with it
for longer than one simulation (tens of milliseconds). A visitor who opened Fleet & Quote directly is computing the
same plan; the warm-up then finds it in the cache. A failure is silent: the page computes the plan itself.
"""

from __future__ import annotations

import contextlib
import threading

import streamlit as st

from planner import Scenario, get_model, get_node
from planner.speed import pause_before_each_simulation
from ui._background import Activity, Jobs, browser_session, server_activity, server_jobs, wait_until_quiet
from ui._common import fleet_engine
from ui._fleet_plan import plan_by_node
from ui._timing import timed


def _plan_default_fleet(jobs: Jobs, activity: Activity) -> None:
    def quiet() -> None:
        wait_until_quiet(jobs, activity)

    quiet()
    scenario = Scenario()
    # the Fleet page computes the plan itself on a failure; a visitor's click waits for at most one simulation
    with timed("warm-up", "fleet"), contextlib.suppress(Exception), pause_before_each_simulation(quiet):
        method = scenario.method
        draft = get_model(scenario.draft) if scenario.draft and not method else None
        plan_by_node(
            get_model(scenario.target),
            [get_node(n) for n in scenario.fleet_nodes],
            scenario.traffic(),
            before_node=lambda done, node: quiet(),
            before_all=quiet,
            workers=1,  # in this thread, which gives way to visitors between its simulations
            draft=draft,
            method=method,
            **fleet_engine(scenario),
            kv_dtype=scenario.kv_dtype,
        )


@st.cache_resource(show_spinner=False)
def _started() -> threading.Thread:
    thread = threading.Thread(
        target=_plan_default_fleet, args=(server_jobs(), server_activity()), daemon=True, name="planner-warm-up"
    )
    thread.start()
    return thread


def warm_up_after_first_render() -> None:
    """app.py's last line: start the background plan once per server process (browser sessions only)."""
    if browser_session():
        _started()
