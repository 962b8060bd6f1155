"""The verdict rules: thresholds from data, each branch of the decision, advisories in the user's convention."""

from __future__ import annotations

import pytest

from planner.acceptance_math import draft_acceptance_rate, expected_tokens_per_step
from planner.speed.policy import speculation_rules


@pytest.mark.parametrize(
    ("speedup", "verdict"),
    [
        (2.00, "recommend"),
        (1.30, "recommend"),  # the bound is inclusive
        (1.20, "enable"),
        (1.05, "disable"),  # enable needs > 1.05
        (0.80, "disable"),
    ],
)
def test_decide_follows_the_speedup(speedup, verdict):
    decided, reason = speculation_rules().verdict.decide(speedup=speedup, k=4, at="batch 8")
    assert decided == verdict
    assert "K = 4" in reason and "batch 8" in reason


@pytest.mark.parametrize(
    ("convention", "symbol", "convert"),
    [
        ("alpha", "α", lambda a, k: a),
        ("mean_accepted_len", "τ", expected_tokens_per_step),
        ("draft_acceptance_rate", "ρ", draft_acceptance_rate),
    ],
)
def test_advisories_warn_in_the_users_convention(convention, symbol, convert):
    advisory = speculation_rules().advisory
    [note] = advisory.warnings(alpha=0.5, k=3, convention=convention)
    assert note.startswith(f"{symbol} = {convert(0.5, 3):.3f}")
    assert f"{symbol} = {convert(advisory.warn_below_alpha, 3):.3f} at K = 3" in note
    [aim] = advisory.warnings(alpha=0.6, k=3, convention=convention)
    assert "aim above" in aim
    assert advisory.warnings(alpha=0.9, k=3, convention=convention) == []


def test_rules_carry_their_source_and_k_range():
    rules = speculation_rules()
    assert "predicted speedup" in rules.verdict.source and "Leviathan" in rules.advisory.source
    assert list(rules.k_search.ks) == list(range(1, 17))
    assert rules.default_workload.batch_size >= 1
