"""Reports: documents (PDF, XLSX, HTML, JSON, Markdown), tables and charts built from core results; no formulas."""

from planner.reports import charts
from planner.reports.document import FORMATS, MIME, Report, Section, Summary
from planner.reports.quote import misses_table, options_table, quote_report, quotes_table
from planner.reports.render_pdf import chromium_available as pdf_available
from planner.reports.screen import human_columns, human_label, memory_components_view, suggestions_view, whole_requests
from planner.reports.sizing import sizing_report
from planner.reports.table_format import Table
from planner.reports.tables import (
    gpu_memory_table,
    gpus_table,
    log_facts_table,
    models_table,
    nodes_table,
    speed_assumptions_table,
    step_times_table,
    suggestions_table,
    task_verdicts_table,
)

__all__ = [
    "FORMATS",
    "MIME",
    "Report",
    "Section",
    "Summary",
    "Table",
    "charts",
    "gpu_memory_table",
    "gpus_table",
    "human_columns",
    "human_label",
    "log_facts_table",
    "memory_components_view",
    "misses_table",
    "models_table",
    "nodes_table",
    "options_table",
    "pdf_available",
    "quote_report",
    "quotes_table",
    "sizing_report",
    "speed_assumptions_table",
    "step_times_table",
    "suggestions_table",
    "suggestions_view",
    "task_verdicts_table",
    "whole_requests",
]
