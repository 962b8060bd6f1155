"""Which engine release runs which speculative method, and what its loader rejects (``data/engine_releases.json``).

>>> method_support("vllm", "0.12.0", "draft_model").supported, method_support("vllm", "0.14.0", "draft_model").supported
(False, True)
>>> method_support("vllm", None, "draft_model").supported  # the newest release
True
>>> method_support("sglang", "0.4.6", "ngram").engine_message
"argument --speculative-algorithm: invalid choice: 'NGRAM' (choose from 'EAGLE', 'EAGLE3', 'NEXTN')"
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from planner.catalog.schemas import SpeculatorKind
from planner.engines.versions import parse_version
from planner.errors import CatalogError, InputError
from planner.facts import data_cache, read_data_file

#: The speculative methods engines name in ``speculative_config.method`` (one list, in the catalog schemas).
Method = SpeculatorKind


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MethodRange(_Strict):
    method: Method
    min_version: str
    max_version: str | None
    source: str

    def covers(self, version: str) -> bool:
        wanted = parse_version(version)
        upper = parse_version(self.max_version) if self.max_version else None
        return parse_version(self.min_version) <= wanted and (upper is None or wanted < upper)


class MethodRefusal(_Strict):
    """The engine's own message when a release in ``[min_version, max_version)`` lacks a method."""

    min_version: str
    max_version: str
    #: The methods it answers for (None: every method the release lacks).
    methods: tuple[Method, ...] | None = None
    message: str
    source: str

    def covers(self, version: str, method: str) -> bool:
        wanted = parse_version(version)
        in_range = parse_version(self.min_version) <= wanted < parse_version(self.max_version)
        return in_range and (self.methods is None or method in self.methods)


class ContextLimit(_Strict):
    """The engine's refusal of a max length above the one it derives (:mod:`planner.engines.context_limit`)."""

    derivation: Literal["smallest_length_key", "first_length_key"]
    override_env: str
    message: str
    risk: str
    source: str


class Eagle3Targets(_Strict):
    """The target ``model_type`` substrings a release range's EAGLE-3 accepts (``max_version`` None: every later)."""

    min_version: str
    max_version: str | None
    model_types: tuple[str, ...]
    source: str

    def covers(self, version: str) -> bool:
        wanted = parse_version(version)
        upper = parse_version(self.max_version) if self.max_version else None
        return parse_version(self.min_version) <= wanted and (upper is None or wanted < upper)


class EngineReleases(_Strict):
    engine: str
    rejects_unequal_vocab: bool
    refuses_len_above_kv: bool
    vocab_padding_accepted_from: str | None
    vocab_padding_source: str
    methods: tuple[MethodRange, ...]
    method_refusals: tuple[MethodRefusal, ...] = ()
    #: The engine's own name for each method (``--speculative-algorithm`` values, ``speculative_config.method``).
    algorithm_names: dict[str, str] = {}
    context_limit: ContextLimit | None = None
    eagle3_targets: tuple[Eagle3Targets, ...] = ()

    def eagle3_refusal(self, version: str | None, model_type: str) -> str | None:
        """The engine's refusal of an EAGLE-3 head on a ``model_type`` target, in its words, else None.

        >>> engine_releases("vllm").eagle3_refusal("0.10.1", "gemma2")[:65]
        "ValueError: Eagle3 is only supported for ['llama', 'qwen'] models"
        >>> engine_releases("vllm").eagle3_refusal("0.10.1", "qwen3") is None
        True
        """
        if not self.eagle3_targets:
            return None
        rule = (
            next((r for r in self.eagle3_targets if r.covers(version)), None)
            if version is not None
            else next((r for r in self.eagle3_targets if r.max_version is None), None)
        )
        if rule is None or any(kind in model_type for kind in rule.model_types):
            return None
        return (
            f"ValueError: Eagle3 is only supported for {list(rule.model_types)} models. "
            f"Got self.target_model_config.hf_text_config.model_type={model_type!r}"
        )

    def eagle3_source(self, version: str | None) -> str:
        hit = next((r for r in self.eagle3_targets if version is None or r.covers(version)), None)
        return hit.source if hit else ""


class MethodSupport(_Strict):
    supported: bool
    #: The first release that runs the method (None: no release of this engine does).
    first_release: str | None
    source: str
    #: What the release says when it refuses the method (None: no message recorded).
    engine_message: str | None = None
    engine_message_source: str | None = None


@data_cache
def _releases() -> dict[str, EngineReleases]:
    raw = read_data_file("engine_releases.json")
    try:
        return {e["engine"]: EngineReleases.model_validate(e) for e in raw["engines"]}
    except Exception as exc:  # pydantic ValidationError or a missing key
        raise CatalogError(f"engine_releases.json: {exc}") from exc


def engine_releases(engine: str) -> EngineReleases:
    """The release facts of ``engine`` (an id of ``planner.deployment.ENGINES``)."""
    found = _releases().get(engine)
    if found is None:
        raise InputError("engine", engine, f"one of {', '.join(_releases())}")
    return found


def method_support(engine: str, version: str | None, method: Method) -> MethodSupport:
    """Whether ``engine`` at ``version`` (None: the newest profiled release) runs speculative ``method``."""
    facts = engine_releases(engine)
    ranges = [r for r in facts.methods if r.method == method]
    if not ranges:
        return MethodSupport(supported=False, first_release=None, source=facts.vocab_padding_source)
    first = min(ranges, key=lambda r: parse_version(r.min_version))
    if version is None:  # the newest release: a range without an upper bound
        hit = next((r for r in ranges if r.max_version is None), None)
    else:
        hit = next((r for r in ranges if r.covers(version)), None)
    support = MethodSupport(supported=hit is not None, first_release=first.min_version, source=(hit or first).source)
    if support.supported or version is None:
        return support
    refusal = next((r for r in facts.method_refusals if r.covers(version, method)), None)
    if refusal is None:
        return support
    message = refusal.message.format(algorithm=facts.algorithm_names.get(method, method))
    return support.model_copy(update={"engine_message": message, "engine_message_source": refusal.source})
