"""Reports: documents (PDF, XLSX, HTML, JSON, Markdown), tables and charts built from core results; no formulas.

Every name below is imported from its module on first access (PEP 562): a page that shows a table does not
import openpyxl, kaleido or plotly.express, and exports load their renderers only when they run.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Each public name: (module under planner.reports, its name there); ``charts`` is a sub-package.
_OWNER: dict[str, tuple[str, str]] = {
    "COLOUR_BY": ("search_view", "COLOUR_BY"),
    "COLUMNS": ("tables", "COLUMNS"),
    "Column": ("tables", "Column"),
    "FORMATS": ("document", "FORMATS"),
    "MAIN_COLUMNS": ("tables", "MAIN_COLUMNS"),
    "MIME": ("document", "MIME"),
    "Report": ("document", "Report"),
    "ScreenTable": ("tables", "ScreenTable"),
    "Section": ("document", "Section"),
    "Summary": ("document", "Summary"),
    "Table": ("table_format", "Table"),
    "VALUE_LABELS": ("tables", "VALUE_LABELS"),
    "draws_table": ("quote", "draws_table"),
    "for_customers": ("accuracy", "for_customers"),
    "frontier_charts": ("search_view", "frontier_charts"),
    "frontier_table": ("search_view", "frontier_table"),
    "gpu_memory_table": ("tables", "gpu_memory_table"),
    "gpus_table": ("tables", "gpus_table"),
    "human_columns": ("screen", "human_columns"),
    "human_label": ("screen", "human_label"),
    "log_facts_table": ("tables", "log_facts_table"),
    "log_facts_view": ("tables", "log_facts_view"),
    "margins_table": ("quote", "margins_table"),
    "memory_components_view": ("screen", "memory_components_view"),
    "misses_table": ("quote", "misses_table"),
    "models_table": ("tables", "models_table"),
    "nodes_table": ("tables", "nodes_table"),
    "options_table": ("quote", "options_table"),
    "pdf_available": ("render_pdf", "chromium_available"),
    "plain_text": ("escaping", "plain_text"),
    "quote_report": ("quote", "quote_report"),
    "quotes_table": ("quote", "quotes_table"),
    "scenario_link": ("links", "scenario_link"),
    "screen_table": ("tables", "screen_table"),
    "search_report": ("search_view", "search_report"),
    "sizing_report": ("sizing", "sizing_report"),
    "speed_assumptions_table": ("tables", "speed_assumptions_table"),
    "step_times_table": ("tables", "step_times_table"),
    "suggestions_table": ("tables", "suggestions_table"),
    "suggestions_view": ("screen", "suggestions_view"),
    "task_verdicts_table": ("tables", "task_verdicts_table"),
    "warm_up_chart_browser": ("static_charts", "warm_up_chart_browser"),
    "whole_requests": ("screen", "whole_requests"),
}

__all__ = [
    "COLOUR_BY",
    "COLUMNS",
    "FORMATS",
    "MAIN_COLUMNS",
    "MIME",
    "VALUE_LABELS",
    "Column",
    "Report",
    "ScreenTable",
    "Section",
    "Summary",
    "Table",
    "charts",
    "draws_table",
    "for_customers",
    "frontier_charts",
    "frontier_table",
    "gpu_memory_table",
    "gpus_table",
    "human_columns",
    "human_label",
    "log_facts_table",
    "log_facts_view",
    "margins_table",
    "memory_components_view",
    "misses_table",
    "models_table",
    "nodes_table",
    "options_table",
    "pdf_available",
    "plain_text",
    "quote_report",
    "quotes_table",
    "scenario_link",
    "screen_table",
    "search_report",
    "sizing_report",
    "speed_assumptions_table",
    "step_times_table",
    "suggestions_table",
    "suggestions_view",
    "task_verdicts_table",
    "warm_up_chart_browser",
    "whole_requests",
]


def __getattr__(name: str) -> Any:
    if name == "charts":
        value: Any = importlib.import_module("planner.reports.charts")
    elif name in _OWNER:
        module, attribute = _OWNER[name]
        value = getattr(importlib.import_module(f"planner.reports.{module}"), attribute)
    else:
        raise AttributeError(f"module 'planner.reports' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_OWNER, "charts"})
