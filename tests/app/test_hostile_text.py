"""User text is text: Markdown, HTML, LaTeX and web addresses typed into a link, a saved name or note, an imported
config's name, a measurement file's name or a pasted log are shown as typed on every page, never rendered.

Every element that Streamlit renders as Markdown is rendered here with CommonMark (raw HTML on, as a permissive
viewer would) and must hold no link, image, emphasis or HTML element that came from the hostile text, and no bare
address a viewer would turn into a link.
"""

from __future__ import annotations

import json

import pytest
from markdown_it import MarkdownIt

from planner import Scenario
from planner.validation import save_custom_model, save_quote, save_scenario
from tests.app.conftest import PAGE_FILES, page
from tests.conftest import ENGINE_LOGS

HOSTILE = (
    "![px](https://tracker.example/p.png) [click](https://evil.example/x) **loud** _soft_ <b>bold</b> "
    "<img src=https://tracker.example/i.png> www.evil.example ops@evil.example $x^2$ :red[red]"
)
#: What must never appear in a rendered element (a link, an image, emphasis or HTML from the hostile text).
RENDERED = ("<a ", "<img", "<strong>loud", "<em>soft", "<b>bold", "<strong>", "<em>")
#: Addresses a GFM viewer would link without brackets (escaped they read "https\://", "www\.", "\@").
BARE = ("https://tracker.example", "https://evil.example", "www.evil.example", "ops@evil.example")
MARKDOWN_KINDS = ("markdown", "caption", "error", "warning", "info", "success", "title", "header", "subheader")
MD = MarkdownIt("commonmark", {"html": True})
TINY = {
    "_name_or_path": "acme/tiny [x](https://evil.example/m) **m**",
    "model_type": "llama",
    "num_hidden_layers": 2,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "vocab_size": 500,
}


def rendered_problems(at) -> list[str]:
    """Every Markdown element whose rendering carries formatting or a link the hostile text brought."""
    found = []
    for kind in MARKDOWN_KINDS:
        for element in getattr(at, kind):
            source = str(element.value)
            if "evil" not in source and "tracker" not in source and "loud" not in source:
                continue
            html = MD.render(source)
            hits = [r for r in RENDERED if r in html] + [b for b in BARE if b in source]
            if hits:
                found.append(f"{kind}: {hits} in {source[:300]!r}")
    return found


def _all_text(at) -> str:
    return " ".join(str(e.value) for kind in MARKDOWN_KINDS for e in getattr(at, kind))


@pytest.mark.parametrize("page_file", [p.name for p in PAGE_FILES])
def test_a_hostile_link_renders_nothing_on_any_page(tmp_store, page_file):
    at = page(page_file)
    for key in ("ev", "q", "t", "d", "n", "fn", "w", "kv", "mf", HOSTILE[:30]):
        at.query_params[key] = HOSTILE
    at.run()
    assert not at.exception
    assert rendered_problems(at) == []
    assert "Parts of this link were not used" in _all_text(at)


def test_saved_names_notes_and_an_imported_model_render_nothing(tmp_store):
    outcome = save_custom_model(json.dumps(TINY).encode(), "")
    scenario = Scenario(target=outcome.name, draft=None, node="1x-h100-sxm-80gb", tp=1, max_model_len=4096)
    save_scenario("plan [x](https://evil.example/s) **loud**", scenario, notes=HOSTILE)
    save_quote("quote ![px](https://tracker.example/q.png)", {"title": "q"}, scenario, notes=HOSTILE)
    at = page("saved.py").run()
    assert not at.exception
    assert rendered_problems(at) == []
    assert "tracker" in _all_text(at) and "evil" in _all_text(at)  # shown, as text
    at.button(key="saved_open").click().run()
    for name in ("sizing.py", "performance.py", "draft_selection.py", "fleet.py", "catalog.py"):
        at.switch_page(f"ui/{name}").run()
        assert not at.exception, name
        assert rendered_problems(at) == [], name


def test_a_pasted_log_and_a_stray_measurement_file_render_nothing(tmp_store):
    folder = tmp_store.parent / "measurements"
    folder.mkdir()
    (folder / "[x](https:evil.example) **loud**.json").write_text("{not json")
    log = (ENGINE_LOGS / "vllm-v1-019-llmd-llama31-8b-16k.log").read_text()
    log = log.replace("meta-llama/Llama-3.1-8B-Instruct", HOSTILE.replace("'", ""))
    at = page("validation.py").run()
    at.text_area(key="validation_log_text").input(log)
    at.text_input(key="validation_log_model").input(HOSTILE[:200])
    at.button(key="validation_log_submit").click().run()
    assert not at.exception
    assert rendered_problems(at) == []
    assert "evil" in _all_text(at)
