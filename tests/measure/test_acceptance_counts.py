"""Acceptance statistics from per-step counts: exact values, the engine conversions, and invariants."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.acceptance_math import expected_tokens_per_step
from planner.errors import InputError
from planner.measure.acceptance_counts import acceptance_stats, task_verdict, verdicts_by_task
from planner.speed.policy import speculation_rules


def test_exact_copy_counts_give_alpha_one_and_tau_k_plus_one():
    stats = acceptance_stats([4] * 10, k=4)
    assert stats.alpha == 1.0 and stats.alpha_from_tau == 1.0
    assert stats.mean_accepted_len == 5.0
    assert stats.acceptance_by_position == [1.0] * 4
    assert stats.draft_acceptance_rate == 1.0


def test_no_acceptance_gives_alpha_zero_and_tau_one():
    stats = acceptance_stats([0, 0, 0], k=5)
    assert stats.alpha == 0.0 and stats.mean_accepted_len == 1.0 and stats.alpha_from_tau == 0.0
    assert stats.accepted_count_histogram == [3, 0, 0, 0, 0, 0]


def test_vllm_style_counters():
    # the maintainer's example in https://github.com/vllm-project/vllm/issues/9565, as a prefix:
    # acceptance vector [1, 0, 1, 0] has an accepted prefix of 1 -> V1 counts 1 accepted of 4 drafted
    stats = acceptance_stats([1], k=4)
    assert stats.accepted_tokens == 1 and stats.drafted_tokens == 4
    assert stats.draft_acceptance_rate == 0.25 and stats.mean_accepted_len == 2.0


def test_empty_run_has_no_statistics():
    stats = acceptance_stats([], k=3)
    assert stats.steps == 0 and stats.alpha is None and stats.mean_accepted_len is None


@pytest.mark.parametrize("bad", [-1, 5, 1.5, True])
def test_counts_outside_zero_to_k_are_rejected(bad):
    with pytest.raises(InputError) as err:
        acceptance_stats([1, bad], k=4)
    assert err.value.field == "accepted_per_step"


@given(st.integers(1, 8).flatmap(lambda k: st.tuples(st.just(k), st.lists(st.integers(0, k), min_size=1))))
def test_invariants(case):
    k, counts = case
    stats = acceptance_stats(counts, k)
    # positions are non-increasing, τ = 1 + Σ per-position rates, α from τ reproduces τ
    assert all(a >= b for a, b in zip(stats.acceptance_by_position, stats.acceptance_by_position[1:], strict=False))
    assert stats.mean_accepted_len == pytest.approx(1 + sum(stats.acceptance_by_position))
    assert 0 <= stats.alpha <= 1 and 1 <= stats.mean_accepted_len <= k + 1
    assert expected_tokens_per_step(stats.alpha_from_tau, k) == pytest.approx(stats.mean_accepted_len, abs=1e-6)
    assert sum(stats.accepted_count_histogram) == len(counts)


def test_task_verdict_thresholds_come_from_the_rules_file():
    rules = speculation_rules().advisory
    k = 4
    # α = 0.5 -> disable; α = 0.6 -> enable; α = 0.7 -> recommend (10 steps each)
    low = task_verdict("chat", acceptance_stats([1] * 5 + [0] * 5, k), 2)
    mid = task_verdict("code", acceptance_stats([1] * 6 + [0] * 4, k), 2)
    high = task_verdict("summarisation", acceptance_stats([1] * 7 + [0] * 3, k), 2)
    assert (low.verdict, mid.verdict, high.verdict) == ("disable", "enable", "recommend")
    assert low.disable_below_alpha == rules.warn_below_alpha == 0.55
    assert high.recommend_min_alpha == rules.aim_above_alpha == 0.65


def test_random_weights_verdicts_are_labelled_not_meaningful():
    verdicts = verdicts_by_task({"chat": [0, 1], "code": [2, 2]}, {"chat": 1, "code": 1}, k=2, meaningful=False)
    assert set(verdicts) == {"chat", "code"}
    assert all(not v.meaningful and "not meaningful" in v.reason for v in verdicts.values())
