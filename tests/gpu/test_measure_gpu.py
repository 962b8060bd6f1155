"""The harness on a real CUDA GPU (skipped without one): NVML timeline, torch peaks, the hf prediction."""

from __future__ import annotations

import json

import pytest
import torch

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.torch,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

TINY = {
    "model_type": "llama",
    "vocab_size": 2048,
    "hidden_size": 256,
    "intermediate_size": 512,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 1024,
}


def test_measure_on_cuda_samples_memory_and_predicts(tmp_path, tmp_store):
    from planner.measure.harness import MeasureOptions, measure

    (tmp_path / "t.json").write_text(json.dumps(TINY))
    record = measure(
        MeasureOptions(
            target=str(tmp_path / "t.json"),
            draft=str(tmp_path / "t.json"),
            random_weights=True,
            device="cuda",
            dtype="bf16",
            k=4,
            max_new_tokens=32,
            prompts_per_task=1,
            out=str(tmp_path),
        )
    )
    assert record.status == "ok" and record.alpha == 1.0 and record.mean_accepted_len == 5.0
    assert record.memory.torch.torch_max_allocated_bytes > record.memory.target_weights_bytes
    if record.nvml_available:
        assert record.nvml.samples and record.peak_memory_bytes > 0
    else:
        assert record.nvml.reason.startswith("NVML unavailable")
