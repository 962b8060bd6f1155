"""UI-only helpers shared by the pages: cached wrappers around core calls and error display.

Nothing here computes a formula; it calls planner/ and caches the result per session inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pandas as pd
import streamlit as st

from planner import PlannerError
from planner.catalog import list_models, model_facts
from planner.memory import concurrency_by_context, plan_memory
from planner.reports import gpus_table, models_table, nodes_table

T = TypeVar("T")


@st.cache_data(show_spinner=False)
def catalog_models_table() -> pd.DataFrame:
    return models_table(model_facts(spec) for spec in list_models())


@st.cache_data(show_spinner=False)
def catalog_gpus_table() -> pd.DataFrame:
    return gpus_table()


@st.cache_data(show_spinner=False)
def catalog_nodes_table() -> pd.DataFrame:
    return nodes_table()


@st.cache_data(show_spinner=False, max_entries=64)
def cached_plan(dep):
    """The memory plan of a deployment, computed once per distinct scenario."""
    return plan_memory(dep)


@st.cache_data(show_spinner=False, max_entries=64)
def cached_concurrency_curve(dep, lengths: tuple[int, ...]):
    return concurrency_by_context(dep, list(lengths))


def guarded(action: Callable[[], T]) -> T | None:
    """Run a core call; show a planner error as a message instead of a traceback."""
    try:
        return action()
    except PlannerError as exc:
        st.error(str(exc), icon="⚠️")
        return None
