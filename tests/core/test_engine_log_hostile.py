"""Engine-log parsing stays linear on adversarial input: bounded patterns, a cap per line and per log."""

from __future__ import annotations

import re._parser as re_parser
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.errors import InputError
from planner.validation import engine_log
from planner.validation.engine_log import _RULES, MAX_LINE_CHARS, MAX_LOG_CHARS, parse_engine_log

#: The literal text the rules look for, plus characters that continue their patterns without finishing them.
FRAGMENTS = [*sorted({rule.needle for rule in _RULES}), "9", "1.5 ", "GiB", "{", "(", "'", "=", " ", "\t", "x"]


def test_every_pattern_has_a_bounded_width():
    """No unbounded quantifier: a match (and the text before its needle) has a fixed maximum length."""
    for rule in _RULES:
        _low, high = re_parser.parse(rule.pattern.pattern).getwidth()
        assert high < 10_000, rule.pattern.pattern
        assert rule.before <= high and len(rule.needle) >= 2


@st.composite
def adversarial_unit(draw) -> str:
    """A piece that, repeated, nearly matches some patterns everywhere (sometimes broken into lines)."""
    parts = draw(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=6))
    repeat = draw(st.integers(1, 40))
    newline = draw(st.sampled_from(["", "\n"]))
    return "".join(parts) * repeat + newline


def _sized(unit: str, chars: int) -> str:
    return (unit * (chars // len(unit) + 1))[:chars] + "\nx"


def _match_calls(text: str, monkeypatch) -> int:
    calls = 0
    original = engine_log._match_at

    def counting(*args):
        nonlocal calls
        calls += 1
        return original(*args)

    monkeypatch.setattr(engine_log, "_match_at", counting)
    parse_engine_log(text)
    monkeypatch.setattr(engine_log, "_match_at", original)
    return calls


@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(unit=adversarial_unit())
def test_regex_work_grows_linearly(unit, monkeypatch):
    """Each regex attempt is bounded, so counting attempts measures the work: 4x the text, at most ~4x the work."""
    small, large = _match_calls(_sized(unit, 20_000), monkeypatch), _match_calls(_sized(unit, 80_000), monkeypatch)
    assert large <= 4 * small + 4 * len(_RULES)


def _cpu_s(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        parse_engine_log(text)
        best = min(best, time.process_time() - start)
    return best


@settings(max_examples=6, deadline=None, derandomize=True)
@given(unit=adversarial_unit())
def test_parse_time_grows_linearly(unit):
    """Best-of-three CPU time: 4x the input costs far below the 16x a quadratic parser would (slack for noise)."""
    small, large = _cpu_s(_sized(unit, 25_000)), _cpu_s(_sized(unit, 100_000))
    assert large < 8 * small + 0.05


@pytest.mark.parametrize(
    "text",
    [
        "speculative_config=(" * 2_000,
        "'speculative_config': {" * 2_000,
        "Memory profiling results: " * 2_000,
        "INFO " + "9" * 8_000 + " for peak activation",
    ],
)
def test_the_reported_shapes_parse_to_nothing_quickly(text):
    facts = parse_engine_log(text)
    assert facts.evidence == {} or set(facts.evidence) <= {"gpu_memory_utilization"}


def test_long_lines_are_cut_and_said_so():
    line = "x" * (MAX_LINE_CHARS + 10) + " Available KV cache memory: 10.00 GiB"
    facts = parse_engine_log(line + "\nAvailable KV cache memory: 2.00 GiB\n")
    assert facts.kv_cache_bytes == 2 * 2**30  # the first line's fact sits past the cut
    assert any("longer than" in note for note in facts.notes)


def test_the_whole_input_is_capped():
    with pytest.raises(InputError) as err:
        parse_engine_log("a" * (MAX_LOG_CHARS + 1))
    assert err.value.field == "log" and "5,000,000" in str(err.value)
    with pytest.raises(InputError):
        parse_engine_log(b"a" * (4 * MAX_LOG_CHARS + 1))


def test_a_fact_after_many_near_misses_is_still_found():
    text = "Memory profiling results: " * 500 + "\n" + "model weights take 14.96GiB; x\n"
    assert parse_engine_log(text).weights_bytes == round(14.96 * 2**30)
