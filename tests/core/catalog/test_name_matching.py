"""Names logs print map to catalog entries (models with their implied quantization, GPUs)."""

from __future__ import annotations

import pytest

from planner.catalog.name_matching import match_gpu, match_model


@pytest.mark.parametrize(
    ("name", "model", "fmt"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B", None),
        ("Qwen/Qwen3-14B-AWQ", "Qwen/Qwen3-14B", "int4-awq"),
        ("RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic", "meta-llama/Llama-3.3-70B-Instruct", "fp8"),
        ("RedHatAI/Qwen2.5-7B-Instruct-quantized.w8a8", "Qwen/Qwen2.5-7B", "int8"),
        ("google/gemma-2-9b-it", "google/gemma-2-9b", None),
        ("google/gemma-3-4b-it", "google/gemma-3-4b-it", None),
        ("google/gemma-3-12b-it", "google/gemma-3-12b-it", None),
        (
            "RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-quantized.w8a8",
            "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
            "int8",
        ),
    ],
)
def test_models(name, model, fmt):
    match = match_model(name)
    assert match is not None and match.model.id == model and match.weight_format == fmt


def test_unknown_model_is_none():
    assert match_model("acme/not-a-model-7B") is None


@pytest.mark.parametrize(
    ("name", "gpu"),
    [
        ("NVIDIA H100 80GB HBM3", "h100-sxm-80gb"),
        ("NVIDIA H100 NVL", "h100-nvl-94gb"),
        ("NVIDIA L40S", "l40s-48gb"),
        ("NVIDIA B200", "b200-180gb"),
        ("NVIDIA GB200", "gb200-186gb"),
        ("NVIDIA B300 SXM6 AC", "b300-288gb"),
        ("NVIDIA GB300", "gb300-288gb"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000-96gb"),
        ("NVIDIA L4", "l4-24gb"),
        ("NVIDIA A100-SXM4-40GB", "a100-sxm-40gb"),
        ("NVIDIA GeForce RTX 4090", "rtx-4090-24gb"),
        ("AMD Instinct MI300X", "mi300x-192gb"),
        ("Tesla T4", "t4-16gb"),
    ],
)
def test_gpus(name, gpu):
    assert match_gpu(name).id == gpu


def test_unknown_gpu_is_none():
    assert match_gpu("NVIDIA DGX Spark GB10") is None
