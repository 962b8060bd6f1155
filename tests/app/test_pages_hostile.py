"""Pages never show an exception box: hostile uploads, pastes and widget values on every page.

AppTest cannot drive a file uploader, so ``st.file_uploader`` is replaced by one that hands the page a
chosen file (name, size and bytes, as Streamlit's UploadedFile does). Seeded and bounded.
"""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import dataclass

import pytest
import streamlit as st

from planner.validation.store import save_measurement
from tests.app.conftest import PAGE_FILES, page

CONFIG = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
          "intermediate_size": 128, "vocab_size": 100, "num_key_value_heads": 2}  # fmt: skip
HOSTILE_UPLOADS = [
    json.dumps(CONFIG | {"num_hidden_layers": 10_000_000}).encode(),
    json.dumps(CONFIG | {"vocab_size": 10**40}).encode(),
    json.dumps(CONFIG | {"hidden_size": "64", "num_attention_heads": 0}).encode(),
    json.dumps(CONFIG | {"layer_types": 7}).encode(),
    json.dumps(
        CONFIG
        | {
            "model_type": "gpt_neox",
            "_attn_implementation": "kernels-community/fa",
            "auto_map": {"AutoModelForCausalLM": "evil--m.Evil"},
        }
    ).encode(),
    json.dumps(CONFIG | {"model_type": "mixtral", "num_local_experts": 2, "num_experts_per_tok": 9}).encode(),
    json.dumps(CONFIG | {"model_type": 7}).encode(),
    b"[" * 100_000 + b"]" * 100_000,
    b"\xff\xfe not utf-8 \x00",
    b"[1, 2, 3]",
    b"",
    b"speculative_config=(" * 20_000,
    b"Memory profiling results: " * 20_000,
]
HOSTILE_TEXT = ["", "<script>alert(1)</script>", "=cmd|' /C calc'!A0", "\x00", "a" * 300, "nan", "-1", "\u202e\u0000"]


@dataclass
class FakeUpload:
    name: str
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)

    def getvalue(self) -> bytes:
        return self.data


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_MEASUREMENTS_DIR", str(tmp_path / "records"))
    monkeypatch.setenv("PLANNER_STORE_PATH", str(tmp_path / "store.sqlite3"))
    return tmp_path


def _with_upload(monkeypatch, upload: FakeUpload | None) -> None:
    monkeypatch.setattr(st, "file_uploader", lambda *args, **kwargs: upload)


def _no_exception(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


@pytest.mark.parametrize("index", range(len(HOSTILE_UPLOADS)))
def test_catalog_import_of_hostile_configs_is_a_message(index, isolated, monkeypatch):
    _with_upload(monkeypatch, FakeUpload("config.json", HOSTILE_UPLOADS[index]))
    at = page("catalog.py").run()
    _no_exception(at)
    assert at.error or at.success  # counted, or a message naming what to fix


@pytest.mark.parametrize("index", [7, 8, 9, 10])
def test_tokenizer_uploads_are_messages(index, isolated, monkeypatch):
    _with_upload(monkeypatch, FakeUpload("tokenizer.json", HOSTILE_UPLOADS[index]))
    at = page("draft_selection.py").run()
    _no_exception(at)
    assert at.error  # the tokenizer files were read and refused with a message


def test_uploads_over_the_per_kind_limit_are_refused_before_work(isolated, monkeypatch):
    _with_upload(monkeypatch, FakeUpload("config.json", b" " * (5 * 2**20)))
    at = page("catalog.py").run()
    _no_exception(at)
    assert any("at most" in e.value for e in at.error)


@pytest.mark.parametrize("index", [8, 11, 12])
def test_log_uploads_and_pastes_are_parsed_on_submit(index, isolated, monkeypatch):
    _with_upload(monkeypatch, None)
    at = page("validation.py").run()
    at.text_area(key="validation_log_text").input(HOSTILE_UPLOADS[index].decode("utf-8", "replace"))
    at.button(key="validation_log_submit").click().run()
    _no_exception(at)
    assert any("Engine:" in m.value for m in at.markdown)  # parsed (and found nothing to compare)
    _with_upload(monkeypatch, FakeUpload("big.log", b"x" * (21 * 2**20)))
    at = page("validation.py").run()
    at.button(key="validation_log_submit").click().run()
    _no_exception(at)
    assert any("at most" in e.value for e in at.error)


def test_a_damaged_store_is_reported_with_a_way_out(isolated):
    (isolated / "store.sqlite3").write_bytes(b"SQLite format 3\x00" + b"\x07" * 4096)
    at = page("validation.py").run()
    _no_exception(at)
    assert any("move it aside" in w.value for w in at.warning)


def test_a_bad_store_row_does_not_break_the_page(isolated):
    save_measurement("ok", "2026", "g", "t", "d", "{}", path=isolated / "store.sqlite3")
    conn = sqlite3.connect(isolated / "store.sqlite3")
    with conn:
        conn.execute("INSERT INTO measurements VALUES ('list', '2026', 'g', 't', 'd', '[1]')")
        conn.execute("INSERT INTO measurements VALUES ('text', '2026', 'g', 't', 'd', 'nope')")
    conn.close()
    at = page("validation.py").run()
    _no_exception(at)
    assert any("skipped" in w.value for w in at.warning)


@pytest.mark.slow
@pytest.mark.parametrize("name", [p.name for p in PAGE_FILES])
def test_widget_fuzz_on_every_page(name, isolated, monkeypatch):
    """Hostile text in every text box, random choices in every select box: never an exception box."""
    rng = random.Random(name)
    _with_upload(monkeypatch, None)
    at = page(name).run()
    _no_exception(at)
    for round_ in range(2):
        for box in at.text_input:
            box.input(rng.choice(HOSTILE_TEXT))
        for box in at.text_area:
            box.input(rng.choice(HOSTILE_TEXT))
        for select in at.selectbox:
            if select.options:
                select.select_index(rng.randrange(len(select.options)))
        at.run()
        _no_exception(at)
        for button in at.button:
            if round_ == 1 and button.key and "submit" in str(button.key):
                button.click()
        at.run()
        _no_exception(at)
