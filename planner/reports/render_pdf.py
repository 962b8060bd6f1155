"""Print a report's HTML to PDF with headless Chromium (Debian's package), loading nothing else.

Every network request (remote or loopback) goes to a closed port and no name resolves; the page's
own policy (:data:`planner.reports.escaping.CONTENT_POLICY`) refuses files, so only the page prints.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from planner.errors import PlannerError


def chromium_available() -> bool:
    return bool(shutil.which("chromium") or shutil.which("chromium-browser"))


def print_pdf(page_html: str, chromium: str | None = None) -> bytes:
    browser = chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        raise PlannerError(
            "PDF export needs Chromium (apt-get install chromium); export HTML and print it instead", field="format"
        )
    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder) / "report.html", Path(folder) / "report.pdf"
        source.write_text(page_html, encoding="utf-8")
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
