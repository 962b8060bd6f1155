"""KV bytes per token equal the bytes of real cache tensors from a forward pass of small models
with the same attention geometry (layer kinds, KV heads, head_dim), for GQA, MHA, MQA, MLA and
sliding-window architectures."""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_kv_dtype, get_model, get_weight_format
from planner.model.architecture import architecture_from_config
from planner.model.kv_bytes import kv_bytes_for_context, kv_bytes_per_token, kv_element_bytes, kv_heads_per_gpu


def _shrunk(model_id: str, layers: int, **overrides) -> dict:
    """A catalog model's attention geometry with the rest shrunk (small hidden/MLP/vocab)."""
    cfg = dict(get_model(model_id).config)
    arch = get_model(model_id).architecture
    cfg.update(
        {
            "num_hidden_layers": layers,
            "hidden_size": 64,
            "intermediate_size": 64,
            "vocab_size": 128,
            "max_position_embeddings": 4096,
            "pad_token_id": 0,
            "bos_token_id": 1,
            "eos_token_id": 2,
            "torch_dtype": "float32",
        }
    )
    if arch.mla is None:
        cfg["head_dim"] = arch.head_dim
    cfg.pop("rope_scaling", None)
    cfg.pop("quantization_config", None)
    cfg.update(overrides)
    return cfg


def _real_cache_bytes(cfg: dict, tokens: int) -> int:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(0)
    kwargs = {k: v for k, v in cfg.items() if k != "model_type"}
    model = AutoModelForCausalLM.from_config(AutoConfig.for_model(cfg["model_type"], **kwargs)).eval()
    ids = torch.randint(3, 128, (1, tokens))
    with torch.no_grad():
        cache = model(ids, use_cache=True).past_key_values
    return sum(
        layer.keys.nelement() * layer.keys.element_size() + layer.values.nelement() * layer.values.element_size()
        for layer in cache.layers
    )


CASES = {
    # GQA: Llama-3.1-70B geometry (8 KV heads of 128 for 64 query heads)
    "gqa": ("meta-llama/Llama-3.1-70B", {}),
    # MHA: Llama-2-7B geometry (32 KV heads = 32 query heads)
    "mha": ("meta-llama/Llama-2-7b-hf", {}),
    # MQA: one KV head (TinyLlama geometry with kv heads forced to 1)
    "mqa": ("TinyLlama/TinyLlama-1.1B-Chat-v1.0", {"num_key_value_heads": 1}),
    # MLA: DeepSeek-V3 latent (kv_lora_rank 512 + rope 64) with few experts
    "mla": (
        "deepseek-ai/DeepSeek-V3",
        {
            "n_routed_experts": 4,
            "num_experts_per_tok": 2,
            "n_group": 1,
            "topk_group": 1,
            "first_k_dense_replace": 1,
            "moe_intermediate_size": 32,
            "num_attention_heads": 4,
            "num_key_value_heads": 4,
        },
    ),
}


@pytest.mark.torch
@pytest.mark.parametrize("case", CASES)
def test_bytes_per_token_equal_real_cache_tensors(case):
    model_id, overrides = CASES[case]
    cfg = _shrunk(model_id, layers=3, **overrides)
    arch = architecture_from_config(cfg)
    fp32 = kv_element_bytes(get_kv_dtype("auto"), arch)
    assert fp32 == 4
    tokens = 17
    assert _real_cache_bytes(cfg, tokens) == tokens * kv_bytes_per_token(arch, fp32)
    # The catalog model has the same per-layer geometry, hence the same bytes per token per layer.
    full = get_model(model_id).architecture
    if not overrides or case == "mla":
        assert kv_bytes_per_token(full, 2) // full.num_layers == kv_bytes_per_token(arch, 2) // arch.num_layers


@pytest.mark.torch
def test_sliding_window_layers_hold_the_window_only():
    # Gemma-2 geometry: alternating sliding (window) and global layers; transformers keeps window-1.
    cfg = _shrunk("google/gemma-2-9b", layers=4, sliding_window=8, num_attention_heads=4, num_key_value_heads=2)
    arch = architecture_from_config(cfg)
    assert arch.layer_types == ("sliding_attention", "full_attention") * 2
    for tokens in (5, 7, 20):
        real = _real_cache_bytes(cfg, tokens)
        assert real == kv_bytes_for_context(arch, 4, tokens, slack_tokens=-1)
    # Counted in full (the `kv` contract) a token costs every layer:
    assert kv_bytes_per_token(arch, 4) == 4 * 2 * 2 * arch.head_dim * 4


@pytest.mark.torch
def test_all_sliding_mistral_layers():
    cfg = _shrunk("mistralai/Mistral-7B-v0.3", layers=2, sliding_window=6)
    arch = architecture_from_config(cfg)
    assert arch.num_sliding_layers == 2
    assert _real_cache_bytes(cfg, 30) == kv_bytes_for_context(arch, 4, 30, slack_tokens=-1)


def test_published_geometries_per_token():
    # 2 · layers · kv_heads · head_dim · 2 B over each model's config.json (e.g. https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json:
    # 80 x 8 x 128 -> 320 KiB); 8B 128 KiB, 3B 112 KiB, 1B 32 KiB, Qwen2.5-7B 56 KiB, 0.5B 12 KiB;
    # DeepSeek-V3 MLA 61 x (512 + 64) x 2 = 70,272 B (https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json).
    expected = {
        "Llama-3.1-70B": 320 * 1024,
        "Llama-3.1-8B": 128 * 1024,
        "Llama-3.2-3B": 112 * 1024,
        "Llama-3.2-1B": 32 * 1024,
        "Qwen2.5-7B": 56 * 1024,
        "Qwen2.5-0.5B": 12 * 1024,
        "DeepSeek-V3": 70_272,
    }
    for name, value in expected.items():
        assert kv_bytes_per_token(get_model(name).architecture, 2) == value, name


def test_tensor_parallel_replicates_kv_heads_beyond_their_count():
    arch = get_model("Llama-3.1-70B").architecture  # 8 KV heads
    assert [kv_heads_per_gpu(arch, tp) for tp in (1, 2, 4, 8)] == [8, 4, 2, 1]
    assert kv_bytes_per_token(arch, 2, tp=8) == 40_960  # 327,680 B / 8 ranks, one KV head each (docs/kv-cache.md)
    qwen = get_model("Qwen2.5-0.5B").architecture  # 2 KV heads
    assert kv_bytes_per_token(qwen, 2, tp=2) == kv_bytes_per_token(qwen, 2, tp=4)  # replicated
    mla = get_model("DeepSeek-V3").architecture
    assert kv_bytes_per_token(mla, 2, tp=8) == kv_bytes_per_token(mla, 2)  # latent on every rank


def test_fp8_halves_and_auto_follows_the_model_dtype():
    arch = get_model("Qwen2.5-7B").architecture
    assert kv_element_bytes(get_kv_dtype("fp8"), arch) == 1
    assert kv_element_bytes(get_kv_dtype("auto"), arch) == 2  # torch_dtype bfloat16

    assert kv_element_bytes(get_kv_dtype("auto"), arch, get_weight_format("fp32")) == 4
    assert kv_element_bytes(get_kv_dtype("auto"), arch, get_weight_format("int4-awq")) == 2
