"""Real tokenizer parity: load ``tokenizer.json`` files and compare their token→id mappings.

A draft proposes token *ids* that the target verifies as its own, so the two mappings must agree
id for id. vLLM and SGLang compare ``vocab_size`` and (SGLang, since PR #23838) ``get_vocab()``;
llama.cpp compares token texts from id 5 on (``common/speculative.cpp``; docs/compatibility.md). This
module does the full comparison with the Hugging Face ``tokenizers`` library (imported lazily,
only when a file is read): ids that differ, tokens only one side has, special tokens that differ,
and the first differences by id.

>>> a = TokenizerVocab.from_mapping("a", {"hi": 0, "yo": 1, "<s>": 2}, special={"<s>": 2})
>>> b = TokenizerVocab.from_mapping("b", {"hi": 0, "ya": 1, "<s>": 2}, special={"<s>": 2})
>>> cmp = compare_vocabs(a, b)
>>> cmp.identical, cmp.only_in_a, cmp.only_in_b, [d.token for d in cmp.first_differences]
(False, 1, 1, ['ya', 'yo'])
"""

from __future__ import annotations

import hashlib
import heapq
import json
import stat
from pathlib import Path

from pydantic import BaseModel, Field

from planner.errors import InputError

TOKENIZER_FILE = "tokenizer.json"
EXPECTED = "a Hugging Face tokenizer.json (a file, a model folder holding one, or an upload)"
#: The largest tokenizer.json read: the biggest published vocabularies (262,144 tokens) take about 35 MB.
MAX_TOKENIZER_BYTES = 64 * 2**20
#: The most tokens compared: four times the largest published vocabulary, so the work stays bounded.
MAX_VOCAB_TOKENS = 1_048_576


class TokenizerVocab(BaseModel):
    """A tokenizer reduced to what parity needs: every token's id, the special tokens, a hash."""

    name: str
    #: token text → id, added tokens included.
    vocab: dict[str, int]
    #: added tokens, special or not (``<|eot_id|>``, ``<think>``): text → id. Chat templates and
    #: reasoning markers live here; the model's base vocabulary is everything else.
    special_tokens: dict[str, int] = {}
    content_hash: str

    @classmethod
    def from_mapping(cls, name: str, vocab: dict[str, int], special: dict[str, int] | None = None) -> TokenizerVocab:
        special = dict(special or {})
        payload = json.dumps([sorted(vocab.items()), sorted(special.items())], ensure_ascii=False)
        digest = hashlib.sha256(payload.encode("utf-8")).hexdigest()
        return cls(name=name, vocab=dict(vocab), special_tokens=special, content_hash=digest)

    @property
    def id_count(self) -> int:
        """Ids the tokenizer can emit (highest id + 1): a model's ``vocab_size`` must be at least this."""
        return max(self.vocab.values(), default=-1) + 1

    @property
    def regular_vocab(self) -> dict[str, int]:
        return {t: i for t, i in self.vocab.items() if t not in self.special_tokens}


class TokenDifference(BaseModel):
    """One token whose id differs, or that one side lacks (its id there is None)."""

    token: str
    id_a: int | None
    id_b: int | None
    special: bool = False


class VocabComparison(BaseModel):
    a_name: str
    b_name: str
    a_id_count: int
    b_id_count: int
    a_hash: str
    b_hash: str
    #: Same tokens, same ids, same special tokens.
    identical: bool
    #: Non-special tokens map to the same ids on both sides (special tokens may differ).
    regular_identical: bool
    differing_ids: int = Field(ge=0)
    only_in_a: int = Field(ge=0)
    only_in_b: int = Field(ge=0)
    #: Special tokens present on one side only, special on one side only, or at other ids.
    special_differences: list[str]
    #: The first differences, ordered by the lower of the two ids.
    first_differences: list[TokenDifference]

    def summary(self) -> str:
        """A sentence a person can act on."""
        if self.identical:
            return f"{self.a_name} and {self.b_name} are identical ({self.a_id_count:,} ids, same special tokens)"
        shown = ", ".join(_fmt(d) for d in self.first_differences)
        if self.regular_identical:
            return (
                f"{self.a_name} and {self.b_name} share every regular token id but differ in "
                f"{len(self.special_differences)} special token(s): {', '.join(self.special_differences[:8])}"
                f"; first differences: {shown}"
            )
        return (
            f"{self.a_name} and {self.b_name} map tokens to different ids: {self.differing_ids:,} shared "
            f"tokens have other ids, {self.only_in_a:,} tokens are only in {self.a_name}, {self.only_in_b:,} "
            f"only in {self.b_name}; first differences: {shown}"
        )


def _fmt(diff: TokenDifference) -> str:
    a = "absent" if diff.id_a is None else str(diff.id_a)
    b = "absent" if diff.id_b is None else str(diff.id_b)
    return f"{diff.token!r} ({a} vs {b})"


def _too_big(field: str, label: str, size: int) -> InputError:
    return InputError(
        field, label, f"{EXPECTED} of at most {MAX_TOKENIZER_BYTES // 2**20} MiB (this one: {size:,} bytes)"
    )


def _read_text(source: str | Path | bytes, field: str) -> tuple[str, str]:
    if isinstance(source, bytes | bytearray):
        if len(source) > MAX_TOKENIZER_BYTES:
            raise _too_big(field, "uploaded tokenizer.json", len(source))
        return bytes(source).decode("utf-8", errors="replace"), "uploaded tokenizer.json"
    path = Path(source)
    shown = str(path).encode("utf-8", errors="replace").decode("utf-8")
    try:
        if path.is_dir():
            if not (path / TOKENIZER_FILE).is_file():
                raise InputError(field, shown, f"{EXPECTED}; this folder has no {TOKENIZER_FILE}")
            path = path / TOKENIZER_FILE
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise InputError(field, shown, f"{EXPECTED}; this is not a regular file")
        if info.st_size > MAX_TOKENIZER_BYTES:
            raise _too_big(field, shown, info.st_size)
        with path.open("rb") as handle:
            data = handle.read(MAX_TOKENIZER_BYTES + 1)
    except FileNotFoundError:
        raise InputError(field, shown, f"{EXPECTED}; no such file") from None
    except OSError as exc:
        raise InputError(field, shown, f"{EXPECTED}; it cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_TOKENIZER_BYTES:
        raise _too_big(field, shown, len(data))
    return data.decode("utf-8", errors="replace"), shown


def load_tokenizer_vocab(
    source: str | Path | bytes, *, field: str = "tokenizer", name: str | None = None
) -> TokenizerVocab:
    """Read a ``tokenizer.json`` (path, folder or upload bytes) with the ``tokenizers`` library.

    A file that is not JSON, or that ``tokenizers`` cannot build, is an ``InputError`` naming it.
    """
    text, where = _read_text(source, field)
    label = name or where
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(field, label, f"{EXPECTED}; it is not JSON ({exc.msg} at line {exc.lineno})") from exc
    except RecursionError:
        raise InputError(field, label, f"{EXPECTED}; it is nested too deeply to be a tokenizer") from None
    model = parsed.get("model") if isinstance(parsed, dict) else None
    vocab_in_file = model.get("vocab") if isinstance(model, dict) else None
    if isinstance(vocab_in_file, dict | list) and len(vocab_in_file) > MAX_VOCAB_TOKENS:
        raise InputError(
            field, label, f"{EXPECTED} of at most {MAX_VOCAB_TOKENS:,} tokens (this one: {len(vocab_in_file):,})"
        )
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_str(text)
    except Exception as exc:  # the tokenizers library raises a bare Exception on malformed files
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise InputError(field, label, f"{EXPECTED}; the tokenizers library cannot read it ({reason})") from exc
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    if len(vocab) > MAX_VOCAB_TOKENS:
        raise InputError(field, label, f"{EXPECTED} of at most {MAX_VOCAB_TOKENS:,} tokens (this one: {len(vocab):,})")
    special = {tok.content: idx for idx, tok in tokenizer.get_added_tokens_decoder().items()}
    return TokenizerVocab.from_mapping(label, vocab, special)


def compare_vocabs(a: TokenizerVocab, b: TokenizerVocab, *, limit: int = 10) -> VocabComparison:
    """Count and list every difference between two token→id mappings."""
    common = a.vocab.keys() & b.vocab.keys()
    differing = [t for t in common if a.vocab[t] != b.vocab[t]]
    only_a = a.vocab.keys() - b.vocab.keys()
    only_b = b.vocab.keys() - a.vocab.keys()
    specials = a.special_tokens.keys() | b.special_tokens.keys()
    special_diff = sorted(
        t for t in specials if a.special_tokens.get(t) != b.special_tokens.get(t) or a.vocab.get(t) != b.vocab.get(t)
    )

    def lowest_id(token: str) -> tuple[int, str]:
        return min(i for i in (a.vocab.get(token), b.vocab.get(token)) if i is not None), token

    first = heapq.nsmallest(limit, (lowest_id(t) for t in (*differing, *only_a, *only_b)))
    diffs = [
        TokenDifference(token=t, id_a=a.vocab.get(t), id_b=b.vocab.get(t), special=t in specials) for _, t in first
    ]
    return VocabComparison(
        a_name=a.name,
        b_name=b.name,
        a_id_count=a.id_count,
        b_id_count=b.id_count,
        a_hash=a.content_hash,
        b_hash=b.content_hash,
        identical=a.content_hash == b.content_hash,
        regular_identical=a.regular_vocab == b.regular_vocab,
        differing_ids=len(differing),
        only_in_a=len(only_a),
        only_in_b=len(only_b),
        special_differences=special_diff,
        first_differences=diffs[:limit],
    )
