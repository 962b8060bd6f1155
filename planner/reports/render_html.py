"""A report as one self-contained HTML page (also what the PDF prints): no script, charts as data: images.

The page's Content-Security-Policy lets it load nothing but its own inline styles and ``data:``
images; every string is escaped. Printed, it is A4 portrait with 14 mm margins: the title block
with the summary on the first page, then the sections, the assumptions, sources and accuracy.
Tables have a fixed layout at the page's width with wrapped headers, and a table wider than
:data:`MAX_PAGE_COLUMNS` columns is split into its decisive columns and a details table, so nothing runs off the page.
"""

from __future__ import annotations

import base64
import html

from planner.reports.escaping import CONTENT_POLICY
from planner.reports.render_markdown import inputs_table
from planner.reports.table_format import Table

STYLE = """
@page { size: A4 portrait; margin: 14mm; }
* { box-sizing: border-box; }
body { font-family: "DejaVu Sans", "Liberation Sans", Arial, sans-serif; color: #1a202c; font-size: 10pt;
       line-height: 1.4; max-width: 1000px; margin: 2em auto; padding: 0 1em; }
@media print { body { max-width: none; margin: 0; padding: 0; } }
h1 { font-size: 22pt; margin: 0 0 0.3em; } h2 { font-size: 14pt; margin: 1.4em 0 0.5em; break-after: avoid; }
.title-page { border-bottom: 2px solid #2b6cb0; padding-bottom: 4mm; margin-bottom: 4mm; }
.first-section { break-before: page; } .subtitle { font-size: 13pt; color: #2d3748; }
.meta { margin-top: 4mm; width: auto; }
.meta th { text-align: left; background: none; border: none; padding-right: 2em; }
.meta td { text-align: left; border: none; overflow-wrap: anywhere; }
.summary { font-size: 11pt; border-left: 4px solid #2b6cb0; padding: 0.4em 0.9em; background: #f7fafc; }
table { border-collapse: collapse; margin: 0.6em 0 1em; width: 100%; table-layout: auto; }
td, th { border: 1px solid #cbd5e0; padding: 3px 6px; vertical-align: top; white-space: normal; }
td { overflow-wrap: anywhere; }
th { background: #edf2f7; font-weight: 600; text-align: left; overflow-wrap: normal; word-break: normal;
     hyphens: manual; }
td.num, th.num { text-align: right; } tr { break-inside: avoid; }
.caption { font-style: italic; color: #4a5568; margin: 0.4em 0 0; }
figure { margin: 0.5em 0 1em; break-inside: avoid; } figure img { width: 100%; height: auto; display: block; }
.note, .date { color: #4a5568; font-size: 9pt; } ul { padding-left: 1.3em; }
"""


#: Preformatted sections (launch commands, manifests): monospace, wrapped inside the page width.
CODE_STYLE = "pre.code{font-size:8pt;white-space:pre-wrap;word-break:break-all;background:#f6f8fa;padding:6px}"


def column_widths(text) -> list[float]:
    """Each column's share of the page width (percent), from its longest cell and its header's longest word."""
    weights = []
    for column in text.columns:
        cells = [len(v) for v in text[column].tolist()] or [0]
        header = max((len(word) for word in str(column).split()), default=0)
        weights.append(min(max(*cells, header + 2, 11), 32))
    total = sum(weights)
    return [100 * w / total for w in weights]


def table_html(table: Table) -> str:
    parts = []
    for caption, part in table.parts():
        text = part.formatted()
        numeric = [part.is_numeric(c) for c in text.columns]
        cols = "".join(f"<col style='width:{w:.1f}%'>" for w in column_widths(text))
        head = "".join(
            f"<th{' class=num' if n else ''}>{html.escape(str(c))}</th>"
            for c, n in zip(text.columns, numeric, strict=True)
        )
        rows = "".join(
            "<tr>"
            + "".join(
                f"<td{' class=num' if n else ''}>{html.escape(v)}</td>" for v, n in zip(row, numeric, strict=True)
            )
            + "</tr>"
            for row in text.values.tolist()
        )
        if caption:
            parts.append(f"<p class='caption'>{html.escape(caption)}</p>")
        parts.append(f"<table><colgroup>{cols}</colgroup><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
    return "".join(parts)


def _link(url: str) -> str:
    text = html.escape(url)
    return f"<a href='{text}'>{text}</a>" if url.startswith(("https://", "http://")) else text


def report_html(report, with_charts: bool = True) -> str:
    e = html.escape
    meta = "".join(
        f"<tr><th>{e(k)}</th><td>{_link(v) if k == 'Scenario link' else e(v)}</td></tr>"
        for k, v in report.title_fields()
    )
    parts = [
        "<section class='title-page'>",
        f"<h1>{e(report.title)}</h1>",
        f"<p class='subtitle'>{e(report.subtitle)}</p>" if report.subtitle else "",
        f"<table class='meta'>{meta}</table></section>",
    ]
    if report.summary is not None:
        parts.append(f"<h2>Summary</h2><p class='summary'>{e(report.summary.text)}</p>")
        if report.summary.table is not None:
            parts.append(table_html(report.summary.table))
    images, reason = report.chart_images() if with_charts else ([None] * len(report.sections), None)
    for k, (s, svg) in enumerate(zip(report.sections, images, strict=True)):
        first = " class='first-section'" if k == 0 and report.summary is not None else ""
        parts.append(f"<h2{first}>{e(s.title)}</h2>")
        if s.text:
            parts.append(f"<p>{e(s.text)}</p>")
        if s.table is not None:
            parts.append(table_html(s.table))
        if svg is not None:
            data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
            parts.append(f"<figure><img alt='{e(s.title)}' src='data:image/svg+xml;base64,{data}'></figure>")
        elif s.figure is not None and reason:
            parts.append(f"<p class='note'>{e(reason[:1].upper() + reason[1:])}.</p>")
        parts += [f"<p class='note'>{e(n)}</p>" for n in s.notes]
        if s.code:
            parts.append(f"<pre class='code'>{e(s.code)}</pre>")
    if report.inputs:
        parts.append("<h2>Inputs</h2>" + table_html(inputs_table(report.inputs)))
    if report.assumptions:
        parts.append("<h2>Assumptions</h2><ul>" + "".join(f"<li>{e(a)}</li>" for a in report.assumptions) + "</ul>")
    if report.sources:
        items = "".join(f"<li>{e(what)}: {_link(where)}</li>" for what, where in report.sources)
        parts.append(f"<h2>Sources</h2><ul>{items}</ul>")
    if report.accuracy:
        items = "".join(f"<li><b>{e(what)}</b>: {e(figure)}</li>" for what, figure in report.accuracy)
        parts.append(f"<h2>Accuracy of the planner</h2><ul>{items}</ul>")
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{CONTENT_POLICY}\">"
        f"<title>{e(report.title)}</title><style>{STYLE}{CODE_STYLE}</style></head><body>{''.join(parts)}</body></html>"
    )
