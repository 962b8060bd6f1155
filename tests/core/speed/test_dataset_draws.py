"""ShareGPT-like draws keep the dataset's stated means and limits; the static estimate's prompt points do too."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner import facts
from planner.speed.serving_workload import ServingWorkload, matched_lengths, prompt_length_points
from planner.speed.steady_step import summed_points


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(20, 800))
def test_a_draw_keeps_the_stated_means_within_the_samplers_limits(seed, count):
    prompts, outputs = ServingWorkload.build(offline=True, dataset="sharegpt", num_prompts=count, seed=seed).lengths()
    # the stated means (202 and 179 tokens), to the rounding of one request's length
    assert 202 <= sum(prompts) / count <= 202 + 2 / count
    assert 179 <= sum(outputs) / count <= 179 + 2 / count
    assert all(4 <= p <= 1024 for p in prompts)
    assert all(o >= 4 and p + o <= 2048 for p, o in zip(prompts, outputs, strict=True))


def test_a_fixed_length_stays_fixed_and_the_other_keeps_its_mean():
    prompts, outputs = ServingWorkload.build(
        offline=True, dataset="sharegpt", num_prompts=300, prompt_tokens=1000, seed=1
    ).lengths()
    assert set(prompts) == {1000}
    assert sum(outputs) / 300 == pytest.approx(179, abs=0.01)


def test_matching_is_one_scale_factor_and_reaches_the_caps_at_most():
    raw = [1.0, 2.0, 4.0, 8.0]
    assert matched_lengths(raw, 30.0, 1, [100] * 4) == [8, 16, 32, 64]  # x8: the order and ratios kept
    assert matched_lengths(raw, 500.0, 1, [100] * 4) == [100] * 4  # unreachable: every length at its cap


def test_the_estimates_prompt_points_keep_the_mean_and_the_spread_of_a_draw():
    points = prompt_length_points("sharegpt", 202)
    prompts, _ = ServingWorkload.build(offline=True, dataset="sharegpt", num_prompts=20_000, seed=5).lengths()
    prompts = sorted(prompts)
    eighths = [sum(prompts[i * 2500 : (i + 1) * 2500]) / 2500 for i in range(8)]
    assert sum(points) / 8 == pytest.approx(202, abs=0.5)
    assert points == pytest.approx(eighths, rel=0.1)  # each eighth of a large draw, within sampling error
    # J prompts together: the mean adds up, the spread narrows
    two = summed_points(points, 2)
    assert sum(two) / 8 == pytest.approx(2 * 202, abs=1)
    assert two[-1] - two[0] < 2 * (points[-1] - points[0])


def test_the_drawn_lengths_follow_the_dataset_file_once_the_caches_are_cleared(tmp_path, monkeypatch):
    """The draws are kept per (dataset, count, seed); a changed dataset definition, once the data caches are
    cleared, gives its own draw."""
    workload = ServingWorkload.build(offline=True, dataset="sharegpt", num_prompts=200, seed=5)
    before = workload.lengths()
    data = json.loads((facts.REPO_ROOT / "data" / "serving_workloads.json").read_text())
    data["datasets"][0]["output"]["mean_tokens"] = 400
    (tmp_path / "serving_workloads.json").write_text(json.dumps(data))
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path))
    facts.clear_caches()
    try:
        _, outputs = workload.lengths()
        assert sum(outputs) / len(outputs) == pytest.approx(400, abs=0.01)
    finally:
        monkeypatch.delenv("PLANNER_DATA_DIR")
        facts.clear_caches()
    assert workload.lengths() == before
