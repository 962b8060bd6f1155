"""Sizing reports: one ``Report`` (sections of tables, figures and notes) exported as JSON, HTML,
XLSX, Markdown or PDF. Every export carries the date it was made and the assumptions behind it.

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
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.io as pio

from planner.errors import PlannerError


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
        lines = [f"# {self.title}", "", f"Generated {self.generated_at}.", ""]
        if self.inputs:
            lines += ["## Inputs", "", *(f"- **{k}**: {v}" for k, v in self.inputs.items()), ""]
        for s in self.sections:
            lines += [f"## {s.title}", ""]
            if s.text:
                lines += [s.text, ""]
            if s.table is not None:
                lines += [s.table.to_markdown(index=False) if _has_tabulate() else s.table.to_csv(index=False), ""]
            lines += [f"- {n}" for n in s.notes]
        if self.assumptions:
            lines += ["", "## Assumptions", "", *(f"- {a}" for a in self.assumptions)]
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
            f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(self.title)}</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>"
        )

    def to_xlsx(self) -> bytes:
        buffer = io.BytesIO()
        with pd.ExcelWriter(buffer, engine="openpyxl") as writer:
            meta = [("title", self.title), ("generated", self.generated_at), *self.inputs.items()]
            meta += [("assumption", a) for a in self.assumptions]
            pd.DataFrame(meta, columns=["field", "value"]).to_excel(writer, sheet_name="summary", index=False)
            for i, s in enumerate(self.sections):
                if s.table is not None:
                    name = f"{i + 1} {s.title}"[:31].replace("/", "-")
                    s.table.to_excel(writer, sheet_name=name, index=False)
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
