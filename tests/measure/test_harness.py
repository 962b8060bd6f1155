"""One measured job end to end on CPU: the record's figures, the prediction beside them, OOM as a data point."""

from __future__ import annotations

import json

import pytest
import torch

from planner.measure import harness
from planner.measure.harness import MeasureOptions, measure
from planner.measure.record import load_records
from tests.conftest import TINY_LLAMA

#: Whole measured jobs on CPU in torch.
pytestmark = [pytest.mark.torch, pytest.mark.slow]

TINY = TINY_LLAMA


@pytest.fixture
def configs(tmp_path, tmp_store):
    target = tmp_path / "tiny-target.json"
    draft = tmp_path / "tiny-draft.json"
    target.write_text(json.dumps(TINY))
    draft.write_text(json.dumps(TINY | {"num_hidden_layers": 1}))
    return target, draft, tmp_path / "measurements"


def _options(target, draft, out, **kw) -> MeasureOptions:
    fields = dict(
        target=str(target),
        draft=str(draft),
        random_weights=True,
        device="cpu",
        k=3,
        max_new_tokens=12,
        prompts_per_task=1,
        out=str(out),
    )
    return MeasureOptions(**(fields | kw))


def test_exact_copy_run_on_cpu(configs):
    target, _, out = configs
    record = measure(_options(target, target, out))
    assert record.status == "ok" and record.backend == "transformers"
    assert record.alpha == 1.0 and record.mean_accepted_len == 4.0
    assert record.acceptance_by_position == [1.0, 1.0, 1.0]
    assert record.outputs_match_baseline is True
    assert record.tokens_per_s > 0 and record.baseline_tokens_per_s > 0 and record.speedup > 0
    assert not record.nvml_available and record.nvml.reason.startswith("NVML unavailable")
    assert record.peak_memory_bytes is None  # CPU: no GPU memory to report
    assert record.predicted.applicable is False and record.predicted.reason == "no GPU: prediction not applicable"
    assert set(record.verdict_by_task) == {"chat", "code", "summarisation"}
    assert not record.acceptance_meaningful and all(not v.meaningful for v in record.verdict_by_task.values())
    assert record.target.name == "tiny-target" and len(record.prompts_sha256) == 64
    records, problems = load_records(out)
    assert problems == [] and [r.id for r in records] == [record.id]


def test_cpu_run_with_a_chosen_gpu_compares_weights_and_kv_exactly(configs):
    target, draft, out = configs
    record = measure(_options(target, draft, out, gpu="h100-sxm-80gb", save=False))
    assert record.predicted.applicable and record.predicted.gpu == "h100-sxm-80gb"
    # tensor bytes are device independent: the planner's weight arithmetic is exact here
    assert record.errors_frac["target_weights"] == 0.0
    assert record.errors_frac["draft_weights"] == 0.0
    # KV: the plan holds max_model_len + K tokens, the run's peak is within a few tokens of that
    assert abs(record.errors_frac["kv_cache"]) < 0.05
    # speed was predicted for an H100, measured on a CPU: not compared
    assert "speedup" not in record.errors_frac
    assert record.predicted.speed is not None and not record.predicted.speed_comparable


def test_out_of_memory_is_recorded_as_did_not_fit(configs, monkeypatch):
    target, draft, out = configs

    def oom(*args, **kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")

    monkeypatch.setattr(harness, "run_prompts", oom)
    record = measure(_options(target, draft, out))
    assert record.status == "did_not_fit"
    assert record.did_not_fit.stage == "generating"
    assert "Tried to allocate" in record.did_not_fit.message
    assert record.alpha is None and record.speedup is None
    records, _ = load_records(out)
    assert records[0].status == "did_not_fit"


def test_other_errors_are_not_swallowed(configs, monkeypatch):
    target, draft, out = configs

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(harness, "run_prompts", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        measure(_options(target, draft, out))
    assert not out.exists() or not list(out.glob("*.json"))
