"""Start-up log parsing on the formats engines print (fixtures and their public sources: tests/fixtures/engine_logs)."""

from __future__ import annotations

import pytest

from planner.errors import InputError
from planner.validation.engine_log import parse_engine_log
from tests.conftest import ENGINE_LOGS as LOGS

GIB = 2**30


def facts(name: str):
    return parse_engine_log((LOGS / name).read_text())


def gib(value: int | None) -> float | None:
    return None if value is None else round(value / GIB, 2)


def test_vllm_v0_profiling_summary():
    # https://github.com/vllm-project/vllm/issues/12330 (A100 40GB, Llama-3-8B), values as logged there
    f = facts("vllm-v0-12330-a100-40gb.log")
    assert f.engine == "vllm-v0"
    assert gib(f.gpu_memory_total_bytes) == 39.50 and f.gpu_memory_utilization == 0.90
    assert gib(f.requested_memory_bytes) == 35.55
    assert gib(f.weights_bytes) == 14.96 and gib(f.non_torch_bytes) == 0.10
    assert gib(f.activation_peak_bytes) == 9.37 and gib(f.kv_cache_bytes) == 11.12
    assert f.num_gpu_blocks == 5691 and f.kv_cache_tokens == 5691 * 16
    assert f.max_concurrency == 11.12 and f.concurrency_len == 8192 and f.max_model_len == 8192
    assert "the rest of the memory reserved for KV Cache" in f.evidence["kv_cache_bytes"]


def test_vllm_v0_key_value_results_line():
    # data/calibration/vllm-kv-cases.csv row vllm10517-3090-20000 (https://github.com/vllm-project/vllm/issues/10517):
    # weights "GB" are GiB, activation = peak - weights
    f = facts("vllm-v0-10517-rtx3090.log")
    assert f.engine == "vllm-v0"
    assert f.weights_bytes == round(14.9888 * GIB)
    assert gib(f.gpu_memory_total_bytes) == 23.58 and gib(f.non_torch_bytes) == 0.35
    assert gib(f.kv_cache_bytes) == 3.81 and f.kv_cache_tokens == 1952 * 16
    assert gib(f.activation_peak_bytes) == pytest.approx(17.06 - 14.9888, abs=0.01)  # the row's "~2.07 GiB"
    assert f.max_concurrency == 1.56 and f.max_model_len == 20000
    assert any("GiB" in n for n in f.notes)


def test_vllm_v0_capacity_error():
    # data/calibration/vllm-kv-cases.csv row vllm13061-r1-distill-qwen14b-2x4090
    f = facts("vllm-v0-13061-rtx4090-tp2-error.log")
    assert f.kv_cache_tokens == 81536 and f.max_model_len == 131072
    assert f.weights_bytes == round(13.9476 * GIB)


def test_vllm_v1_019_profiling_lines():
    # data/calibration/vllm-kv-cases.csv row llmd-llama31-8b-tp1-16k (vLLM 0.19.0)
    f = facts("vllm-v1-019-llmd-llama31-8b-16k.log")
    assert f.engine == "vllm-v1"
    assert f.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert gib(f.gpu_memory_total_bytes) == 79.19 and gib(f.free_memory_at_start_bytes) == 78.68
    assert f.gpu_memory_utilization == 0.95 and gib(f.requested_memory_bytes) == 75.23
    assert gib(f.weights_bytes) == 14.99 and gib(f.activation_peak_bytes) == 1.89
    assert gib(f.non_torch_bytes) == 0.25 and gib(f.cudagraph_bytes) == 0.84
    assert gib(f.kv_cache_bytes) == 58.11 and f.kv_cache_tokens == 476016
    assert f.max_concurrency == 29.05 and f.max_model_len == 16384
    assert f.cudagraph_profiling_enabled is False


def test_vllm_v1_free_memory_summary_line():
    # data/calibration/vllm-kv-cases.csv row doc-qwen25-7b-awq-16gb: the "Actual usage is ..." breakdown
    f = facts("vllm-v1-qwen25-7b-awq-16gb.log")
    assert gib(f.gpu_memory_total_bytes) == 15.99 and f.gpu_memory_utilization == 0.9
    assert gib(f.weights_bytes) == 5.29 and gib(f.activation_peak_bytes) == 1.04
    assert gib(f.non_torch_bytes) == 0.06 and gib(f.cudagraph_bytes) == 0.48
    assert gib(f.kv_cache_bytes) == 8.00 and f.kv_cache_tokens == 149712 and f.max_concurrency == 4.57


def test_vllm_v1_engine_config_line():
    # data/calibration/vllm-kv-cases.csv row armlp-dgxspark-mistral7b-gptq
    f = facts("vllm-v1-dgx-spark-mistral-gptq.log")
    assert f.engine_version == "0.11.0+582e4e37.nv25.11"
    assert f.model == "TheBloke/Mistral-7B-Instruct-v0.2-GPTQ" and f.quantization == "gptq"
    assert f.dtype == "float16" and f.tensor_parallel_size == 1 and f.enforce_eager is False
    assert gib(f.cudagraph_bytes) == -0.03 and gib(f.kv_cache_bytes) == 102.56
    assert f.kv_cache_tokens == 840160 and f.max_model_len == 32768


def test_vllm_v1_speculative_config():
    # data/calibration/vllm-kv-cases.csv row doc-5070ti-qwen3-8b-awq-eagle3-v030
    f = facts("vllm-v1-030-qwen3-8b-awq-eagle3.log")
    assert f.speculative_method == "eagle3" and f.num_speculative_tokens == 3
    assert f.kv_cache_tokens == 23024 and gib(f.kv_cache_bytes) == 3.25


def test_sglang_lines():
    # data/calibration/vllm-kv-cases.csv rows vllm21348-qwen3-235b-fp8-tp4-sglang and sglang12421-qwen3-30b-a3b-tp4
    f = facts("sglang-21348-qwen3-235b-fp8-tp4.log")
    assert f.engine == "sglang" and f.kv_cache_tokens == 367404
    assert gib(f.kv_cache_bytes) == pytest.approx(16.46)  # K + V, "GB" read as GiB
    g = facts("sglang-12421-qwen3-30b-a3b-tp4.log")
    assert gib(g.weights_bytes) == 14.31 and g.kv_cache_tokens == 5874221 and gib(g.kv_cache_bytes) == 134.46
    assert g.dtype == "bfloat16"


def test_tensorrt_llm_lines():
    # the example log of TensorRT-LLM's memory reference (docs/source/reference/memory.md,
    # https://github.com/NVIDIA/TensorRT-LLM/blob/main/docs/source/reference/memory.md)
    f = facts("trtllm-reference-memory-doc.log")
    assert f.engine == "trtllm"
    assert gib(f.gpu_memory_total_bytes) == 79.10 and gib(f.kv_cache_bytes) == 63.44 and f.kv_cache_tokens == 259840


def test_every_fixture_yields_its_key_facts():
    for path in sorted(LOGS.glob("*.log")):
        f = parse_engine_log(path.read_bytes())
        assert f.engine is not None, path.name
        assert f.kv_cache_tokens or f.kv_cache_bytes, path.name


def test_rank_names_give_tp_and_negative_budgets_are_flagged():
    text = (
        "(Worker_TP0 pid=1) INFO Available KV cache memory: -0.41 GiB\n"
        "(Worker_TP1 pid=2) INFO Available KV cache memory: -0.41 GiB\n"
    )
    f = parse_engine_log(text)
    assert f.tensor_parallel_size == 2 and f.kv_cache_bytes < 0
    assert any("negative" in n for n in f.notes)


@pytest.mark.parametrize("bad", ["", "   \n", b""])
def test_empty_input_is_an_input_error(bad):
    with pytest.raises(InputError) as err:
        parse_engine_log(bad)
    assert err.value.field == "log"


def test_unrelated_text_finds_nothing():
    f = parse_engine_log("hello world\nnothing to see")
    assert f.engine is None and f.evidence == {}
