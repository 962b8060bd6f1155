"""Plotly figures as static SVG images for documents, drawn by kaleido with the system's Chromium.

kaleido (>= 1) drives a Chromium through choreographer; the planner points it at the system browser
(``chromium`` on the PATH, or ``BROWSER_PATH`` when set) and never downloads one. MathJax is off, so
the drawing page loads nothing from the network. Without kaleido or Chromium a document prints the
reason in place of the chart (:func:`figures_to_svg` returns it), never a broken image.

Starting Chromium costs most of a document's build, so one kaleido browser is kept open per process on its
own event-loop thread (:class:`ChartBrowser`; closed at exit, restarted after a failure, and a one-off
browser is tried before giving up), and each drawn figure is remembered by its JSON and size
(:data:`SVG_CACHE_ENTRIES`), so the PDF and the HTML of one quote draw its charts once.
:func:`warm_up_chart_browser` starts the browser in the background (a page does, before any click).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import shutil
import threading
from collections import OrderedDict
from typing import Any

import plotly.graph_objects as go

#: Pixel size a chart is drawn at (the page scales it to its width).
CHART_WIDTH_PX = 900
DEFAULT_CHART_HEIGHT_PX = 420
#: Drawn figures remembered (SVG text, keyed by the figure's JSON and size).
SVG_CACHE_ENTRIES = 64
#: Seconds to start the browser, and to draw one document's figures.
START_TIMEOUT_S = 60
DRAW_TIMEOUT_S = 120


def chromium_path() -> str | None:
    """The system's Chromium: ``BROWSER_PATH`` when set, else ``chromium`` or ``chromium-browser`` on the PATH."""
    return os.environ.get("BROWSER_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")


def _styled(figure: Any) -> go.Figure:
    fig = go.Figure(figure)  # a copy: the page's figure keeps its screen layout
    fig.update_layout(font={"size": 15}, template="plotly_white")
    return fig


def _opts(fig: go.Figure) -> dict[str, Any]:
    return {"format": "svg", "width": CHART_WIDTH_PX, "height": fig.layout.height or DEFAULT_CHART_HEIGHT_PX}


async def _draw_with(k: Any, figures: list[go.Figure]) -> list[bytes]:
    return [await k.calc_fig(fig, opts=_opts(fig)) for fig in figures]


async def _draw(figures: list[go.Figure], browser: str) -> list[bytes]:
    """Draw with a one-off browser (started and closed here)."""
    import kaleido  # noqa: PLC0415 (heavy and optional: only documents with charts need it)

    async with kaleido.Kaleido(n=1, mathjax=False, path=browser) as k:
        return await _draw_with(k, figures)


class ChartBrowser:
    """One kaleido Chromium kept open on its own event loop, drawing one document's figures at a time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.kaleido: Any = None
        self.path: str | None = None
        atexit.register(self.close)

    def _start(self, browser: str) -> None:
        import kaleido  # noqa: PLC0415

        loop = asyncio.new_event_loop()

        def serve() -> None:
            loop.run_forever()
            loop.close()

        threading.Thread(target=serve, daemon=True, name="chart-browser").start()
        self.loop, self.path = loop, browser

        async def open_browser() -> Any:
            k = kaleido.Kaleido(n=1, mathjax=False, path=browser)
            await k.__aenter__()
            return k

        self.kaleido = asyncio.run_coroutine_threadsafe(open_browser(), loop).result(timeout=START_TIMEOUT_S)

    def start(self, browser: str) -> None:
        with self.lock:
            if self.kaleido is None or self.path != browser:
                self._close()
                try:
                    self._start(browser)
                except BaseException:
                    self._close()
                    raise

    def draw(self, figures: list[go.Figure], browser: str) -> list[bytes]:
        self.start(browser)
        with self.lock:
            if self.loop is None or self.kaleido is None:
                raise RuntimeError("the chart browser closed")
            future = asyncio.run_coroutine_threadsafe(_draw_with(self.kaleido, figures), self.loop)
            try:
                return future.result(timeout=DRAW_TIMEOUT_S)
            except BaseException:
                future.cancel()
                self._close()
                raise

    def _close(self) -> None:
        loop, k = self.loop, self.kaleido
        self.loop = self.kaleido = self.path = None
        if loop is None:
            return
        if k is not None:
            with contextlib.suppress(Exception):  # a browser that is already gone needs no closing
                asyncio.run_coroutine_threadsafe(k.__aexit__(None, None, None), loop).result(timeout=20)
        loop.call_soon_threadsafe(loop.stop)

    def close(self) -> None:
        with self.lock:
            self._close()


_BROWSER = ChartBrowser()
_SVGS: OrderedDict[str, str] = OrderedDict()
_SVGS_LOCK = threading.Lock()


def warm_up_chart_browser() -> None:
    """Start the shared chart browser in the background (no-op without kaleido or Chromium, or when running)."""
    browser = chromium_path()
    if browser is None or _BROWSER.kaleido is not None:
        return

    def start() -> None:
        with contextlib.suppress(Exception):  # no kaleido, or a failure: the first export says why
            _BROWSER.start(browser)

    threading.Thread(target=start, daemon=True, name="chart-browser-start").start()


def _draw_anyhow(figures: list[go.Figure], browser: str) -> list[bytes]:
    """The shared browser, or a one-off one when it fails (each in a thread of its own loop)."""
    try:
        return _BROWSER.draw(figures, browser)
    except Exception:
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["images"] = asyncio.run(_draw(figures, browser))
            except Exception as exc:  # any failure of the browser becomes the document's note
                box["error"] = exc

        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        thread.join(timeout=DRAW_TIMEOUT_S)
        if "images" not in box:
            raise box.get("error") or TimeoutError("Chromium did not draw the charts in time") from None
        return box["images"]


def _figure_key(figure: Any) -> str:
    """A figure's identity for the SVG cache: its JSON (every trace and layout field) and the print size."""
    text = figure.to_json() if hasattr(figure, "to_json") else json.dumps(figure, sort_keys=True, default=str)
    return f"{CHART_WIDTH_PX}x{DEFAULT_CHART_HEIGHT_PX}:{text}"


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
    # remembered by the figure as given (styling a copy for print costs more than the lookup): a document exported
    # again, in another format or by another visitor, draws nothing and styles nothing
    keys = [_figure_key(figure) for figure in figures]
    with _SVGS_LOCK:
        known = {key: _SVGS[key] for key in keys if key in _SVGS}
    missing = [_styled(fig) for fig, key in zip(figures, keys, strict=True) if key not in known]
    if missing:
        try:
            drawn = _draw_anyhow(missing, browser)
        except Exception as error:
            return [], f"charts are not drawn: Chromium could not draw them ({type(error).__name__})"
        texts = iter(img.decode("utf-8") if isinstance(img, bytes) else str(img) for img in drawn)
        for key in keys:
            if key not in known:
                known[key] = next(texts)
        with _SVGS_LOCK:
            for key in keys:
                _SVGS[key] = known[key]
                _SVGS.move_to_end(key)
            while len(_SVGS) > SVG_CACHE_ENTRIES:
                _SVGS.popitem(last=False)
    return [known[key] for key in keys], None
