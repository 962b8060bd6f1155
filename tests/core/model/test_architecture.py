"""Resolving config.json into an Architecture: the rules match transformers; bad input names its field."""

from __future__ import annotations

import json

import pytest

from planner.catalog.config_import import load_config, model_from_config
from planner.catalog.lookup import get_model, list_models
from planner.errors import ConfigError, PlannerError
from planner.model.architecture import architecture_from_config
from planner.model.meta_device import transformers_config


@pytest.mark.torch
@pytest.mark.parametrize("spec", list_models(), ids=lambda s: s.id)
def test_resolution_matches_transformers_config(spec):
    arch = spec.architecture
    config = transformers_config(spec.config)
    config = getattr(config, "text_config", None) or config  # multimodal checkpoints: the language model's config
    layer_types = getattr(config, "layer_types", None)
    if layer_types is not None:
        assert arch.layer_types == tuple(layer_types)
    head_dim = getattr(config, "head_dim", None)
    if head_dim is not None and arch.mla is None:
        assert arch.head_dim == head_dim
    assert arch.num_kv_heads == getattr(config, "num_key_value_heads", config.num_attention_heads)
    assert arch.tie_word_embeddings == bool(config.tie_word_embeddings)


@pytest.mark.torch
def test_qwen2_sliding_window_only_when_enabled():
    base = {
        "model_type": "qwen2",
        "num_hidden_layers": 4,
        "hidden_size": 64,
        "intermediate_size": 64,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 100,
        "sliding_window": 16,
        "max_window_layers": 2,
    }
    assert architecture_from_config(base).sliding_window is None
    enabled = architecture_from_config({**base, "use_sliding_window": True})
    assert enabled.layer_types == ("full_attention",) * 2 + ("sliding_attention",) * 2
    assert tuple(transformers_config({**base, "use_sliding_window": True}).layer_types) == enabled.layer_types


GOOD = {
    "model_type": "llama",
    "num_hidden_layers": 2,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 100,
}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"num_hidden_layers": None}, "num_hidden_layers"),
        ({"hidden_size": -64}, "hidden_size"),
        ({"num_key_value_heads": 3}, "num_key_value_heads"),
        ({"vocab_size": "many"}, "vocab_size"),
        ({"model_type": None}, "model_type"),
        pytest.param({"model_type": "definitely_not_a_model"}, "model_type", marks=pytest.mark.torch),
        ({"hidden_size": 66}, "head_dim"),
    ],
)
def test_bad_configs_name_the_field(change, field):
    cfg = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    with pytest.raises(ConfigError) as info:
        architecture_from_config(cfg)
    assert info.value.field == field
    assert field in str(info.value)
    assert isinstance(info.value, ValueError)  # one exception root, a ValueError


def test_import_from_file_folder_bytes_and_errors(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(GOOD))
    assert model_from_config(tmp_path).id == tmp_path.name
    assert model_from_config(tmp_path / "config.json").architecture.num_layers == 2
    assert model_from_config(json.dumps(GOOD).encode()).origin == "imported"
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ConfigError, match="not JSON"):
        load_config(tmp_path / "bad.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ConfigError, match="JSON object"):
        load_config(tmp_path / "list.json")
    with pytest.raises(PlannerError, match="no such file"):
        load_config(tmp_path / "missing.json")
    (tmp_path / "empty").mkdir()
    with pytest.raises(PlannerError, match=r"folder without a config\.json"):
        load_config(tmp_path / "empty")


@pytest.mark.torch
def test_remote_code_is_never_used(tmp_path):
    cfg = {**GOOD, "model_type": "my_custom_arch", "auto_map": {"AutoModelForCausalLM": "modeling.MyModel"}}
    (tmp_path / "modeling.py").write_text("raise SystemExit('remote code ran')\n")
    with pytest.raises(ConfigError, match="model_type"):
        architecture_from_config(cfg)


@pytest.mark.torch
def test_gpt_oss_alternates_sliding_and_full_layers_and_routes_to_experts():
    arch = get_model("openai/gpt-oss-20b").architecture
    assert arch.layer_types == ("sliding_attention", "full_attention") * 12
    assert arch.sliding_window == 128 and arch.attention_chunk_size is None
    assert (arch.moe.num_experts, arch.moe.experts_per_token, arch.moe.expert_intermediate_size) == (32, 4, 2880)
    assert arch.moe.moe_layers == tuple(range(24)) and arch.moe.shared_intermediate_size == 0


@pytest.mark.torch
def test_llama4_chunked_local_layers_and_nope_globals_come_from_no_rope_layers():
    arch = get_model("meta-llama/Llama-4-Scout-17B-16E-Instruct").architecture
    # no_rope_layers [1, 1, 1, 0] x 12: RoPE layers attend within 8,192-token chunks, every fourth is global NoPE
    assert arch.layer_types[:4] == ("chunked_attention", "chunked_attention", "chunked_attention", "full_attention")
    assert arch.layer_types.count("chunked_attention") == 36 and arch.layer_types[3::4] == ("full_attention",) * 12
    assert arch.attention_chunk_size == 8192 and arch.sliding_window is None
    assert arch.moe.num_experts == 16 and arch.moe.experts_per_token == 1
    assert arch.moe.shared_intermediate_size == arch.moe.expert_intermediate_size == 8192  # Llama4TextMoe.shared_expert


@pytest.mark.torch
def test_a_field_of_the_wrong_type_for_transformers_is_a_config_error():
    # transformers' typed configs refuse e.g. a number where a flag is declared; the planner names the config
    cfg = {"model_type": "llama4_text", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
           "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 64, "vocab_size": 128,
           "num_local_experts": 2, "attn_temperature_tuning": "often"}  # fmt: skip
    with pytest.raises(ConfigError, match="not valid for 'llama4_text'"):
        architecture_from_config(cfg)
