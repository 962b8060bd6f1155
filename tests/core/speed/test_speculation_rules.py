"""The verdict rules: thresholds from data, each branch of the decision."""

from __future__ import annotations

import pytest

from planner.speed.policy import speculation_rules


@pytest.mark.parametrize(
    ("alpha", "speedup", "verdict"),
    [
        (0.80, 2.00, "recommend"),
        (0.65, 1.30, "recommend"),  # both bounds inclusive (docs/speculation-policy.md)
        (0.64, 2.00, "enable"),  # pays but α short of 0.65
        (0.80, 1.20, "enable"),
        (0.80, 1.05, "disable"),  # enable needs > 1.05
        (0.54, 3.00, "disable"),  # the default policy: disable below 55% acceptance
    ],
)
def test_decide(alpha, speedup, verdict):
    decided, reason = speculation_rules().verdict.decide(alpha=alpha, speedup_at_optimal_k=speedup)
    assert decided == verdict
    assert reason


def test_rules_carry_their_source_and_k_range():
    rules = speculation_rules()
    assert "default policy" in rules.verdict.source and "https://" in rules.verdict.source
    assert list(rules.k_search.ks) == list(range(1, 17))
    assert rules.default_workload.batch_size >= 1
