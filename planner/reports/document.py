"""One document model for every export: a ``Report`` is exported as PDF, HTML, XLSX, Markdown or JSON.

A report reads like a quote a solution architect sends: a title page (title, customer, prepared by,
date, scenario link, planner version), an executive summary (the recommendation in one paragraph and
one small table), sections (tables, charts as static images, notes), the assumptions and sources, and
the planner's recorded accuracy. Tables carry the kind of each column (:mod:`planner.reports.table_format`),
so every format prints the same figures the same way; the renderers live in ``render_*.py``.

Documents escape what they quote (model names and other text can come from an uploaded config):
HTML escapes every string and carries a Content-Security-Policy that lets the page load nothing but
its own inline images; Markdown escapes HTML and Markdown control characters and folds newlines
(:func:`md_escape`); an XLSX cell never starts with ``=``, ``+``, ``-`` or ``@`` from text
(:func:`xlsx_safe`, formula injection); the PDF is printed by headless Chromium with every network
request sent to a dead proxy, so neither a remote URL nor (by the page's policy) a local file is loaded.

>>> import pandas as pd
>>> report = Report(title="Quote", sections=[Section(title="Fleet", table=pd.DataFrame([{"nodes": 2}]))])
>>> "| nodes |" in report.to_markdown() and report.to_json()["sections"][0]["table"] == [{"nodes": 2}]
True
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from planner.defaults import PLANNER_VERSION
from planner.errors import PlannerError
from planner.reports.escaping import CONTENT_POLICY, md_escape, xlsx_safe
from planner.reports.render_html import report_html
from planner.reports.render_markdown import report_markdown
from planner.reports.render_pdf import print_pdf
from planner.reports.render_xlsx import report_xlsx
from planner.reports.static_charts import figures_to_svg
from planner.reports.table_format import Table

__all__ = ["CONTENT_POLICY", "FORMATS", "MIME", "Report", "Section", "Summary", "md_escape", "xlsx_safe"]

FORMATS = ("pdf", "html", "xlsx", "md", "json")
MIME = {
    "json": "application/json",
    "html": "text/html",
    "md": "text/markdown",
    "pdf": "application/pdf",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


@dataclass
class Section:
    title: str
    text: str = ""
    table: Table | pd.DataFrame | None = None
    figure: Any = None  # a plotly Figure, drawn as a static image
    notes: list[str] = field(default_factory=list)
    #: Preformatted text shown as is (a launch command, a manifest): monospace, never reflowed.
    code: str = ""

    def __post_init__(self) -> None:
        self.table = Table.of(self.table)


@dataclass
class Summary:
    """The executive summary: the recommendation in one paragraph, and one small table."""

    text: str
    table: Table | pd.DataFrame | None = None

    def __post_init__(self) -> None:
        self.table = Table.of(self.table)


@dataclass
class Report:
    title: str
    sections: list[Section]
    inputs: dict[str, Any] = field(default_factory=dict)
    assumptions: list[str] = field(default_factory=list)
    generated_at: str = field(default_factory=lambda: dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"))
    subtitle: str = ""
    customer: str = ""
    prepared_by: str = ""
    scenario_link: str = ""
    planner_version: str = PLANNER_VERSION
    summary: Summary | None = None
    #: (what, public URL or file) behind the figures.
    sources: list[tuple[str, str]] = field(default_factory=list)
    #: (what is measured, the recorded figure) from the planner's benchmarks.
    accuracy: list[tuple[str, str]] = field(default_factory=list)
    _svg: tuple[list[str], str | None] | None = field(default=None, repr=False, compare=False)

    def title_fields(self) -> list[tuple[str, str]]:
        """The title page's lines that have a value."""
        rows = [
            ("Customer", self.customer),
            ("Prepared by", self.prepared_by),
            ("Date", self.generated_at),
            ("Scenario link", self.scenario_link),
            ("Planner version", self.planner_version),
        ]
        return [(k, v) for k, v in rows if v]

    def chart_images(self) -> tuple[list[str | None], str | None]:
        """An SVG per section (None where it has no figure), drawn once per report, and why none were drawn."""
        if self._svg is None:
            self._svg = figures_to_svg([s.figure for s in self.sections if s.figure is not None])
        images, reason = self._svg
        drawn = iter(images)
        return [next(drawn, None) if s.figure is not None else None for s in self.sections], reason

    def to_json(self) -> dict[str, Any]:
        """Machine-readable, full precision."""
        return {
            "title": self.title,
            "subtitle": self.subtitle,
            "generated_at": self.generated_at,
            "customer": self.customer,
            "prepared_by": self.prepared_by,
            "scenario_link": self.scenario_link,
            "planner_version": self.planner_version,
            "summary": None
            if self.summary is None
            else {
                "text": self.summary.text,
                "table": None if self.summary.table is None else self.summary.table.records(),
            },
            "inputs": self.inputs,
            "sections": [
                {
                    "title": s.title,
                    "text": s.text,
                    "notes": s.notes,
                    "code": s.code,
                    "table": None if s.table is None else s.table.records(),
                    "column_kinds": None if s.table is None else {c: s.table.kind(c) for c in s.table.frame.columns},
                }
                for s in self.sections
            ],
            "assumptions": self.assumptions,
            "sources": [{"what": what, "where": where} for what, where in self.sources],
            "accuracy": [{"what": what, "figure": figure} for what, figure in self.accuracy],
        }

    def to_markdown(self) -> str:
        return report_markdown(self)

    def to_html(self, with_charts: bool = True) -> str:
        return report_html(self, with_charts=with_charts)

    def to_xlsx(self) -> bytes:
        return report_xlsx(self)

    def to_pdf(self, chromium: str | None = None) -> bytes:
        """Print the HTML report with headless Chromium (Debian's package; `make test` installs it)."""
        return print_pdf(self.to_html(), chromium)

    def export(self, fmt: str) -> bytes:
        fmt = fmt.lower()
        if fmt == "json":
            return json.dumps(self.to_json(), indent=2, default=str).encode()
        if fmt == "html":
            return self.to_html().encode()
        if fmt == "md":
            return self.to_markdown().encode()
        if fmt == "xlsx":
            return self.to_xlsx()
        if fmt == "pdf":
            return self.to_pdf()
        raise PlannerError(
            f"format = {fmt!r} is not allowed: expected one of json, html, md, xlsx, pdf", field="format"
        )
