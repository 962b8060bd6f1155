"""Plotly figures as static SVG images for documents, drawn by kaleido with the system's Chromium.

kaleido (>= 1) drives a Chromium through choreographer; the planner points it at the system browser
(``chromium`` on the PATH, or ``BROWSER_PATH`` when set) and never downloads one. MathJax is off, so
the drawing page loads nothing from the network. Without kaleido or Chromium a document prints the
reason in place of the chart (:func:`figures_to_svg` returns it), never a broken image.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from typing import Any

import plotly.graph_objects as go

#: Pixel size a chart is drawn at (the page scales it to its width).
CHART_WIDTH_PX = 900
DEFAULT_CHART_HEIGHT_PX = 420


def chromium_path() -> str | None:
    """The system's Chromium: ``BROWSER_PATH`` when set, else ``chromium`` or ``chromium-browser`` on the PATH."""
    return os.environ.get("BROWSER_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")


async def _draw(figures: list[Any], browser: str) -> list[bytes]:
    import kaleido  # noqa: PLC0415 (heavy and optional: only documents with charts need it)

    images = []
    async with kaleido.Kaleido(n=1, mathjax=False, path=browser) as k:
        for figure in figures:
            fig = go.Figure(figure)  # a copy: the page's figure keeps its screen layout
            fig.update_layout(font={"size": 15}, template="plotly_white")
            height = fig.layout.height or DEFAULT_CHART_HEIGHT_PX
            images.append(await k.calc_fig(fig, opts={"format": "svg", "width": CHART_WIDTH_PX, "height": height}))
    return images


def figures_to_svg(figures: list[Any]) -> tuple[list[str], str | None]:
    """SVG text of each figure, or ``([], reason)`` when they cannot be drawn here.

    Runs kaleido's event loop in its own thread, so it works under a running loop (Streamlit, notebooks).
    """
    if not figures:
        return [], None
    browser = chromium_path()
    if browser is None:
        return [], "charts are not drawn: static images need Chromium (apt-get install chromium)"
    try:
        import kaleido  # noqa: F401, PLC0415
    except ImportError:
        return [], "charts are not drawn: static images need kaleido (pip install kaleido)"
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["images"] = asyncio.run(_draw(figures, browser))
        except Exception as exc:  # any failure of the browser becomes the document's note
            box["error"] = exc

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(timeout=180)
    if "images" not in box:
        error = box.get("error")
        return (
            [],
            f"charts are not drawn: Chromium could not draw them ({type(error).__name__ if error else 'timeout'})",
        )
    return [img.decode("utf-8") if isinstance(img, bytes) else str(img) for img in box["images"]], None
