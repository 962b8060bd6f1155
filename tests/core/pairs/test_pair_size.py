"""Exact pair sizes: the ratio rests on exact parameter counts."""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_model
from planner.pairs.size_ratio import active_parameter_ratio, param_count, parameter_ratio


def test_ratio_is_the_quotient_of_exact_counts():
    # 70,553,706,496 and 1,235,814,400 parameters (tests/core/test_param_count.py, transformers meta device).
    assert param_count(get_model("Llama-3.2-1B")).total_params == 1_235_814_400
    assert parameter_ratio(get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B")) == 70_553_706_496 / 1_235_814_400


def test_moe_active_ratio_differs_from_the_total_ratio():
    target, draft = get_model("Qwen3-235B-A22B"), get_model("Qwen3-0.6B")
    assert active_parameter_ratio(target, draft) < parameter_ratio(target, draft) / 5
    assert parameter_ratio(draft, target) == pytest.approx(1 / parameter_ratio(target, draft))
