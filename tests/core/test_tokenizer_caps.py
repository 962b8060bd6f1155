"""Tokenizer files: size and vocabulary caps keep the comparison's work bounded; odd files are clean errors."""

from __future__ import annotations

import json

import pytest

from planner.errors import InputError
from planner.pairs import tokenizers
from planner.pairs.tokenizers import TokenizerVocab, compare_vocabs, load_tokenizer_vocab


def test_uploads_over_the_byte_cap_are_refused_before_parsing(monkeypatch):
    monkeypatch.setattr(tokenizers, "MAX_TOKENIZER_BYTES", 100)
    with pytest.raises(InputError, match="at most"):
        load_tokenizer_vocab(b" " * 101, field="target_tokenizer")


def test_vocabularies_over_the_token_cap_are_refused_before_the_library_builds_them(monkeypatch):
    monkeypatch.setattr(tokenizers, "MAX_VOCAB_TOKENS", 10)
    text = json.dumps({"model": {"type": "WordLevel", "vocab": {f"t{i}": i for i in range(11)}, "unk_token": "t0"}})
    with pytest.raises(InputError, match="at most 10 tokens"):
        load_tokenizer_vocab(text.encode(), field="draft_tokenizer")


@pytest.mark.parametrize("source", ["/proc/self/mem", "/dev/zero"])
def test_special_files_are_clean_errors(source):
    with pytest.raises(InputError) as err:
        load_tokenizer_vocab(source, field="target_tokenizer")
    assert err.value.field == "target_tokenizer"


def test_deep_json_is_a_clean_error():
    with pytest.raises(InputError, match="nested too deeply"):
        load_tokenizer_vocab(b"[" * 100_000 + b"]" * 100_000, field="target_tokenizer")


def test_comparison_builds_only_the_differences_it_shows():
    a = TokenizerVocab.from_mapping("a", {f"t{i}": i for i in range(200_000)})
    b = TokenizerVocab.from_mapping("b", {f"t{i}": i + 1 for i in range(200_000)})
    cmp = compare_vocabs(a, b, limit=5)
    assert cmp.differing_ids == 200_000 and len(cmp.first_differences) == 5
    assert [d.token for d in cmp.first_differences] == ["t0", "t1", "t2", "t3", "t4"]
