"""Dataset draws (ShareGPT-like lognormal, MLPerf's measured set) keep their stated means and limits; the static
estimate's prompt points do too."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner import facts
from planner.errors import CatalogError, InputError
from planner.speed.serving_workload import (
    ServingWorkload,
    datasets,
    matched_lengths,
    measured_lengths,
    prompt_length_points,
)
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


def test_a_stated_output_mean_scales_the_outputs_alone_and_needs_a_drawn_dataset():
    stated = ServingWorkload.build(offline=True, dataset="mlperf-openorca", num_prompts=400, seed=3)
    scaled = stated.model_copy(update={"output_mean_tokens": 250.5})
    (prompts, outputs), (prompts_scaled, outputs_scaled) = stated.lengths(), scaled.lengths()
    assert prompts_scaled == prompts  # the prompts are the draw's own
    assert sum(outputs) / 400 == pytest.approx(294.45, abs=0.01)
    assert sum(outputs_scaled) / 400 == pytest.approx(250.5, abs=0.01)
    # the same requests, shorter: one factor over the draw (up to rounding and the 1,024-token cap)
    assert all(s <= o for s, o in zip(outputs_scaled, outputs, strict=True))
    assert "outputs scaled to a mean of 250.5 tokens" in scaled.describe()
    for fields in ({"dataset": "fixed"}, {"dataset": "sharegpt", "output_tokens": 100}):
        with pytest.raises(InputError, match="output_mean_tokens"):
            ServingWorkload.build(offline=True, output_mean_tokens=200.0, **fields)


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
    before, points = workload.lengths(), prompt_length_points("sharegpt", 202)
    data = json.loads((facts.REPO_ROOT / "data" / "serving_workloads.json").read_text())
    data["datasets"][0]["output"]["mean_tokens"] = 400
    data["datasets"][0]["prompt"]["log_sigma"] = 0.1
    (tmp_path / "serving_workloads.json").write_text(json.dumps(data))
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path))
    facts.clear_caches()
    try:
        _, outputs = workload.lengths()
        assert sum(outputs) / len(outputs) == pytest.approx(400, abs=0.01)
        narrow = prompt_length_points("sharegpt", 202)  # the estimate's points follow the new spread too
        assert narrow[-1] - narrow[0] < (points[-1] - points[0]) / 4
    finally:
        monkeypatch.delenv("PLANNER_DATA_DIR")
        facts.clear_caches()
    assert workload.lengths() == before and prompt_length_points("sharegpt", 202) == points


def _measured_file() -> tuple[list[int], list[int]]:
    rows = (facts.REPO_ROOT / "data" / "request_lengths" / "mlperf-llama2-70b-openorca.csv").read_text().splitlines()
    pairs = [tuple(int(v) for v in row.split(",")) for row in rows[1:]]
    return [p for p, _ in pairs], [o for _, o in pairs]


def test_the_mlperf_set_states_its_own_file():
    prompts, outputs = _measured_file()
    spec = datasets()["mlperf-openorca"]
    assert len(prompts) == 24_576  # MLPerf's llama2-70b set
    assert spec.prompt.mean_tokens == pytest.approx(sum(prompts) / len(prompts), abs=0.005)
    assert max(prompts) <= spec.prompt.max_tokens and max(outputs) <= spec.output.max_tokens
    assert measured_lengths("mlperf-openorca") == (tuple(prompts), tuple(outputs))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.integers(50, 3000))
def test_a_draw_of_measured_lengths_keeps_the_stated_means_and_the_sets_limits(seed, count):
    prompts, outputs = ServingWorkload.build(
        offline=True, dataset="mlperf-openorca", num_prompts=count, seed=seed
    ).lengths()
    # the stated means, to a tenth of a token: the set's many equal lengths step up together as the scale grows
    assert 222.33 <= sum(prompts) / count <= 222.33 + 0.1
    assert 294.45 <= sum(outputs) / count <= 294.45 + 0.1
    assert all(1 <= p <= 1024 and 1 <= o <= 1024 for p, o in zip(prompts, outputs, strict=True))


def test_measured_lengths_are_drawn_from_the_file_with_its_shape():
    prompts, _ = _measured_file()
    drawn, _ = ServingWorkload.build(offline=True, dataset="mlperf-openorca", num_prompts=20_000, seed=3).lengths()
    ordered, mine = sorted(prompts), sorted(drawn)
    for q in (0.1, 0.5, 0.9):  # each quantile of the set, within sampling error
        assert mine[int(q * len(mine))] == pytest.approx(ordered[int(q * len(ordered))], rel=0.05)
    assert len(set(drawn) - set(prompts)) < len(set(drawn)) / 2  # the set's own lengths, scaled by about 1
    points = prompt_length_points("mlperf-openorca", 222)
    eighths = [sum(ordered[i * 3072 : (i + 1) * 3072]) / 3072 for i in range(8)]
    assert sum(points) / 8 == pytest.approx(222, abs=0.5) and points == pytest.approx(eighths, rel=0.05)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["prompt"].pop("log_sigma"), "a log_sigma for prompt and output, or a lengths_file"),
        (lambda d: d.update(lengths_file="request_lengths/x.csv"), "a lengths_file or log_sigma spreads, not both"),
    ],
)
def test_a_dataset_is_lognormal_or_measured_never_neither_or_both(tmp_path, monkeypatch, change, message):
    data = json.loads((facts.REPO_ROOT / "data" / "serving_workloads.json").read_text())
    change(data["datasets"][0])
    (tmp_path / "serving_workloads.json").write_text(json.dumps(data))
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path))
    facts.clear_caches()
    try:
        with pytest.raises(CatalogError, match=message):
            datasets()
    finally:
        monkeypatch.delenv("PLANNER_DATA_DIR")
        facts.clear_caches()


def test_a_missing_lengths_file_is_a_catalog_error_naming_it(tmp_path, monkeypatch):
    (tmp_path / "serving_workloads.json").write_text((facts.REPO_ROOT / "data" / "serving_workloads.json").read_text())
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path))
    facts.clear_caches()
    try:
        with pytest.raises(CatalogError, match=r"mlperf-llama2-70b-openorca\.csv of mlperf-openorca is missing"):
            ServingWorkload.build(offline=True, dataset="mlperf-openorca", num_prompts=10).lengths()
    finally:
        monkeypatch.delenv("PLANNER_DATA_DIR")
        facts.clear_caches()
