"""Reports: documents (PDF, XLSX, HTML, JSON, Markdown), tables and charts built from core results; no formulas."""

from planner.reports import charts
from planner.reports.accuracy import for_customers
from planner.reports.document import FORMATS, MIME, Report, Section, Summary
from planner.reports.links import scenario_link
from planner.reports.quote import misses_table, options_table, quote_report, quotes_table
from planner.reports.render_pdf import chromium_available as pdf_available
from planner.reports.screen import human_columns, human_label, memory_components_view, suggestions_view, whole_requests
from planner.reports.sizing import sizing_report
from planner.reports.table_format import Table
from planner.reports.tables import (
    COLUMNS,
    MAIN_COLUMNS,
    VALUE_LABELS,
    Column,
    ScreenTable,
    gpu_memory_table,
    gpus_table,
    log_facts_table,
    log_facts_view,
    models_table,
    nodes_table,
    screen_table,
    speed_assumptions_table,
    step_times_table,
    suggestions_table,
    task_verdicts_table,
)

__all__ = [
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
    "for_customers",
    "gpu_memory_table",
    "gpus_table",
    "human_columns",
    "human_label",
    "log_facts_table",
    "log_facts_view",
    "memory_components_view",
    "misses_table",
    "models_table",
    "nodes_table",
    "options_table",
    "pdf_available",
    "quote_report",
    "quotes_table",
    "scenario_link",
    "screen_table",
    "sizing_report",
    "speed_assumptions_table",
    "step_times_table",
    "suggestions_table",
    "suggestions_view",
    "task_verdicts_table",
    "whole_requests",
]
