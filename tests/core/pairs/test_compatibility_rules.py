"""data/compatibility_rules.json: valid, sourced, one rule set per engine the deployment knows."""

from __future__ import annotations

import pytest

from planner.deployment import ENGINES
from planner.errors import InputError
from planner.pairs.rules import load_rules


def test_every_engine_has_a_sourced_rule():
    rules = load_rules()
    assert {r.id for r in rules.engines} == set(ENGINES)
    for rule in rules.engines:
        assert rule.source and all(rule.source)
    assert all(w.source for w in rules.padding_workarounds)
    assert all(o.source for o in rules.other_runtimes)


def test_ratio_thresholds_are_ordered():
    r = load_rules().parameter_ratio
    assert r.fail_below < r.band_low < r.band_high < r.fail_above
    assert (r.band_low, r.band_high, r.fail_below, r.fail_above) == (10, 50, 5, 200)  # docs/compatibility.md


def test_unknown_engine_names_the_allowed_ones():
    with pytest.raises(InputError, match="vllm, vllm-v0, sglang, trtllm, hf"):
        load_rules().engine("tgi")
