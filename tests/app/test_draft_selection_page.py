"""Draft Selection page: the ranked matrix, the per-pair reasons and real tokenizer-file checks."""

from __future__ import annotations

import json

from tests.app.conftest import page


def test_matrix_ranks_a_same_family_draft_first():
    at = page("draft_selection.py").run()
    assert not at.exception
    assert "Best draft: meta-llama/Llama-3.2" in at.success[0].value
    table = at.dataframe[0].value
    assert table.iloc[0]["verdict"] != "incompatible"
    assert (table["verdict"] == "incompatible").iloc[-1]
    assert table["why lower"].iloc[1:].str.len().gt(0).all()


def test_assumed_alpha_changes_the_speedups():
    at = page("draft_selection.py").run()
    before = at.dataframe[0].value.iloc[0]["speedup @ batch 8"]
    at.checkbox(key="selection_assume").check().run()
    at.slider(key="selection_alpha").set_value(0.5).run()
    after = at.dataframe[0].value.iloc[0]["speedup @ batch 8"]
    assert after < before


def _tokenizer_json(vocab: dict[str, int]) -> bytes:
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel

    return Tokenizer(WordLevel(vocab, unk_token="[UNK]")).to_str().encode()


def test_uploaded_tokenizers_that_differ_are_reported():
    at = page("draft_selection.py").run()
    base = {"[UNK]": 0, "hello": 1, "world": 2}
    other = {"[UNK]": 0, "hello": 1, "planet": 2}
    at.file_uploader(key="selection_target_tok").set_value(
        ("tokenizer.json", _tokenizer_json(base), "application/json")
    )
    at.file_uploader(key="selection_draft_tok").set_value(
        ("tokenizer.json", _tokenizer_json(other), "application/json")
    )
    at.run()
    assert not at.exception
    assert any("tokenizer" in e.value for e in at.error)
    assert any("planet" in json.dumps(j.value) or "world" in json.dumps(j.value) for j in at.json)
