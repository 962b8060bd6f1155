"""UI-only helpers shared by the pages: cached wrappers around core calls and error display.

Nothing here computes a formula; it calls planner/ and caches the result per session inputs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

import pandas as pd
import streamlit as st

from planner import PlannerError, reports
from planner.catalog import MAX_CONFIG_BYTES, list_models, model_facts
from planner.memory import concurrency_by_context, plan_memory
from planner.pairs import MAX_TOKENIZER_BYTES
from planner.reports import (
    FORMATS,
    MIME,
    Report,
    ScreenTable,
    charts,
    gpus_table,
    models_table,
    nodes_table,
    pdf_available,
    plain_text,
    screen_table,
)
from planner.scenario import Scenario
from ui._background import browser_session
from ui._rerun import keep_shown
from ui._timing import timed

T = TypeVar("T")
LOG = logging.getLogger("planner.pages")

#: Per-kind upload limits (server.maxUploadSize in .streamlit/config.toml caps every upload at 64 MB).
MAX_LOG_UPLOAD_BYTES = 20 * 2**20  # 5,000,000 characters of log, up to 4 bytes each
MAX_CONFIG_UPLOAD_BYTES = MAX_CONFIG_BYTES
MAX_TOKENIZER_UPLOAD_BYTES = MAX_TOKENIZER_BYTES


# The catalog's tables are built once per server and shared read-only (cache_resource: no copy per rerun).
@st.cache_resource(show_spinner=False)
def catalog_models_table() -> pd.DataFrame:
    return models_table(model_facts(spec) for spec in list_models())


@st.cache_resource(show_spinner=False)
def catalog_gpus_table() -> pd.DataFrame:
    return gpus_table()


@st.cache_resource(show_spinner=False)
def catalog_nodes_table() -> pd.DataFrame:
    return nodes_table()


@st.cache_resource(show_spinner=False)
def catalog_view(kind: str) -> ScreenTable:
    """A catalog table as the Catalog page shows it (human headers, main columns and details), built once."""
    table = {"models": catalog_models_table, "gpus": catalog_gpus_table, "nodes": catalog_nodes_table}[kind]()
    return screen_table(table, kind)


def _number_columns(table: pd.DataFrame, formats: dict[str, str]) -> dict:
    return {label: st.column_config.NumberColumn(format=fmt) for label, fmt in formats.items() if label in table}


def shown_table(table: pd.DataFrame | ScreenTable, kind: str | None = None, *, key: str | None = None, **kwargs):
    """Draw a table with the one label/format table of planner.reports (headers with units, numbers formatted):
    the columns that decide first, the others in a "Details" expander. Returns st.dataframe's selection event."""
    view = table if isinstance(table, ScreenTable) else screen_table(table, kind)
    event = st.dataframe(
        view.main, hide_index=True, column_config=_number_columns(view.main, view.formats), key=key, **kwargs
    )
    if view.details is not None:
        with st.expander("Details"):
            st.dataframe(
                view.details,
                hide_index=True,
                column_config=_number_columns(view.details, view.formats),
                key=f"{key}_details" if key else None,
            )
    return event


@st.cache_data(show_spinner=False, max_entries=64)
def cached_plan(dep):
    """The memory plan of a deployment, computed once per distinct scenario."""
    return plan_memory(dep)


@st.cache_data(show_spinner=False, max_entries=64)
def cached_concurrency_curve(dep, lengths: tuple[int, ...]):
    return concurrency_by_context(dep, list(lengths))


def error_message(exc: BaseException, what: str = "this input") -> str:
    """What to tell the user about an error: the planner's own message, else what to fix and where to look.

    The result is shown as Markdown, so the planner's message (which may quote the user's input) is escaped.
    """
    if isinstance(exc, PlannerError):
        return plain_text(exc)
    if isinstance(exc, RecursionError):
        return f"Could not use {what}: it is nested too deeply. Check that it is the file the field asks for."
    if isinstance(exc, MemoryError):
        return f"Could not use {what}: it needs more memory than this server has. Try a smaller input."
    return (
        f"Could not use {what} ({type(exc).__name__}). Check the values and files above; "
        "the server log has the details for the operator."
    )


def guarded(action: Callable[[], T], what: str = "this input") -> T | None:
    """Run a core call; show any error as a message naming what to fix, never a traceback (logged instead)."""
    try:
        return action()
    except PlannerError as exc:
        st.error(error_message(exc, what), icon="⚠️")
    except Exception as exc:  # a page never shows an exception box: the operator gets the traceback in the log
        LOG.exception("page action failed on %s", what)
        st.error(error_message(exc, what), icon="⚠️")
    return None


def run_page_guarded(page) -> None:
    """Run a navigation page so that an error anywhere in it becomes a message (script control passes through)."""
    try:
        page.run()
    except Exception as exc:  # st.stop / st.rerun are BaseException and pass through
        LOG.exception("page %s failed", getattr(page, "title", page))
        st.error(error_message(exc, "this page's inputs"), icon="⚠️")


def upload_text(upload, kind: str, limit_bytes: int) -> str | None:
    """An upload's text, or None (with a message) when it is over the limit for its kind."""
    size = getattr(upload, "size", None) or len(upload.getvalue())
    if size > limit_bytes:
        st.error(
            f"The {kind} file is {size:,} bytes: at most {limit_bytes // 2**20} MB is read. Upload a smaller file."
        )
        return None
    return upload.getvalue().decode("utf-8", errors="replace")


def upload_bytes(upload, kind: str, limit_bytes: int) -> bytes | None:
    """An upload's bytes, or None (with a message) when it is over the limit for its kind."""
    size = getattr(upload, "size", None) or len(upload.getvalue())
    if size > limit_bytes:
        st.error(
            f"The {kind} file is {size:,} bytes: at most {limit_bytes // 2**20} MB is read. Upload a smaller file."
        )
        return None
    return upload.getvalue()


def scenario_link(query: dict[str, str]) -> str:
    """This page's public link with the scenario's query (``planner.reports.links``: the configured public
    address, never the server's loopback one; empty when none is known, as in tests)."""
    try:
        browser = st.context.url
    except Exception:  # no browser context (bare mode)
        browser = None
    return reports.scenario_link(query, browser)


def fleet_engine(scenario: Scenario) -> dict[str, str]:
    """The engine a fleet is quoted with, and its release where the sidebar names one: the sidebar's, with vLLM at
    its newest profiled release standing in for plain transformers (which no one serves a fleet with). One place
    for the Fleet page and its background warm-up (the release left out when none is named, so both ask alike)."""
    if scenario.engine == "hf":
        return {"engine": "vllm"}
    return {"engine": scenario.engine} | (
        {"engine_version": scenario.engine_version} if scenario.engine_version else {}
    )


def export_buttons(build: Callable[[], Report], stem: str, key: str) -> None:
    """The document details (customer, prepared by) and one download button per format (PDF first); each document
    is built only when its button is clicked, with the details as typed."""
    with st.expander("Document details (optional)"):
        left, right = st.columns(2)
        keep_shown("doc_customer", "doc_prepared_by")  # a saved quote reopened sets them
        left.text_input("Customer", key="doc_customer", max_chars=120, persist_state="page")
        right.text_input("Prepared by", key="doc_prepared_by", max_chars=120, persist_state="page")
    customer = st.session_state.get("doc_customer", "")
    prepared_by = st.session_state.get("doc_prepared_by", "")

    def with_details() -> Report:
        report = build()
        report.customer, report.prepared_by = customer, prepared_by
        return report

    download_buttons(with_details, stem, key)


def download_buttons(
    build: Callable[[], Report], stem: str, key: str, on_export: Callable[[str], None] | None = None
) -> None:
    """One download button per format (PDF first) for the report ``build`` returns, built only on click.

    Streamlit calls the data callables on click, in another thread, so nothing here may draw. A failure
    becomes a short text file naming the problem (never a traceback). ``on_export(fmt)`` runs after a
    successful export (the Saved page records it in the item's history).
    """

    def data(fmt: str) -> Callable[[], bytes]:
        def make() -> bytes:
            try:
                with timed("export", fmt):
                    exported = build().export(fmt)
                if on_export is not None:
                    on_export(fmt)
                return exported
            except Exception as exc:  # the download carries the reason; the log has the traceback
                LOG.exception("export %s failed", fmt)
                why = str(exc) if isinstance(exc, PlannerError) else error_message(exc, "this export")
                return f"The {fmt.upper()} export failed: {why}\n".encode()

        return make

    pdf_ready = pdf_available()
    if pdf_ready and browser_session():  # a real browser session: have the chart browser ready before a click
        from planner.reports import warm_up_chart_browser  # noqa: PLC0415 (kaleido's module: only with exports)

        warm_up_chart_browser()
    for col, fmt in zip(st.columns(len(FORMATS)), FORMATS, strict=True):
        col.download_button(
            fmt.upper() if fmt != "md" else "Markdown",
            data(fmt),
            file_name=f"{stem}.{fmt}",
            mime=MIME[fmt],
            key=f"{key}_export_{fmt}",
            on_click="ignore",
            disabled=fmt == "pdf" and not pdf_ready,
            help="printed by headless Chromium" if fmt == "pdf" and pdf_ready else None,
            width="stretch",
        )
    if not pdf_ready:
        st.caption("PDF needs Chromium on the server (apt-get install chromium); the HTML export prints the same.")


@st.cache_resource(show_spinner=False, max_entries=256)
def _chart(name: str, key: str, _args: tuple, _kwargs: dict):
    return getattr(charts, name)(*_args, **_kwargs)


def cached_chart(name: str, key: str, *args, **kwargs):
    """``planner.reports.charts.<name>(*args, **kwargs)``, built once per (name, key) and shared read-only.

    ``key`` is the JSON of the pydantic inputs the arguments come from (a deployment, a workload), so a
    rerun with the same inputs reuses the figure instead of building it again.
    """
    return _chart(name, key, args, kwargs)
