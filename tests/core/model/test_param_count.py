"""Exact parameter counts: every catalog model equals transformers on the meta device."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.catalog.lookup import get_model, list_models
from planner.model import meta_device as meta_count
from planner.model.architecture import architecture_from_config
from planner.model.meta_device import count_on_meta_device
from planner.model.param_count import count_parameters
from tests.conftest import TINY_GPT_NEOX

CATALOG_IDS = [m.id for m in list_models()]


@pytest.mark.torch
@pytest.mark.parametrize("model_id", CATALOG_IDS)
def test_catalog_count_equals_meta_device(model_id):
    spec = get_model(model_id)
    ours = count_parameters(spec.architecture, spec.config)
    reference = count_on_meta_device(spec.config)
    assert ours.method == ("formula" if spec.architecture.formula_family else "meta-device")
    assert ours.total_params == reference.total_params
    assert ours.persistent_buffers == reference.persistent_buffer_elements
    assert sum(ours.components.values()) == ours.total_params


def test_llama_31_70b_is_70_553_706_496():
    # Golden figure named in the Foundation issue (equals the meta-device count above).
    counts = count_parameters(get_model("meta-llama/Llama-3.1-70B").architecture)
    assert counts.total_params == 70_553_706_496
    assert counts.components["embedding"] == counts.components["lm_head"] == 128256 * 8192


def test_moe_active_parameters_match_model_cards():
    # Model cards: Mixtral-8x7B ~12.9B active, 8x22B 39B, Qwen3-235B-A22B 22B, DeepSeek-V3 37B.
    expected = {
        "Mixtral-8x7B-v0.1": 12.9e9,
        "Mixtral-8x22B-v0.1": 39e9,
        "Qwen3-235B-A22B": 22e9,
        "DeepSeek-V3": 37e9,
    }
    for name, active in expected.items():
        counts = count_parameters(get_model(name).architecture)
        assert counts.active_params < counts.total_params
        assert abs(counts.active_params - active) / active < 0.03, name


def test_deepseek_v3_router_bias_is_a_persistent_buffer_not_a_parameter():
    counts = count_parameters(get_model("DeepSeek-V3").architecture)
    assert counts.persistent_buffers == 58 * 256  # 61 layers, first 3 dense, 256 experts
    assert counts.total_params == 671_026_404_352
    assert {"experts", "shared_experts", "router"} <= counts.components.keys()


def test_tied_embeddings_have_no_lm_head():
    counts = count_parameters(get_model("Llama-3.2-1B").architecture)
    assert "lm_head" not in counts.components
    assert counts.total_params == 1_235_814_400


# Random small configs of every formula family, compared with transformers on the meta device.
dims = st.sampled_from([16, 32, 64])


@st.composite
def family_config(draw):
    family = draw(
        st.sampled_from(["llama", "mistral", "qwen2", "qwen3", "qwen3_moe", "mixtral", "gemma2", "phi3", "deepseek_v3"])
    )
    heads = draw(st.sampled_from([2, 4, 8]))
    kv = draw(st.sampled_from([h for h in (1, 2, 4, 8) if heads % h == 0]))
    head_dim = draw(dims)
    cfg = {
        "model_type": family,
        "num_hidden_layers": draw(st.integers(1, 4)),
        "hidden_size": draw(st.sampled_from([32, 64, 96])),
        "intermediate_size": draw(st.sampled_from([48, 64, 128])),
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "vocab_size": draw(st.integers(50, 300)),
        "tie_word_embeddings": draw(st.booleans()),
        "pad_token_id": 0,
        "bos_token_id": 1,
        "eos_token_id": 2,
    }
    if family in ("llama", "qwen3", "qwen3_moe", "gemma2", "mistral"):
        cfg["head_dim"] = head_dim
    elif cfg["hidden_size"] % heads:
        cfg["hidden_size"] = heads * 16
    if family in ("llama", "qwen3", "gemma2"):
        cfg["attention_bias"] = draw(st.booleans())
    if family == "llama":
        cfg["mlp_bias"] = draw(st.booleans())
    if family in ("qwen3_moe", "mixtral"):
        cfg["num_local_experts" if family == "mixtral" else "num_experts"] = draw(st.integers(2, 6))
        cfg["num_experts_per_tok"] = 2
        cfg["moe_intermediate_size"] = draw(st.sampled_from([16, 32]))
        if family == "qwen3_moe":
            cfg["decoder_sparse_step"] = draw(st.integers(1, 2))
            cfg["mlp_only_layers"] = draw(st.sampled_from([[], [0]]))
    if family == "deepseek_v3":
        cfg |= {
            "n_routed_experts": 4,
            "num_experts_per_tok": 2,
            "n_group": 2,
            "topk_group": 1,
            "moe_intermediate_size": 16,
            "n_shared_experts": draw(st.integers(0, 2)),
            "first_k_dense_replace": draw(st.integers(0, 2)),
            "kv_lora_rank": 16,
            "q_lora_rank": draw(st.sampled_from([None, 24])),
            "qk_rope_head_dim": 8,
            "qk_nope_head_dim": 16,
            "v_head_dim": 16,
            "num_key_value_heads": heads,
        }
    return cfg


@pytest.mark.torch
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(family_config())
def test_random_configs_of_every_family_match_meta_device(cfg):
    ours = count_parameters(architecture_from_config(cfg))
    reference = count_on_meta_device(cfg)
    assert ours.total_params == reference.total_params, cfg
    assert ours.persistent_buffers == reference.persistent_buffer_elements


@pytest.mark.torch
@pytest.mark.parametrize(
    "cfg",
    [
        {
            "model_type": "falcon",
            "num_hidden_layers": 2,
            "hidden_size": 64,
            "num_attention_heads": 4,
            "vocab_size": 500,
        },
        TINY_GPT_NEOX,
        {"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 4, "vocab_size": 500},
    ],
)
def test_unknown_families_are_counted_on_the_meta_device(cfg):
    arch = architecture_from_config(cfg)
    counts = count_parameters(arch, cfg)
    assert arch.formula_family is None
    assert counts.method == "meta-device"
    assert counts.total_params == count_on_meta_device(cfg).total_params


@pytest.mark.torch
def test_meta_device_layouts_are_cached_on_disk_and_rebuilt_when_damaged(tmp_path, monkeypatch):

    monkeypatch.setenv("PLANNER_CACHE_DIR", str(tmp_path))
    cfg = {
        "model_type": "gpt_neox",
        "num_hidden_layers": 1,
        "hidden_size": 32,
        "num_attention_heads": 4,
        "intermediate_size": 64,
        "vocab_size": 50,
    }
    meta_count._meta_weight_tensors_cached.cache_clear()
    first = meta_count.meta_weight_tensors(cfg)
    files = list((tmp_path / "meta-layouts").glob("*.json"))
    assert len(files) == 1
    meta_count._meta_weight_tensors_cached.cache_clear()
    assert meta_count.meta_weight_tensors(cfg) == first  # read back from disk
    files[0].write_text("{damaged")
    meta_count._meta_weight_tensors_cached.cache_clear()
    assert meta_count.meta_weight_tensors(cfg) == first  # rebuilt
    assert json.loads(files[0].read_text())


@pytest.mark.torch
def test_a_multimodal_wrapper_of_a_formula_family_adds_its_vision_encoder():
    # Mistral-Small-3.1 (mistral3 around a mistral text config): the text model in closed form plus the Pixtral
    # encoder and projector from the meta device; the LM head stays separate as vLLM loads it from text_config,
    # although transformers 5's Mistral3Config would tie it when config.json is silent.
    spec = get_model("mistralai/Mistral-Small-3.1-24B-Instruct-2503")
    counts = count_parameters(spec.architecture, spec.config)
    assert counts.method == "formula"
    assert counts.total_params == 24_011_361_280 == count_on_meta_device(spec.config).total_params
    assert counts.components["lm_head"] == counts.components["embedding"] == 131_072 * 5120
    assert counts.components["vision"] == 438_958_080
    assert count_parameters(spec.architecture).total_params == 24_011_361_280 - 438_958_080  # no config: text only


@pytest.mark.torch
@pytest.mark.parametrize(
    ("model_id", "total", "vision"),
    [
        ("google/gemma-3-4b-it", 4_300_079_472, 419_816_304),
        ("google/gemma-3-12b-it", 12_187_325_040, 421_290_864),
        ("google/gemma-3-27b-it", 27_432_406_640, 423_060_336),
    ],
)
def test_gemma3_counts_its_siglip_tower_as_one_vision_component(model_id, total, vision):
    spec = get_model(model_id)
    counts = count_parameters(spec.architecture, spec.config)
    assert counts.total_params == total and counts.components["vision"] == vision
    encoder = [t for t in meta_count.meta_weight_tensors(spec.config) if t.component == "vision"]
    assert encoder and all(not t.layers for t in encoder)  # encoder layers are not decoder layers


def test_a_text_only_config_has_no_encoder():
    assert not meta_count.has_vision_encoder(get_model("Llama-3.1-8B").config)
    assert meta_count.encoder_weight_tensors(get_model("Llama-3.1-8B").config) == []
