"""Browser steps every journey takes: wait for the app's run to finish, and choose an item in a selectbox.

A selectbox is chosen from the keyboard, as a person finds an item in a long list: its label is typed (the list
filters and highlights the first match) and Enter picks it. A click on the floating list depends on where it was
drawn, and on a loaded machine it can be drawn outside the window, where no click reaches; a key press does not.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

#: Generous: the machine may be running other suites; every wait is on something visible, never a sleep.
WAIT_MS = 120_000
#: Openings of a list that a redraw of the page closed before the item was picked.
OPEN_TRIES = 4


def settled(page, timeout_ms: int = WAIT_MS, network: bool = False) -> None:
    """Wait until the app's current run has finished (its status widget goes away); with ``network``, first
    until the page's requests have finished too."""
    if network:
        page.wait_for_load_state("networkidle")
    page.locator("[data-testid=stStatusWidget]").wait_for(state="detached", timeout=timeout_ms)


def choose_in(page, box, option: str, timeout_ms: int = WAIT_MS) -> None:
    """Choose ``option`` in the selectbox ``box`` (a locator of its input), or fail naming what it shows.

    The first option whose label contains ``option`` is the one picked, as a click on ``.first`` would. A run that
    redraws the page while the list is open closes it, so it is opened again, at most ``OPEN_TRIES`` times.
    """
    expect(box).to_be_enabled(timeout=timeout_ms)
    listed = page.get_by_role("option", name=option).first
    for _ in range(OPEN_TRIES):
        settled(page, timeout_ms)
        box.click()
        page.keyboard.type(option)
        try:
            listed.wait_for(state="visible", timeout=timeout_ms // OPEN_TRIES)
        except PlaywrightTimeoutError:
            page.keyboard.press("Escape")
            continue
        page.keyboard.press("Enter")
        settled(page, timeout_ms)
        if option in box.input_value():
            return
    expect(box).to_have_value(re.compile(re.escape(option)))


def choose(page, label: str, option: str, timeout_ms: int = WAIT_MS) -> None:
    """Choose ``option`` in the sidebar's ``label`` selectbox."""
    choose_in(page, page.locator("[data-testid=stSidebar]").get_by_label(label), option, timeout_ms)


def download(page, button, timeout_ms: int = WAIT_MS, tries: int = 3):
    """Click the download ``button`` and return the download; a click lost to a redraw of the page (the button drawn
    anew as it is pressed) is repeated, at most ``tries`` times in ``timeout_ms`` in all, so a document that is never
    produced still fails the test."""
    for attempt in range(tries):
        settled(page, timeout_ms)
        try:
            with page.expect_download(timeout=timeout_ms // tries) as info:
                button.click()
            return info.value
        except PlaywrightTimeoutError:
            if attempt == tries - 1:
                raise
    raise AssertionError("unreachable")


def render_log(log: Path, kind: str) -> list[dict]:
    """The entries of ``kind`` ("run", "job", "warm-up", "export") in a server's render log (``PLANNER_RENDER_LOG``)."""
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [entry for entry in map(json.loads, lines) if entry["kind"] == kind]
