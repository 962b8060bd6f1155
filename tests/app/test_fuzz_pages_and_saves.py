"""Random and malformed links on every page, with a save attempted under a malformed, duplicate or empty name:
never an exception or traceback element, and every table of the store keeps its row count."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner import Scenario
from planner.validation import save_custom_model, save_quote, save_scenario
from tests.app.test_scenario_link import _app, _keys, _values

PAGES = ["sizing", "catalog", "performance", "draft_selection", "fleet", "validation", "saved"]
TABLES = ("measurements", "scenarios", "custom_models", "quotes")
TAKEN = "Taken name"
BAD_NAMES = st.one_of(
    st.sampled_from(["", "   ", "\t\n", TAKEN, TAKEN.upper(), " taken NAME ", "x" * 121, "a\u0000b", "\u202e\u0007"]),
    st.text(alphabet="\u0000\u0001\u0007\u001b\u007f\u0085", min_size=1, max_size=8),
)
TINY = {
    "_name_or_path": "acme/fuzz-falcon",
    "model_type": "falcon",
    "num_hidden_layers": 2,
    "hidden_size": 64,
    "num_attention_heads": 4,
    "vocab_size": 500,
}


def _counts(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}
    finally:
        conn.close()


def _store() -> Path:
    path = Path(tempfile.mkdtemp(prefix="planner-fuzz-")) / "store.sqlite3"
    save_scenario(TAKEN, Scenario(), path=path)
    save_quote(TAKEN, {"title": "quote"}, Scenario(), path=path)
    save_custom_model(TINY, path=path)
    return path


STORE = _store()
#: (page, name) of every save pressed (the last test checks saves were tried on both pages).
ATTEMPTS: list[tuple[str, str]] = []


def _attempt_save(at, page: str, name: str) -> None:
    """Type ``name`` into the page's save box (if it has one) and press save."""
    boxes = {"saved": ("saved_name", "saved_save"), "fleet": ("quote_save_name", "quote_save")}
    if page not in boxes:
        return
    box, button = boxes[page]
    if not [w for w in at.text_input if w.key == box]:
        return  # the page could not draw its save box for this link (an error message says why)
    at.text_input(key=box).input(name).run()
    if not at.button(key=button).disabled:
        at.button(key=button).click().run()
        ATTEMPTS.append((page, name))


@settings(max_examples=50, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_keys, _values, max_size=6), st.sampled_from(PAGES), BAD_NAMES)
def test_malformed_links_and_saves_never_raise_and_never_change_the_store(query, page, name):
    before = _counts(STORE)
    old = os.environ.get("PLANNER_STORE_PATH")
    os.environ["PLANNER_STORE_PATH"] = str(STORE)
    try:
        at = _app(query)
        if page != "sizing":
            at.switch_page(f"ui/{page}.py").run()
        assert not at.exception
        _attempt_save(at, page, name)
        assert not at.exception
    finally:
        if old is None:
            os.environ.pop("PLANNER_STORE_PATH", None)
        else:
            os.environ["PLANNER_STORE_PATH"] = old
    assert _counts(STORE) == before


def test_the_fuzz_pressed_save_on_both_pages():
    if not ATTEMPTS:  # run alone: draw a few examples here
        test_malformed_links_and_saves_never_raise_and_never_change_the_store()
    assert {page for page, _ in ATTEMPTS} == {"saved", "fleet"}
