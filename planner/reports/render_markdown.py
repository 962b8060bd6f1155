"""A report as Markdown: headings, pipe tables of formatted figures, notes, assumptions, sources, accuracy.

Tables are written here (no third-party table library): every cell is the formatted figure of
:mod:`planner.reports.table_format`, escaped by :func:`md_escape` (a ``|`` in a name stays in its cell).

>>> print(pipe_table(["option", "cost"], [["a", "$21,600 / month"]], right=[False, True]))
| option | cost |
| --- | ---: |
| a | $21,600 / month |
"""

from __future__ import annotations

import re

import pandas as pd

from planner.reports.escaping import md_escape
from planner.reports.links import safe_link
from planner.reports.table_format import Table


def pipe_table(headers: list[str], rows: list[list[str]], right: list[bool] | None = None) -> str:
    """A GitHub-flavoured pipe table; ``right`` aligns numeric columns to the right."""
    right = right or [False] * len(headers)
    lines = [
        "| " + " | ".join(md_escape(h, inline=True) for h in headers) + " |",
        "| " + " | ".join("---:" if r else "---" for r in right) + " |",
    ]
    lines += ["| " + " | ".join(md_escape(cell, inline=True) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def table_markdown(table: Table) -> list[str]:
    lines: list[str] = []
    for caption, part in table.parts():
        text = part.formatted()
        if caption:
            lines += [f"*{caption}*", ""]
        right = [part.is_numeric(c) for c in text.columns]
        lines += [pipe_table([str(c) for c in text.columns], text.values.tolist(), right), ""]
    return lines


def report_markdown(report) -> str:
    e = md_escape

    def i(value) -> str:
        return md_escape(value, inline=True)

    lines = [f"# {i(report.title)}", ""]
    if report.subtitle:
        lines += [e(report.subtitle), ""]
    lines += [
        f"- **{i(k)}**: <{v}>" if k == "Scenario link" and safe_link(v) else f"- **{i(k)}**: {i(v)}"
        for k, v in report.title_fields()
    ] + [""]
    if report.summary is not None:
        lines += ["## Summary", "", e(report.summary.text), ""]
        if report.summary.table is not None:
            lines += table_markdown(report.summary.table)
    if report.inputs:
        lines += ["## Inputs", ""]
        lines += table_markdown(inputs_table(report.inputs))
    for s in report.sections:
        lines += [f"## {i(s.title)}", ""]
        if s.text:
            lines += [e(s.text), ""]
        if s.table is not None:
            lines += table_markdown(s.table)
        if s.figure is not None:
            lines += ["(The chart is drawn in the PDF and HTML exports.)", ""]
        if s.notes:
            lines += [f"- {i(n)}" for n in s.notes] + [""]
        if s.code:
            fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", s.code)), default=0))
            lines += [fence, s.code, fence, ""]
    if report.assumptions:
        lines += ["## Assumptions", "", *(f"- {i(a)}" for a in report.assumptions), ""]
    if report.sources:
        # the planner's own sources stay links; every other text has its web addresses broken (md_escape)
        lines += [
            "## Sources",
            "",
            *(f"- {i(w)}: {md_escape(u, inline=True, links=True)}" for w, u in report.sources),
            "",
        ]
    if report.accuracy:
        lines += ["## Accuracy of the planner", "", *(f"- **{i(w)}**: {i(f)}" for w, f in report.accuracy), ""]
    return "\n".join(lines).rstrip() + "\n"


def inputs_table(inputs: dict) -> Table:
    """The report's inputs as a two-column table (values printed as given)."""
    return Table(pd.DataFrame([{"Input": str(k), "Value": v} for k, v in inputs.items()], columns=["Input", "Value"]))
