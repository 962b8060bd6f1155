"""The resolved geometry of a decoder model, read from a Hugging Face ``config.json``.

``Architecture`` holds exactly what the parameter, weight and KV formulas need, resolved the way
transformers resolves it (explicit ``head_dim`` wins over ``hidden_size / heads``; Qwen2 layers at or
above ``max_window_layers`` slide only when ``use_sliding_window``; Gemma-2 alternates sliding and
global layers starting with a sliding one). Parsing is pure Python, so the core runs without
transformers; tests check every resolution rule against transformers itself.

>>> arch = architecture_from_config({"model_type": "llama", "num_hidden_layers": 80,
...     "hidden_size": 8192, "intermediate_size": 28672, "num_attention_heads": 64,
...     "num_key_value_heads": 8, "vocab_size": 128256})
>>> arch.head_dim, arch.num_kv_heads, arch.formula_family
(128, 8, 'llama')
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from planner.errors import ConfigError, first_pydantic_error
from planner.model.config_bounds import validate_config_fields
from planner.model.geometry import FORMULA_FAMILIES, Architecture, MlaGeometry, MoeGeometry, rope_type_of
from planner.model.meta_device import architecture_via_transformers


def _int(cfg: dict[str, Any], key: str, *, default: int | None = None, minimum: int = 1) -> int:
    value = cfg.get(key, default)
    if value is None:
        raise ConfigError(f"config.json is missing `{key}` (a positive integer)", field=key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"`{key}` = {value!r} must be an integer >= {minimum}", field=key)
    if value < minimum:
        raise ConfigError(f"`{key}` = {value} must be >= {minimum}", field=key)
    return value


def _optional_int(cfg: dict[str, Any], key: str) -> int | None:
    return None if cfg.get(key) is None else _int(cfg, key)


def _dtype(cfg: dict[str, Any]) -> str:
    value = cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16"
    return str(value).removeprefix("torch.")


def _head_dim(cfg: dict[str, Any], hidden: int, heads: int) -> int:
    if cfg.get("head_dim") is not None:
        return _int(cfg, "head_dim")
    if hidden % heads:
        raise ConfigError(
            f"`hidden_size` = {hidden} is not divisible by `num_attention_heads` = {heads}; give `head_dim` explicitly",
            field="head_dim",
        )
    return hidden // heads


def _layer_types(model_type: str, cfg: dict[str, Any], layers: int) -> tuple[tuple[str, ...], int | None]:
    """Per-layer attention kind and the window, following each transformers config class."""
    window = cfg.get("sliding_window")
    explicit = cfg.get("layer_types")
    if model_type in {"qwen2", "qwen3", "qwen3_moe"} and not cfg.get("use_sliding_window", False):
        window = None
    if window is not None:
        window = _int(cfg, "sliding_window")
    if explicit is not None:
        if len(explicit) != layers or any(k not in ("full_attention", "sliding_attention") for k in explicit):
            raise ConfigError(
                f"`layer_types` must list {layers} entries of 'full_attention' or 'sliding_attention'",
                field="layer_types",
            )
        kinds = tuple(explicit)
    elif window is None:
        kinds = ("full_attention",) * layers
    elif model_type == "gemma2":
        kinds = tuple("sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(layers))
    elif model_type in {"qwen2", "qwen3", "qwen3_moe"}:
        first = cfg.get("max_window_layers", layers)
        kinds = tuple("sliding_attention" if i >= first else "full_attention" for i in range(layers))
    else:
        kinds = ("sliding_attention",) * layers
    if "sliding_attention" not in kinds:
        window = None
    return kinds, window


def _moe(model_type: str, cfg: dict[str, Any], layers: int) -> MoeGeometry | None:
    if model_type == "mixtral":
        return MoeGeometry(
            num_experts=_int(cfg, "num_local_experts", default=8),
            experts_per_token=_int(cfg, "num_experts_per_tok", default=2),
            expert_intermediate_size=_int(cfg, "intermediate_size"),
            moe_layers=tuple(range(layers)),
        )
    if model_type == "qwen3_moe":
        step = _int(cfg, "decoder_sparse_step", default=1)
        dense = set(cfg.get("mlp_only_layers") or [])
        num_experts = _int(cfg, "num_experts", default=128, minimum=0)
        moe_layers = tuple(i for i in range(layers) if i not in dense and num_experts > 0 and (i + 1) % step == 0)
        return MoeGeometry(
            num_experts=max(num_experts, 1),
            experts_per_token=_int(cfg, "num_experts_per_tok", default=8),
            expert_intermediate_size=_int(cfg, "moe_intermediate_size", default=768),
            moe_layers=moe_layers,
        )
    if model_type == "deepseek_v3":
        first_dense = _int(cfg, "first_k_dense_replace", default=3, minimum=0)
        freq = _int(cfg, "moe_layer_freq", default=1)
        expert_width = _int(cfg, "moe_intermediate_size", default=2048)
        return MoeGeometry(
            num_experts=_int(cfg, "n_routed_experts", default=256),
            experts_per_token=_int(cfg, "num_experts_per_tok", default=8),
            expert_intermediate_size=expert_width,
            shared_intermediate_size=expert_width * _int(cfg, "n_shared_experts", default=1, minimum=0),
            moe_layers=tuple(i for i in range(layers) if i >= first_dense and i % freq == 0),
            router_bias_buffer=True,
        )
    return None


def _mla(cfg: dict[str, Any]) -> MlaGeometry:
    return MlaGeometry(
        q_lora_rank=_optional_int(cfg, "q_lora_rank"),
        kv_lora_rank=_int(cfg, "kv_lora_rank", default=512),
        qk_nope_head_dim=_int(cfg, "qk_nope_head_dim", default=128),
        qk_rope_head_dim=_int(cfg, "qk_rope_head_dim", default=64),
        v_head_dim=_int(cfg, "v_head_dim", default=128),
    )


#: Keys under which a wrapper config nests the decoder's own config: multimodal ``text_config``, the
#: speculators format's ``transformer_layer_config`` (vllm-project/speculators ``Eagle3SpeculatorConfig``) and
#: the ``{"model_type": "eagle", "model": {...}}`` wrapper of EAGLE checkpoints exported for transformers.
NESTED_CONFIG_KEYS: tuple[str, ...] = ("text_config", "transformer_layer_config", "model")


def unwrap_layer_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """The decoder config a wrapper nests (a dict without ``num_hidden_layers`` of its own), else ``cfg``.

    >>> unwrap_layer_config({"speculators_model_type": "eagle3", "transformer_layer_config": {
    ...     "model_type": "llama", "num_hidden_layers": 1}})["num_hidden_layers"]
    1
    """
    if "num_hidden_layers" in cfg:
        return cfg
    for key in NESTED_CONFIG_KEYS:
        inner = cfg.get(key)
        if isinstance(inner, dict) and (key != "model" or cfg.get("model_type") == "eagle"):
            found = dict(inner)
            if key == "text_config":
                found.setdefault("model_type", cfg.get("model_type"))
            return found
    return cfg


def architecture_from_config(cfg: dict[str, Any]) -> Architecture:
    """Resolve a Hugging Face config dict into an :class:`Architecture`.

    Families outside :data:`FORMULA_FAMILIES` are resolved from transformers' own config class
    (see :func:`planner.model.meta_device.architecture_via_transformers`), which also rejects a
    ``model_type`` transformers does not know.
    """
    if not isinstance(cfg, dict):
        raise ConfigError("config must be a JSON object (a dict of Hugging Face config fields)")
    validate_config_fields(cfg)
    cfg = unwrap_layer_config(cfg)
    model_type = cfg.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise ConfigError("config.json is missing `model_type` (e.g. 'llama', 'qwen2')", field="model_type")
    validate_config_fields(cfg)
    if model_type not in FORMULA_FAMILIES:
        return architecture_via_transformers(cfg)

    layers = _int(cfg, "num_hidden_layers")
    hidden = _int(cfg, "hidden_size")
    heads = _int(cfg, "num_attention_heads")
    kv_heads = _int(cfg, "num_key_value_heads", default=heads)
    if heads % kv_heads:
        raise ConfigError(
            f"`num_attention_heads` = {heads} must be a multiple of `num_key_value_heads` = {kv_heads}",
            field="num_key_value_heads",
        )
    vocab = _int(cfg, "vocab_size")
    kinds, window = _layer_types(model_type, cfg, layers)
    attention_bias = bool(cfg.get("attention_bias", False))
    mla = _mla(cfg) if model_type == "deepseek_v3" else None
    try:
        return Architecture(
            model_type=model_type,
            formula_family=model_type,
            num_layers=layers,
            hidden_size=hidden,
            intermediate_size=_int(cfg, "intermediate_size", minimum=0),
            num_attention_heads=heads,
            num_kv_heads=kv_heads,
            head_dim=mla.qk_nope_head_dim + mla.qk_rope_head_dim if mla else _head_dim(cfg, hidden, heads),
            vocab_size=vocab,
            tie_word_embeddings=bool(cfg.get("tie_word_embeddings", model_type == "gemma2")),
            max_position_embeddings=_optional_int(cfg, "max_position_embeddings"),
            qkv_bias=model_type == "qwen2" or (attention_bias and model_type != "phi3"),
            o_bias=attention_bias and model_type not in {"qwen2", "phi3"},
            mlp_bias=bool(cfg.get("mlp_bias", False)) and model_type == "llama",
            qk_norm=model_type in {"qwen3", "qwen3_moe"},
            norms_per_layer=4 if model_type == "gemma2" else 2,
            layer_types=kinds,
            sliding_window=window,
            moe=_moe(model_type, cfg, layers),
            mla=mla,
            rope_type=rope_type_of(cfg),
            torch_dtype=_dtype(cfg),
        )
    except ValidationError as exc:
        error = first_pydantic_error(exc, "config.")
        raise ConfigError(str(error), field=error.field) from exc
