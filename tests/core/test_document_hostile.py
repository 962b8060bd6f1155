"""Documents escape what they quote: Markdown, XLSX formula injection, and a PDF printer that loads nothing."""

from __future__ import annotations

import http.server
import io
import re
import shutil
import threading
from typing import ClassVar

import openpyxl
import pandas as pd
import pytest

from planner.reports.document import Report, Section

HOSTILE = [
    "<script>alert(1)</script>",
    "x\n# injected heading",
    "[click](javascript:alert(1))",
    '=HYPERLINK("http://evil","x")',
    "=cmd|' /C calc'!A0",
    "+1+1",
    "-2+3",
    "@SUM(A1)",
    "<img src=x onerror=alert(1)>",
    "a | b | c",
]


def hostile_report() -> Report:
    table = pd.DataFrame([{"model": name, "nodes": i} for i, name in enumerate(HOSTILE)])
    return Report(
        title=HOSTILE[0],
        sections=[Section(title=name, text=name, table=table, notes=[name]) for name in HOSTILE[:3]],
        inputs={name[:20]: name for name in HOSTILE},
        assumptions=list(HOSTILE),
    )


def test_markdown_escapes_html_and_markdown_controls():
    text = hostile_report().to_markdown()
    assert "<script" not in text and "<img" not in text
    assert not re.search(r"(?<!\\)\]\(javascript:", text)  # brackets are escaped: no link
    assert not any(line.startswith("# injected") for line in text.splitlines())
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert all(line.startswith(("# ", "## ")) for line in headings)
    assert len([line for line in text.splitlines() if line.startswith("# ")]) == 1


def test_xlsx_cells_never_start_a_formula():
    book = openpyxl.load_workbook(io.BytesIO(hostile_report().to_xlsx()))
    for sheet in book.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                assert cell.data_type != "f", (sheet.title, cell.coordinate, cell.value)
                if isinstance(cell.value, str):
                    assert not cell.value.startswith(("=", "+", "-", "@")), (sheet.title, cell.value)
    names = [sheet.title for sheet in book.worksheets]
    assert len(names) == 5  # summary + three sections + assumptions, whatever their titles hold
    assert names[0] == "Summary" and names[-1] == "Assumptions"
    assert not any("\n" in name for name in names)


def test_html_carries_a_policy_that_loads_nothing():
    page = hostile_report().to_html()
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "<script>alert" not in page


class _Counter(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self):
        _Counter.hits.append(self.path)
        body = b"body{min-height:40000px}"
        self.send_response(200)
        self.send_header("Content-Type", "text/css")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def _pages(pdf: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page(?![s\w])", pdf))


@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("chromium") or shutil.which("chromium-browser")), reason="no Chromium")
def test_pdf_printing_loads_no_local_file_and_no_url(tmp_path, monkeypatch):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counter)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    tall = tmp_path / "tall.css"
    tall.write_text("body{min-height:40000px}")
    secret = tmp_path / "secret.html"
    secret.write_text(f"<link rel=stylesheet href='{url}/from-local-file.css'>")
    payload = (
        f"<link rel=stylesheet href='{tall.as_uri()}'>"
        f"<link rel=stylesheet href='{url}/remote.css'>"
        f"<img src='{url}/remote.png'><iframe src='{secret.as_uri()}'></iframe>"
        f"<script>fetch('{url}/fetch'); document.write('<img src={url}/written.png>')</script>"
    )
    plain = Report(title="plain", sections=[Section(title="s", text="t")])
    baseline = _pages(plain.to_pdf())
    original = Report.to_html
    monkeypatch.setattr(Report, "to_html", lambda self: original(self).replace("</body>", payload + "</body>"))
    try:
        pdf = plain.to_pdf()
    finally:
        server.shutdown()
        server.server_close()
    assert _Counter.hits == []  # no remote request, and the local file (which would request one) never loaded
    assert _pages(pdf) == baseline >= 1  # the local stylesheet (40,000 px tall) was not applied
