"""The speedup a measured run is compared with is predicted as that run measures it."""

from __future__ import annotations

import pytest

from bench.validate_gpu import _config
from planner.catalog.config_import import model_from_config
from planner.catalog.lookup import get_gpu
from planner.deployment import Deployment
from planner.measure.prediction import OFFLINE_BATCH, TPOT_RATIO, predict
from planner.speed.simulate import offline_batch_speedup

TARGET, DRAFT = "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.2-1B"


def _predict(engine: str, batch: int, offline_batch: bool):
    return predict(
        target_config=_config(TARGET, tiny=False), target_name=TARGET, draft_config=_config(DRAFT, tiny=False),
        draft_name=DRAFT, gpu=get_gpu("h100-sxm-80gb"), dtype="bf16", draft_dtype="bf16", k=4, max_model_len=1024,
        prompt_tokens=300, output_tokens=256, mean_accepted_len=3.0, engine=engine, batch_size=batch,
        offline_batch=offline_batch,
    )  # fmt: skip


def test_the_transformers_loop_is_compared_on_its_decode_tpot_ratio():
    speed = _predict("hf", 1, False).speed
    assert speed is not None and speed.speedup_measure == TPOT_RATIO
    assert speed.speedup == pytest.approx(speed.baseline_tpot_s / speed.spec_tpot_s)


def test_the_vllm_backend_is_compared_on_one_offline_batch_prefill_included():
    prediction = _predict("vllm", 16, True)
    speed = prediction.speed
    assert speed is not None and speed.speedup_measure == OFFLINE_BATCH
    assert any(OFFLINE_BATCH in a for a in prediction.assumptions)
    dep = Deployment.build(
        target=model_from_config(_config(TARGET, tiny=False), model_id=TARGET),
        draft=model_from_config(_config(DRAFT, tiny=False), model_id=DRAFT), gpu=get_gpu("h100-sxm-80gb"),
        gpu_count=1, tp=1, engine="vllm", dtype="bf16", draft_dtype="bf16", max_model_len=1024,
        num_speculative_tokens=4, hf_batch_size=1,
    )  # fmt: skip
    expected, _ = offline_batch_speedup(dep, 16, 300, 256, alpha=speed.alpha, k=4)
    assert speed.speedup == pytest.approx(expected)
    # the batch's prefill runs at the same cost in both arms: below the decode steps' ratio
    assert speed.speedup < speed.baseline_tpot_s / speed.spec_tpot_s
