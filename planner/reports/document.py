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
from planner.reports.table_format import JSON_UNITS, Table

__all__ = ["CONTENT_POLICY", "FORMATS", "MIME", "Report", "Section", "Summary", "md_escape", "xlsx_safe"]

FORMATS = ("pdf", "html", "xlsx", "md", "json")
MIME = {
    "json": "application/json",
    "html": "text/html",
    "md": "text/markdown",
    "pdf": "application/pdf",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


def _table(records: Any, kinds: Any) -> Table | None:
    """A table from its JSON records (columns in their written order) and column kinds, each column named again as
    people read it (the JSON key's unit, "p99 TPOT (s)", taken off: the kind prints the unit)."""
    if not isinstance(records, list) or not records:
        return None
    frame = pd.DataFrame.from_records(records)
    kinds = {str(c): str(k) for c, k in (kinds or {}).items() if c in frame.columns}
    names = {}
    for key, kind in kinds.items():
        suffix = f" ({JSON_UNITS[kind]})" if kind in JSON_UNITS else ""
        names[key] = key.removesuffix(suffix) if suffix else key
    return Table(frame.rename(columns=names), {names[c]: k for c, k in kinds.items()})


def _figure(spec: Any) -> Any:
    """A plotly figure from the JSON :meth:`Report.to_json` kept (None when it kept none)."""
    if not isinstance(spec, dict):
        return None
    import plotly.io as pio  # noqa: PLC0415 (plotly loads only when a saved chart is redrawn)

    return pio.from_json(json.dumps(spec), skip_invalid=True)


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
            from planner.reports.static_charts import figures_to_svg  # noqa: PLC0415 (plotly, kaleido: on export)

            self._svg = figures_to_svg([s.figure for s in self.sections if s.figure is not None])
        images, reason = self._svg
        drawn = iter(images)
        return [next(drawn, None) if s.figure is not None else None for s in self.sections], reason

    def to_json(self, *, with_figures: bool = False) -> dict[str, Any]:
        """Machine-readable: table keys name their units, numbers rounded as people read them; ``with_figures`` adds
        each chart as plotly JSON (a saved document that :meth:`from_json` rebuilds whole, charts included)."""
        document = {
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
                    "column_kinds": None
                    if s.table is None
                    else {s.table.json_key(c): s.table.kind(c) for c in s.table.frame.columns},
                }
                for s in self.sections
            ],
            "assumptions": self.assumptions,
            "sources": [{"what": what, "where": where} for what, where in self.sources],
            "accuracy": [{"what": what, "figure": figure} for what, figure in self.accuracy],
        }
        if with_figures:
            for section, out in zip(self.sections, document["sections"], strict=True):
                if section.figure is not None:
                    out["figure_plotly"] = json.loads(section.figure.to_json())
        return document

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Report:
        """The report :meth:`to_json` wrote (tables with their column kinds; charts where it kept them).

        >>> import pandas as pd
        >>> table = Table(pd.DataFrame([{"node": "a", "cost": 21600.0}]), kinds={"cost": "usd_month"})
        >>> again = Report.from_json(Report(title="Q", customer="Acme", sections=[Section("F", table=table)]).to_json())
        >>> again.customer, again.sections[0].table.formatted().iloc[0].tolist()
        ('Acme', ['a', '$21,600 / month'])
        """
        if not isinstance(data, dict) or not isinstance(data.get("title"), str):
            raise PlannerError("the saved document has no title: it is not a report", field="document")
        summary = data.get("summary")
        return cls(
            title=data["title"],
            subtitle=str(data.get("subtitle") or ""),
            generated_at=str(data.get("generated_at") or ""),
            customer=str(data.get("customer") or ""),
            prepared_by=str(data.get("prepared_by") or ""),
            scenario_link=str(data.get("scenario_link") or ""),
            planner_version=str(data.get("planner_version") or ""),
            summary=None
            if not isinstance(summary, dict)
            else Summary(text=str(summary.get("text") or ""), table=_table(summary.get("table"), None)),
            inputs=dict(data.get("inputs") or {}),
            sections=[
                Section(
                    title=str(s.get("title") or ""),
                    text=str(s.get("text") or ""),
                    notes=[str(n) for n in s.get("notes") or []],
                    table=_table(s.get("table"), s.get("column_kinds")),
                    figure=_figure(s.get("figure_plotly")),
                )
                for s in data.get("sections") or []
                if isinstance(s, dict)
            ],
            assumptions=[str(a) for a in data.get("assumptions") or []],
            sources=[(str(s.get("what", "")), str(s.get("where", ""))) for s in data.get("sources") or []],
            accuracy=[(str(a.get("what", "")), str(a.get("figure", ""))) for a in data.get("accuracy") or []],
        )

    def to_markdown(self) -> str:
        return report_markdown(self)

    def to_html(self, with_charts: bool = True) -> str:
        return report_html(self, with_charts=with_charts)

    def to_xlsx(self) -> bytes:
        from planner.reports.render_xlsx import report_xlsx  # noqa: PLC0415 (openpyxl: only on export)

        return report_xlsx(self)

    def to_pdf(self, chromium: str | None = None) -> bytes:
        """Print the HTML report with headless Chromium (Debian's package; `make test` installs it)."""
        from planner.reports.render_pdf import print_pdf  # noqa: PLC0415 (only on export)

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
