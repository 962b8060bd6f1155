"""Weight bytes per precision, whole model and per GPU, against published sizes and engine logs."""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_model, get_weight_format, list_weight_formats
from planner.engines.components import rope_cache_bytes
from planner.errors import InputError
from planner.model.architecture import architecture_from_config
from planner.model.param_count import count_parameters
from planner.model.weight_bytes import pp_stage_layers, stage_weight_bytes, weight_bytes, weight_bytes_per_gpu
from planner.units import GB, GIB


def test_published_sizes_in_bf16():
    # 2 bytes x the exact counts: Llama-3.1-70B ~141 GB (131.4 GiB), "70B" model card
    # (https://huggingface.co/meta-llama/Llama-3.1-70B); Llama-3.2-3B ~6.4 GB ("3.21B", its model card).
    big = weight_bytes(get_model("Llama-3.1-70B").architecture, get_weight_format("bf16")).total_bytes
    assert big == 2 * 70_553_706_496
    assert round(big / GB) == 141 and round(big / GIB, 1) == 131.4
    small = weight_bytes(get_model("Llama-3.2-3B").architecture, get_weight_format("bf16")).total_bytes
    assert round(small / GB, 1) == 6.4


@pytest.mark.parametrize("fmt", ["fp32", "bf16", "fp16"])
def test_unquantized_formats_are_params_times_bytes(fmt):
    arch = get_model("Qwen2.5-7B").architecture
    per = {"fp32": 4, "bf16": 2, "fp16": 2}[fmt]
    assert weight_bytes(arch, get_weight_format(fmt)).total_bytes == per * count_parameters(arch).total_params


def test_quantized_linear_layouts_match_vllm_tensor_shapes():
    # One 4096 x 4096 linear (plus nothing else): shapes from vLLM awq.py / gptq.py create_weights.
    cfg = {
        "model_type": "llama",
        "num_hidden_layers": 1,
        "hidden_size": 4096,
        "intermediate_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "vocab_size": 8,
    }
    arch = architecture_from_config(cfg)
    linears = 7 * 4096 * 4096  # q, k, v, o, gate, up, down
    unquant = (2 * 8 * 4096 + 3 * 4096) * 2  # embedding + lm_head + 3 norms, fp16
    awq = 4096 * 4096 // 2 + (4096 // 128) * 4096 * 2 + (4096 // 128) * (4096 // 8) * 4
    assert weight_bytes(arch, get_weight_format("int4-awq")).total_bytes == 7 * awq + unquant
    gptq = awq + 4096 * 4  # + g_idx int32 [in]
    assert weight_bytes(arch, get_weight_format("int4-gptq")).total_bytes == 7 * gptq + unquant
    bits = weight_bytes(arch, get_weight_format("int4-gptq")).bits_per_quantized_weight
    assert bits == pytest.approx(4 + 16 / 128 + 4 / 128 + 32 / 4096)  # ~4.16 bits (vLLM gptq.py create_weights)
    nvfp4 = weight_bytes(arch, get_weight_format("nvfp4")).bits_per_quantized_weight
    assert nvfp4 == pytest.approx(4.5, abs=0.001)
    # vLLM runs MXFP4 for MoE experts only: a dense model's linear layers stay 16-bit
    assert weight_bytes(arch, get_weight_format("mxfp4")).bits_per_quantized_weight is None
    fp8 = weight_bytes(arch, get_weight_format("fp8"))
    assert fp8.total_bytes == linears + 7 * 4096 * 4 + (2 * 8 * 4096 + 3 * 4096) * 2
    assert "lm_head" in fp8.unquantized and "embeddings" in fp8.unquantized


def test_runtime_fp8_matches_the_vllm_log():
    # llmd-llama31-8b-runtime-fp8 (data/calibration/vllm-kv-cases.csv, llm-d-planner PR #205):
    # --quantization fp8 logged 8.49 GiB of weights.
    n = weight_bytes(get_model("Llama-3.1-8B").architecture, get_weight_format("fp8")).total_bytes
    assert n / GIB == pytest.approx(8.49, rel=0.01)


def test_every_format_orders_sensibly():
    arch = get_model("Llama-3.1-8B").architecture
    sizes = {f.id: weight_bytes(arch, f).total_bytes for f in list_weight_formats()}
    assert sizes["fp32"] > sizes["bf16"] == sizes["fp16"] > sizes["fp8"] > sizes["nvfp4"] > sizes["int4-awq"]


def test_tensor_parallel_shards_and_replicates():
    arch = get_model("Llama-3.1-70B").architecture
    bf16 = get_weight_format("bf16")
    total = weight_bytes(arch, bf16).total_bytes
    per_gpu = weight_bytes_per_gpu(arch, bf16, tp=8)
    # Only norms are replicated, so a rank holds 1/8 of everything else.
    norms = count_parameters(arch).components["norms"] * 2
    assert per_gpu == (total - norms) // 8 + norms
    # Qwen2.5-7B has 4 KV heads: at TP 4 k/v are split, beyond that they would be replicated.
    qwen = get_model("Qwen2.5-0.5B").architecture  # 2 KV heads, 14 query heads
    assert weight_bytes_per_gpu(qwen, bf16, tp=2) < weight_bytes(qwen, bf16).total_bytes


def test_pipeline_stages_follow_vllm_split():
    assert [len(r) for r in pp_stage_layers(80, 4)] == [20, 20, 20, 20]
    assert [len(r) for r in pp_stage_layers(10, 4)] == [2, 3, 3, 2]
    with pytest.raises(InputError):
        pp_stage_layers(4, 5)
    arch = get_model("Llama-3.1-8B").architecture
    bf16 = get_weight_format("bf16")
    stages = stage_weight_bytes(arch, bf16, pp=2)
    assert sum(stages) == weight_bytes(arch, bf16).total_bytes  # untied: every tensor on one stage
    # llmd-llama31-8b-pp2 logged 7.51 GiB on rank 0 (embedding + 16 layers).
    assert stages[0] / GIB == pytest.approx(7.51, rel=0.01)
    tied = get_model("Llama-3.2-1B").architecture
    tied_stages = stage_weight_bytes(tied, bf16, pp=2)
    assert sum(tied_stages) > weight_bytes(tied, bf16).total_bytes  # tied embedding on both ends


def _vision_bytes(model_id, fmt, **kw):
    spec = get_model(model_id)
    return weight_bytes(spec.architecture, get_weight_format(fmt), spec.config, **kw)


def test_a_quantized_multimodal_checkpoint_keeps_its_vision_encoder_in_16_bits():
    # RedHatAI's w8a8 card: "Only weights and activations of the linear operators within transformers blocks are
    # quantized", so the Pixtral encoder and projector stay bf16 while the decoder's linears become int8.
    spec = get_model("mistralai/Mistral-Small-3.1-24B-Instruct-2503")
    vision_params = count_parameters(spec.architecture, spec.config).components["vision"]
    int8 = _vision_bytes(spec.id, "int8")
    assert int8.components["vision"] == 2 * vision_params == _vision_bytes(spec.id, "bf16").components["vision"]
    assert "vision" in int8.unquantized
    assert int8.components["mlp"] < _vision_bytes(spec.id, "bf16").components["mlp"] * 0.51


def test_w8a8_mistral_small_matches_the_vllm_logs():
    # llmd019-mistral-small-3.1-24b-w8a8-tp1/-tp2 (data/calibration/vllm_v0190_llmd_logs.csv): vLLM 0.19.0 logged
    # 'weights memory: 24.07GiB' at TP 1 and 12.11 GiB per rank at TP 2; the text model alone is ~0.8 GiB short.
    spec = get_model("mistralai/Mistral-Small-3.1-24B-Instruct-2503")
    int8 = get_weight_format("int8")
    tp1 = weight_bytes_per_gpu(spec.architecture, int8, config=spec.config)
    tp2 = weight_bytes_per_gpu(spec.architecture, int8, tp=2, config=spec.config)
    assert tp1 / GIB == pytest.approx(24.07, rel=0.005)
    assert tp2 / GIB == pytest.approx(12.11, rel=0.01)
    assert weight_bytes_per_gpu(spec.architecture, int8) / GIB < 23.3  # without the config: the text model only


def test_every_pipeline_stage_holds_the_vision_encoder():
    # vLLM's multimodal model classes build the encoder unconditionally (vllm/model_executor/models/mistral3.py).
    spec = get_model("mistralai/Mistral-Small-3.1-24B-Instruct-2503")
    bf16 = get_weight_format("bf16")
    vision = _vision_bytes(spec.id, "bf16").components["vision"]
    stages = stage_weight_bytes(spec.architecture, bf16, pp=2, config=spec.config)
    assert sum(stages) == _vision_bytes(spec.id, "bf16").total_bytes + vision  # one more copy than stages - 1


@pytest.mark.torch
def test_mxfp4_quantizes_the_moe_experts_and_leaves_the_rest_in_bf16():
    # gpt-oss-20b: experts in MXFP4 (4-bit E2M1 values + one E8M0 scale per 32 = 4.25 bits), attention, router,
    # embeddings and LM head in bf16 (the checkpoint's modules_to_not_convert; vLLM's Mxfp4Config).
    spec = get_model("openai/gpt-oss-20b")
    arch, mxfp4 = spec.architecture, get_weight_format("mxfp4")
    plan = weight_bytes(arch, mxfp4, spec.config)
    # 4-bit values plus the E8M0 scales held twice (loaded and swizzled copies in vLLM's Triton MoE path)
    assert plan.bits_per_quantized_weight == pytest.approx(4 + 2 * 8 / 32)
    counts = count_parameters(arch, spec.config).components
    expert_matrices = 24 * 32 * (2880 * 5760 + 2880 * 2880)  # gate_up and down projections of 32 experts
    expert_biases = counts["experts"] - expert_matrices
    assert plan.components["experts"] == expert_matrices // 2 + 2 * expert_matrices // 32 + expert_biases * 2
    assert plan.components["attention"] == counts["attention"] * 2
    assert plan.components["embedding"] == plan.components["lm_head"] == 201088 * 2880 * 2
    # vLLM 0.19.0 logged 'Model loading took 13.64 GiB' at TP1 and 7.01 GiB at TP2 (llm-d-planner logs); at TP2 each
    # rank's expert width is padded from 1,440 to 1,472 (round_up(., 64) in vLLM's Mxfp4MoEMethod.create_weights)
    tp1 = weight_bytes_per_gpu(arch, mxfp4, config=spec.config)
    tp2 = weight_bytes_per_gpu(arch, mxfp4, tp=2, config=spec.config)
    assert tp1 / GIB == pytest.approx(13.64, rel=0.025)
    assert tp2 / GIB == pytest.approx(7.01, rel=0.035)
    expert_bytes_tp2 = (expert_matrices // 2 + 2 * expert_matrices // 32) / 2
    assert tp2 - weight_bytes_per_gpu(arch, get_weight_format("bf16"), tp=2, config=spec.config) == pytest.approx(
        expert_bytes_tp2 * 1472 / 1440 - expert_matrices, rel=1e-4
    )


@pytest.mark.torch
def test_llama4_scout_weights_match_the_vllm_log_with_vision_tower_and_rope_cache():
    # llmd019-llama-4-scout-tp4: 'weights memory: 53.12GiB' per GPU at TP4: the language model, the vision tower
    # and projector (Llama4ForConditionalGeneration) split over 4 ranks, plus vLLM's 10M-position rotary cache.
    spec = get_model("meta-llama/Llama-4-Scout-17B-16E-Instruct")
    bf16 = get_weight_format("bf16")
    per_gpu = weight_bytes_per_gpu(spec.architecture, bf16, tp=4, config=spec.config)
    rope = rope_cache_bytes(spec.architecture, spec.config, 2)
    assert rope == 10_485_760 * 128 * 2
    assert (per_gpu + rope) / GIB == pytest.approx(53.12, rel=0.005)
