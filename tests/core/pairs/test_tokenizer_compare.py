"""Real tokenizer.json files, built here with the tokenizers library, compared id for id."""

from __future__ import annotations

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from planner.errors import InputError
from planner.pairs.tokenizers import TokenizerVocab, compare_vocabs, load_tokenizer_vocab

CORPUS = ["the cat sat on the mat", "the dog sat on the log", "speculative decoding drafts tokens"]


def word_level(path, words: list[str], special: list[str] = ()) -> str:
    """A WordLevel tokenizer.json with ``words`` at ids 0.. and ``special`` added after them."""
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    if special:
        tok.add_special_tokens(list(special))
    tok.save(str(path))
    return str(path)


def bpe(path, special: list[str]) -> str:
    """A byte-pair tokenizer trained on a tiny corpus (deterministic for a fixed corpus)."""
    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=60, special_tokens=["[UNK]", *special]))
    tok.save(str(path))
    return str(path)


WORDS = ["[UNK]", "the", "cat", "sat", "on", "mat"]


def test_two_files_that_differ_in_one_token_are_different_and_name_it(tmp_path):
    a = load_tokenizer_vocab(word_level(tmp_path / "a.json", WORDS))
    b = load_tokenizer_vocab(word_level(tmp_path / "b.json", [*WORDS[:5], "rug"]))
    cmp = compare_vocabs(a, b)
    assert not cmp.identical and not cmp.regular_identical
    assert (cmp.only_in_a, cmp.only_in_b, cmp.differing_ids) == (1, 1, 0)
    assert {(d.token, d.id_a, d.id_b) for d in cmp.first_differences} == {("mat", 5, None), ("rug", None, 5)}
    assert "'mat'" in cmp.summary() and "'rug'" in cmp.summary()


def test_identical_files_compare_identical_with_equal_hashes(tmp_path):
    a = load_tokenizer_vocab(word_level(tmp_path / "a.json", WORDS, ["<s>"]))
    b = load_tokenizer_vocab(word_level(tmp_path / "b.json", WORDS, ["<s>"]))
    cmp = compare_vocabs(a, b)
    assert cmp.identical and cmp.regular_identical and a.content_hash == b.content_hash
    assert cmp.first_differences == []
    assert a.id_count == 7 and a.special_tokens == {"<s>": 6}


def test_a_shift_is_counted_as_differing_ids_in_id_order(tmp_path):
    a = load_tokenizer_vocab(word_level(tmp_path / "a.json", WORDS))
    b = load_tokenizer_vocab(word_level(tmp_path / "b.json", ["[UNK]", "a", *WORDS[1:]]))
    cmp = compare_vocabs(a, b, limit=3)
    assert cmp.differing_ids == 5 and cmp.only_in_b == 1
    assert [d.token for d in cmp.first_differences] == ["a", "the", "cat"]


def test_a_special_token_trained_in_first_shifts_every_learned_id(tmp_path):
    a = load_tokenizer_vocab(bpe(tmp_path / "a.json", ["<s>"]))
    b = load_tokenizer_vocab(bpe(tmp_path / "b.json", ["<s>", "<think>"]))
    cmp = compare_vocabs(a, b)
    # Trainer special tokens take the first ids, so <think> moves every learned token up by one.
    assert not cmp.identical and not cmp.regular_identical
    assert cmp.differing_ids == len(a.vocab) - 2 and cmp.only_in_b == 1
    assert "<think>" in cmp.special_differences
    same = compare_vocabs(a, load_tokenizer_vocab(bpe(tmp_path / "c.json", ["<s>"])))
    assert same.identical


def test_added_special_tokens_after_the_vocabulary_keep_regular_ids(tmp_path):
    a = load_tokenizer_vocab(word_level(tmp_path / "a.json", WORDS, ["<|eot|>"]))
    b = load_tokenizer_vocab(word_level(tmp_path / "b.json", WORDS, ["<|end|>"]))
    cmp = compare_vocabs(a, b)
    assert cmp.regular_identical and not cmp.identical
    assert cmp.special_differences == ["<|end|>", "<|eot|>"]
    assert "special token" in cmp.summary()


def test_folder_and_upload_bytes_load_like_the_file(tmp_path):
    path = word_level(tmp_path / "tokenizer.json", WORDS)
    from_file = load_tokenizer_vocab(path)
    assert load_tokenizer_vocab(tmp_path).content_hash == from_file.content_hash
    upload = load_tokenizer_vocab((tmp_path / "tokenizer.json").read_bytes(), name="upload.json")
    assert upload.content_hash == from_file.content_hash and upload.name == "upload.json"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "not JSON"),
        ('{"version": "1.0"}', "tokenizers library cannot read it"),
        ("[1, 2]", "tokenizers library cannot read it"),
    ],
)
def test_malformed_files_raise_input_errors_naming_the_file(tmp_path, content, expected):
    path = tmp_path / "broken.json"
    path.write_text(content)
    with pytest.raises(InputError) as err:
        load_tokenizer_vocab(path, field="draft_tokenizer")
    assert err.value.field == "draft_tokenizer"
    assert "broken.json" in str(err.value) and expected in str(err.value)


def test_missing_file_and_folder_without_tokenizer_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_tokenizer_vocab(tmp_path / "absent.json")
    with pytest.raises(InputError, match=r"has no tokenizer\.json"):
        load_tokenizer_vocab(tmp_path)


def test_from_mapping_hash_depends_on_ids_and_specials():
    a = TokenizerVocab.from_mapping("a", {"x": 0, "y": 1})
    assert a.content_hash == TokenizerVocab.from_mapping("b", {"y": 1, "x": 0}).content_hash
    assert a.content_hash != TokenizerVocab.from_mapping("c", {"x": 1, "y": 0}).content_hash
    assert a.content_hash != TokenizerVocab.from_mapping("d", {"x": 0, "y": 1}, {"y": 1}).content_hash
