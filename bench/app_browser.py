"""`make bench-app`, through a real server and browser: each page's first render after server start, a widget
change, Fleet with six node types and the PDF build (prints, never asserts).

For every page a fresh ``python -m ui._server`` (``streamlit run app.py`` as ``make run`` starts it) listens on
127.0.0.1 (a free port, stopped afterwards) and headless Chromium (Debian's, through Playwright) opens the page's
own link. Two clocks per action:

- server: the seconds app.py's script runs took (``PLANNER_RENDER_LOG``, ui/_timing.py), the longest of the
  runs the action caused (each holds the page while it runs; long work such as Fleet's plan is computed in the
  background while the run draws a progress bar and waits for it, ui/_background.py);
- browser: from the request (navigation, key press, click) until the page is settled: the run is logged,
  Streamlit's "running" indicator is gone and the page's heading is on screen (for Fleet: the plan is drawn,
  its "Export the quote" heading is on screen). For Fleet also until its first node type's own plan was on
  screen under the progress bar (while the others are still sized), where it was shown at all.

Fleet is also opened from the navigation after a fresh server has drawn its first page and planned the
Fleet default in the background (ui/_warm_up.py), as a visitor who starts on Sizing would.

``python -m bench.app_browser --pages fleet,sizing`` times only those pages. On a machine of two or more cores the
server runs on the first core and the browser on the others (``SERVER_CPUS``), as a server and its visitors' browsers
run on different machines: otherwise the browser drawing the charts of the last answer takes CPU time from the
server's next one. The machine's other load is not controlled: on a shared machine every figure is an upper bound.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parents[1]
SERVER_LIFETIME_S = 900
SETTLE_TIMEOUT_S = 600.0
#: The cores the server runs on; the browser (and this process) take the rest, where the machine has more.
SERVER_CPUS = {0}
#: The command prefix that starts a server on its cores (set by :func:`_split_cpus`; empty: anywhere).
ON_SERVER_CPUS: list[str] = []


def _split_cpus() -> bool:
    """Keep this process and the browser it launches off the server's cores, and start servers on them (util-linux
    ``taskset``); False where there is one core or no ``taskset``."""
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    taskset = shutil.which("taskset")
    if len(cores) < 2 or not cores > SERVER_CPUS or not taskset:
        return False
    os.sched_setaffinity(0, cores - SERVER_CPUS)
    ON_SERVER_CPUS[:] = [taskset, "-c", ",".join(map(str, sorted(SERVER_CPUS)))]
    return True


#: Six node types for the Fleet figure (the default four plus B200 and A100).
SIX_NODES = (
    "8x-h100-sxm-80gb",
    "8x-h200-sxm-141gb",
    "8x-mi300x-192gb",
    "4x-l40s-48gb",
    "8x-b200-180gb",
    "8x-a100-sxm-80gb",
)


#: The Fleet heading drawn once the plan (computed in the background under a progress bar) is in.
FLEET_READY = "Export the quote"
#: What the Fleet page shows under its progress bar once its first node type is sized (ui/fleet.py).
FLEET_PARTIAL = "Sized so far:"


@dataclass(frozen=True)
class PageCase:
    """A page: its link, its heading, and one widget change (a labelled input and the value typed into it)."""

    path: str
    heading: str
    widget: str
    value: str
    sidebar: bool = False
    #: A heading drawn only once the page's result is in (work done in the background); "" for none.
    ready: str = ""


CASES = {
    "sizing": PageCase("sizing", "Sizing", "Max model length (tokens)", "16384", sidebar=True),
    "catalog": PageCase("catalog", "Catalog", "Search models", "qwen"),
    "performance": PageCase("performance", "Performance", "Batch size (sequences)", "16"),
    "draft_selection": PageCase("draft-selection", "Draft Selection", "Batch size to rank at", "16"),
    "fleet": PageCase("fleet", "Fleet & Quote", "TPOT objective (ms, 0 = none)", "40", ready="Export the quote"),
    "explore": PageCase("explore", "Explore", "TPOT objective (ms, 0 = none)", "40", ready="Frontier"),
    "validation": PageCase("validation", "Validation", "Draft length K (draft tokens per step)", "4", sidebar=True),
    "saved": PageCase("saved", "Saved", "Draft length K (draft tokens per step)", "4", sidebar=True),
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """``python -m ui._server`` on 127.0.0.1:port with render timing on; stopped by :meth:`stop`."""

    def __init__(self, store: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = Path(tempfile.mkstemp(prefix="bench-render-", suffix=".jsonl")[1])
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "PLANNER_RENDER_LOG": str(self.log),
            "PLANNER_STORE_PATH": str(store),
        }
        server = ["--server.port", str(self.port), "--server.address", "127.0.0.1", "--server.headless", "true"]
        self.proc = subprocess.Popen(
            [*ON_SERVER_CPUS, "timeout", str(SERVER_LIFETIME_S), sys.executable, "-m", "ui._server", *server],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.started_s = self._wait_healthy()

    def _wait_healthy(self, timeout_s: float = 180) -> float:
        start = time.perf_counter()
        while time.perf_counter() - start < timeout_s:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as response:
                    if response.read().decode().strip() == "ok":
                        return time.perf_counter() - start
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("the server did not become healthy")

    def entries(self, kind: str, since: float) -> list[dict]:
        lines = self.log.read_text(encoding="utf-8").splitlines() if self.log.exists() else []
        return [e for e in map(json.loads, lines) if e["kind"] == kind and e["start"] >= since]

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.log.unlink(missing_ok=True)


def _settle(
    page, server: Server, since: float, heading: str, runs: int = 1, ready: str = ""
) -> tuple[float, float, float, float | None]:
    """Wait until ``runs`` script runs started after ``since`` are logged and the page is idle (and, with
    ``ready``, that heading is on screen: a result computed in the background has been drawn).

    Returns (server seconds: the longest of the logged runs, each of which holds the page while it runs;
    browser seconds since ``since``; that run's CPU seconds; browser seconds until the Fleet page first showed a
    node type's own plan under its progress bar, None where it never did: the plan was in at once, or another page).
    """
    deadline = time.time() + SETTLE_TIMEOUT_S
    partial_s = None
    while time.time() < deadline:
        if partial_s is None and ready == FLEET_READY and page.get_by_text(FLEET_PARTIAL).count():
            partial_s = time.time() - since
        done = server.entries("run", since)
        if len(done) >= runs:
            status = page.locator("[data-testid=stStatusWidget]")
            shown = page.get_by_role("heading", name=heading, exact=True).count()
            if status.count() == 0 and shown and (not ready or page.get_by_role("heading", name=ready).count()):
                elapsed = time.time() - since
                time.sleep(0.3)  # a rerun queued right behind the first shows up here
                logged = server.entries("run", since)
                slowest = max(logged, key=lambda e: e["seconds"])
                return slowest["seconds"], elapsed, slowest.get("cpu_seconds", float("nan")), partial_s
        time.sleep(0.02)
    raise TimeoutError(f"{heading}: not settled in {SETTLE_TIMEOUT_S:.0f} s")


def _change(page, server: Server, case: PageCase) -> tuple[float, float, float, float | None]:
    scope = page.locator("[data-testid=stSidebar]") if case.sidebar else page.locator("[data-testid=stMain]")
    box = scope.get_by_label(case.widget, exact=True).first
    box.fill(case.value)
    since = time.time()
    box.press("Enter")
    return _settle(page, server, since, case.heading, ready=case.ready)


def _add_node(page, server: Server, node: str) -> tuple[float, float, float, float | None]:
    page.get_by_label("Node types to compare").first.click()
    since = time.time()
    page.get_by_role("option", name=node, exact=True).click()
    page.keyboard.press("Escape")
    return _settle(page, server, since, "Fleet & Quote", ready=FLEET_READY)


def _pdf(page, server: Server) -> tuple[float, float, float]:
    page.get_by_role("heading", name="Export the quote").scroll_into_view_if_needed()
    button = page.locator("[data-testid=stDownloadButton]").get_by_role("button", name="PDF", exact=True).first
    since = time.time()
    with page.expect_download(timeout=SETTLE_TIMEOUT_S * 1000) as info:
        button.click()
    info.value.path()
    elapsed = time.time() - since
    exports = server.entries("export", since)
    if not exports:
        return float("nan"), elapsed, float("nan")
    return exports[-1]["seconds"], elapsed, exports[-1].get("cpu_seconds", float("nan"))


def _open(browser, server: Server, link: str, heading: str, ready: str = ""):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(SETTLE_TIMEOUT_S * 1000)
    since = time.time()
    page.goto(server.url + link)
    times = _settle(page, server, since, heading, ready=ready)
    dialog = page.locator("[role=dialog]")
    if dialog.count():  # e.g. Streamlit's "Page not found" on a fresh server's deep link: noted, then closed
        print(f"  note: {link.partition('?')[0]} opened with a dialog: {dialog.first.inner_text().splitlines()[0]}")
        page.keyboard.press("Escape")
        dialog.first.wait_for(state="detached")
    return context, page, times


def _seeded_store() -> Path:
    from bench.app_timing import _seeded_store as seeded  # noqa: PLC0415 (the AppTest bench's seeded store)

    return seeded()


def _row(
    label: str, server_s: float, browser_s: float | None = None, cpu_s: float | None = None, partial_s=None
) -> str:
    """One action's figures; under it, for the Fleet page, when its first node type's plan was on screen."""
    shown = f"{browser_s * 1e3:10.0f}" if browser_s is not None else f"{'':>10}"
    cpu = f"{cpu_s * 1e3:10.0f}" if cpu_s is not None else f"{'':>10}"
    row = f"{label:<44} {server_s * 1e3:10.0f} {shown} {cpu}"
    if partial_s is not None:
        row += f"\n{'  first node type sized, on screen':<44} {'':>10} {partial_s * 1e3:10.0f}"
    return row


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.app_browser")
    parser.add_argument("--pages", default=",".join(CASES), help="comma-separated pages to time")
    args = parser.parse_args(argv)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("browser timing skipped: Debian chromium is not installed (make chromium)")
        return 0
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 (a dev dependency, for this bench only)

    from planner.scenario import Scenario  # noqa: PLC0415

    store = _seeded_store()
    if _split_cpus():
        print(f"The server on CPU {sorted(SERVER_CPUS)}, the browser on CPU {sorted(os.sched_getaffinity(0))}")
    print("Real server and headless Chromium, ms (server: longest script run; browser: request to result on screen)")
    print("and the CPU time of the thread of that longest run (ui/_timing.py)")
    print(f"{'':<44} {'server':>10} {'browser':>10} {'server cpu':>10}")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--headless", "--disable-gpu"])
        try:
            for name in [p for p in args.pages.split(",") if p]:
                case = CASES[name]
                server = Server(store)
                try:
                    context, page, first = _open(browser, server, f"/{case.path}", case.heading, case.ready)
                    print(_row(f"{name}: first render after server start", *first), flush=True)
                    print(_row(f"{name}: widget change ({case.widget[:24]})", *_change(page, server, case)), flush=True)
                    if name == "fleet":
                        print(_row("fleet: node type added (8x-b200-180gb)", *_add_node(page, server, "8x-b200-180gb")))
                        print(_row("fleet: PDF built on click", *_pdf(page, server)), flush=True)
                    context.close()
                except TimeoutError as exc:  # a busy machine: the rest of the bench still runs
                    print(f"  {name}: {exc}", flush=True)
                finally:
                    server.stop()
            if "fleet" in args.pages:
                server = Server(store)
                try:
                    context, page, first = _open(browser, server, "/", "Sizing")
                    since = time.time()
                    while not server.entries("warm-up", 0) and time.time() - since < SETTLE_TIMEOUT_S:
                        time.sleep(0.1)
                    warm = server.entries("warm-up", 0)
                    if warm:
                        # wall time includes its waits for quiet moments; its thread's CPU time is the work
                        print(_row("fleet default, planned in the background", warm[0]["seconds"], None,
                                   warm[0].get("cpu_seconds")), flush=True)  # fmt: skip
                    since = time.time()
                    page.get_by_role("link", name="Fleet & Quote").first.click()
                    opened = _settle(page, server, since, "Fleet & Quote", ready=FLEET_READY)
                    print(_row("fleet: opened after the first page", *opened))
                    context.close()
                finally:
                    server.stop()
                server = Server(store)
                try:
                    query = urlencode(Scenario(fleet_nodes=SIX_NODES).to_query())
                    context, page, first = _open(browser, server, f"/fleet?{query}", "Fleet & Quote", FLEET_READY)
                    print(_row("fleet, six node types: first render", *first), flush=True)
                    print(_row("fleet, six node types: objective change", *_change(page, server, CASES["fleet"])))
                    context.close()
                finally:
                    server.stop()
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
