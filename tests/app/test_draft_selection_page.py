"""Draft Selection page: the ranked matrix, the per-pair reasons and real tokenizer-file checks."""

from __future__ import annotations

import json

from tests.app.conftest import page


def test_matrix_ranks_a_same_family_draft_first():
    at = page("draft_selection.py").run()
    assert not at.exception
    assert "Best draft: meta-llama/Llama-3.2" in at.success[0].value
    table, details = at.dataframe[0].value, at.dataframe[1].value
    assert table.iloc[0]["Compatibility"] != "incompatible"
    assert (table["Compatibility"] == "incompatible").iloc[-1]
    assert details["Why lower"].iloc[1:].str.len().gt(0).all()
    # Headers in words with units; the deciding columns up front, the rest under "Details"; fits 1440 px.
    assert list(table.columns)[:4] == ["Rank", "Draft", "Compatibility", "Speedup at batch 1 (x)"]
    assert "Draft weights / GPU (GiB)" in table.columns and len(table.columns) <= 9
    assert not any("_" in c or "@" in c for c in [*table.columns, *details.columns])
    assert "compatible_with_warnings" not in set(table["Compatibility"])


def test_a_typed_alpha_is_labelled_as_the_users_value_not_measured():
    at = page("draft_selection.py").run()
    at.checkbox(key="selection_assume").check().run()
    at.slider(key="selection_alpha").set_value(0.6).run()
    assert not at.exception and "your value" in at.success[0].value and "measured" not in at.success[0].value
    table = at.dataframe[0].value
    # one assumed α is for learned drafts; n-gram lookup keeps its own (an α of the prompts, not of a draft)
    learned = table[~table["Draft"].str.contains("n-gram")]
    assert set(learned["Source of α"].dropna()) == {"your value"}
    assert set(table[table["Draft"].str.contains("n-gram")]["Source of α"]) <= {"prior", "measured", "published"}


def test_assumed_alpha_changes_the_speedups():
    at = page("draft_selection.py").run()
    before = at.dataframe[0].value.iloc[0]["Speedup at batch 1 (x)"]
    at.checkbox(key="selection_assume").check().run()
    at.slider(key="selection_alpha").set_value(0.5).run()
    after = at.dataframe[0].value.iloc[0]["Speedup at batch 1 (x)"]
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
