"""Sizing reports: one ``Report`` (sections of tables, figures and notes) exported as JSON, HTML,
XLSX, Markdown or PDF. Every export carries the date it was made and the assumptions behind it.

Documents escape what they quote (model names and other text can come from an uploaded config):
HTML escapes every string and carries a Content-Security-Policy that lets the page load nothing;
Markdown escapes HTML and Markdown control characters and folds newlines (:func:`md_escape`); an
XLSX cell never starts with ``=``, ``+``, ``-`` or ``@`` from text (:func:`xlsx_safe`, formula
injection); the PDF is printed by headless Chromium with every network request sent to a dead
proxy, so neither a remote URL nor (by the page's policy) a local file is ever loaded.

>>> import pandas as pd
>>> report = Report(title="Quote", sections=[Section(title="Fleet", table=pd.DataFrame([{"nodes": 2}]))])
>>> "Fleet" in report.to_markdown() and report.to_json()["sections"][0]["table"] == [{"nodes": 2}]
True
"""

from __future__ import annotations

import datetime as dt
import html
import io
import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.io as pio

from planner.errors import PlannerError

#: Inline scripts and styles (the charts) only: no file, URL, frame, font or fetch can load.
CONTENT_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; "
    "img-src data: blob:; font-src data:; connect-src 'none'; frame-src 'none'; object-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]#!|~])")
_MD_LINE_START = re.compile(r"^([0-9]*)([-+>=.)])")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def md_escape(value: Any) -> str:
    r"""Text safe inside Markdown: HTML escaped, Markdown control characters backslashed, one line.

    >>> md_escape("<script>x</script> [a](javascript:b)\n# h")
    '&lt;script&gt;x&lt;/script&gt; \\[a\\](javascript:b) \\# h'
    >>> md_escape("- item"), md_escape("1. item"), md_escape("Llama-3.1-8B (GiB)")
    ('\\- item', '1\\. item', 'Llama-3.1-8B (GiB)')
    """
    text = _MD_SPECIAL.sub(r"\\\1", html.escape(" ".join(str(value).split()), quote=False))
    return _MD_LINE_START.sub(r"\1\\\2", text)


def xlsx_safe(value: Any) -> Any:
    """A cell value that no spreadsheet reads as a formula: text starting with = + - @ gets a leading quote.

    >>> xlsx_safe("=HYPERLINK(1)"), xlsx_safe(-1.5), xlsx_safe("ok")
    ("'=HYPERLINK(1)", -1.5, 'ok')
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _safe_frame(table: pd.DataFrame, cell) -> pd.DataFrame:
    out = table.copy()
    out.columns = [cell(c) if isinstance(c, str) else c for c in out.columns]
    for column in out.columns:
        if not pd.api.types.is_numeric_dtype(out[column]):
            out[column] = out[column].map(lambda v: cell(v) if isinstance(v, str) else v)
    return out


_SHEET_FORBIDDEN = re.compile(r"[\[\]:*?/\\']")


@dataclass
class Section:
    title: str
    text: str = ""
    table: pd.DataFrame | None = None
    figure: Any = None  # a plotly Figure
    notes: list[str] = field(default_factory=list)


@dataclass
class Report:
    title: str
    sections: list[Section]
    inputs: dict[str, Any] = field(default_factory=dict)
    assumptions: list[str] = field(default_factory=list)
    generated_at: str = field(default_factory=lambda: dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"))

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "generated_at": self.generated_at,
            "inputs": self.inputs,
            "assumptions": self.assumptions,
            "sections": [
                {
                    "title": s.title,
                    "text": s.text,
                    "notes": s.notes,
                    "table": None if s.table is None else json.loads(s.table.to_json(orient="records")),
                }
                for s in self.sections
            ],
        }

    def to_markdown(self) -> str:
        """Markdown in which every quoted string is escaped (:func:`md_escape`)."""
        e = md_escape
        lines = [f"# {e(self.title)}", "", f"Generated {e(self.generated_at)}.", ""]
        if self.inputs:
            lines += ["## Inputs", "", *(f"- **{e(k)}**: {e(v)}" for k, v in self.inputs.items()), ""]
        for s in self.sections:
            lines += [f"## {e(s.title)}", ""]
            if s.text:
                lines += [e(s.text), ""]
            if s.table is not None:
                table = _safe_frame(s.table, md_escape)
                lines += [table.to_markdown(index=False) if _has_tabulate() else table.to_csv(index=False), ""]
            lines += [f"- {e(n)}" for n in s.notes]
        if self.assumptions:
            lines += ["", "## Assumptions", "", *(f"- {e(a)}" for a in self.assumptions)]
        return "\n".join(lines) + "\n"

    def to_html(self) -> str:
        parts = [f"<h1>{html.escape(self.title)}</h1>", f"<p class='date'>Generated {self.generated_at}.</p>"]
        if self.inputs:
            rows = "".join(
                f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>" for k, v in self.inputs.items()
            )
            parts.append(f"<h2>Inputs</h2><table>{rows}</table>")
        first_figure = True
        for s in self.sections:
            parts.append(f"<h2>{html.escape(s.title)}</h2>")
            if s.text:
                parts.append(f"<p>{html.escape(s.text)}</p>")
            if s.table is not None:
                parts.append(s.table.to_html(index=False, float_format=lambda v: f"{v:,.3g}", border=0))
            if s.figure is not None:
                parts.append(pio.to_html(s.figure, full_html=False, include_plotlyjs=first_figure))
                first_figure = False
            parts += [f"<p class='note'>{html.escape(n)}</p>" for n in s.notes]
        if self.assumptions:
            items = "".join(f"<li>{html.escape(a)}</li>" for a in self.assumptions)
            parts.append(f"<h2>Assumptions</h2><ul>{items}</ul>")
        style = (
            "body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#1a202c}"
            "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #cbd5e0;padding:4px 8px;"
            "text-align:right}th{background:#edf2f7}.note,.date{color:#4a5568;font-size:0.9em}"
        )
        return (
            f"<!doctype html><html><head><meta charset='utf-8'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"{CONTENT_POLICY}\">"
            f"<title>{html.escape(self.title)}</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>"
        )

    def to_xlsx(self) -> bytes:
        buffer = io.BytesIO()
        with pd.ExcelWriter(buffer, engine="openpyxl") as writer:
            meta = [("title", self.title), ("generated", self.generated_at), *self.inputs.items()]
            meta += [("assumption", a) for a in self.assumptions]
            meta = [(xlsx_safe(str(k)), xlsx_safe(v if isinstance(v, int | float) else str(v))) for k, v in meta]
            pd.DataFrame(meta, columns=["field", "value"]).to_excel(writer, sheet_name="summary", index=False)
            for i, s in enumerate(self.sections):
                if s.table is not None:
                    name = _SHEET_FORBIDDEN.sub("-", f"{i + 1} {s.title}")[:31]
                    _safe_frame(s.table, xlsx_safe).to_excel(writer, sheet_name=name, index=False)
        return buffer.getvalue()

    def to_pdf(self, chromium: str | None = None) -> bytes:
        """Print the HTML report with headless Chromium (Debian's package; `make test` installs it)."""
        browser = chromium or shutil.which("chromium") or shutil.which("chromium-browser")
        if not browser:
            raise PlannerError(
                "PDF export needs Chromium (apt-get install chromium); export HTML and print it instead", field="format"
            )
        with tempfile.TemporaryDirectory() as folder:
            source, target = Path(folder) / "report.html", Path(folder) / "report.pdf"
            source.write_text(self.to_html(), encoding="utf-8")
            cmd = [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--disable-plugins",
                "--disable-remote-fonts",
                # every request (remote or loopback) goes to a closed port; no name resolves
                "--proxy-server=http://127.0.0.1:9",
                "--proxy-bypass-list=<-loopback>",
                "--host-resolver-rules=MAP * ~NOTFOUND",
                f"--user-data-dir={folder}/profile",
                f"--print-to-pdf={target}",
                "--no-pdf-header-footer",
                source.as_uri(),
            ]
            proc = subprocess.run(cmd, capture_output=True, timeout=120, check=False)
            if proc.returncode != 0 or not target.exists():
                raise PlannerError(f"Chromium could not print the report (exit {proc.returncode})", field="format")
            return target.read_bytes()

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


MIME = {
    "json": "application/json",
    "html": "text/html",
    "md": "text/markdown",
    "pdf": "application/pdf",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401, PLC0415 (optional: pandas' Markdown tables need it)
    except ImportError:
        return False
    return True
