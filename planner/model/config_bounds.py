"""Every config field the planner reads, checked before any tensor or layout is built.

A ``config.json`` is data from anywhere: each size field must be an integer within the physical
bounds of ``data/config_bounds.json`` (each bound a generous multiple of the largest published
model, with its reasoning and source), lists must be lists of the right items, heads must divide,
an MoE must route to at most its experts, and a model whose 16-bit weights alone would exceed
``max_weight_bytes`` (100 TB) is rejected by arithmetic before torch sees it.

>>> validate_config_fields({"model_type": "llama", "num_hidden_layers": 10_000_000})
Traceback (most recent call last):
...
planner.errors.ConfigError: `num_hidden_layers` = 10000000 is outside 1..1,024 (8x the deepest published ...)
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from planner.errors import ConfigError
from planner.facts import SourcedFact, data_cache, read_data_file


class FieldBound(SourcedFact):
    names: list[str]
    min: int
    max: int
    reasoning: str


class WeightBound(SourcedFact):
    value: int
    reasoning: str


class ConfigBounds(BaseModel):
    description: str
    max_weight_bytes: WeightBound
    fields: list[FieldBound]

    def bound(self, name: str) -> FieldBound | None:
        return next((b for b in self.fields if name in b.names), None)


@data_cache
def config_bounds() -> ConfigBounds:
    return ConfigBounds.model_validate(read_data_file("config_bounds.json"))


#: Fields that, when present, must be lists of these item types.
_LIST_FIELDS: dict[str, type] = {"layer_types": str, "mlp_only_layers": int}
#: Fields that, when present, must be JSON objects.
_DICT_FIELDS = (
    "rope_scaling",
    "rope_parameters",
    "text_config",
    "quantization_config",
    "transformer_layer_config",
    "speculators_config",
)
#: The deepest nesting of objects and lists read: published configs nest 4 levels (``text_config`` ->
#: ``rope_scaling`` -> ...); a deeper one is not a config, and would overflow serialisers (pydantic stops at 255).
MAX_CONFIG_DEPTH = 32
#: A speculator head's fields with their allowed values (read only after these checks).
_HEAD_TYPES: dict[str, tuple[type, str]] = {
    "speculators_config": (dict, 'a JSON object (with a "verifier")'),
    "speculators_model_type": (str, 'a text such as "eagle3"'),
    "architectures": (list, 'a list of class names such as ["LlamaForCausalLMEagle3"]'),
}
#: 16-bit weights: the bytes per parameter of the weight bound.
_BOUND_BYTES_PER_PARAM = 2


def _first(cfg: dict[str, Any], names: list[str]) -> int | None:
    return next((cfg[n] for n in names if isinstance(cfg.get(n), int) and not isinstance(cfg.get(n), bool)), None)


def check_nesting(cfg: Any, max_depth: int = MAX_CONFIG_DEPTH) -> None:
    """Raise ``ConfigError`` when objects or lists nest deeper than ``max_depth`` (walked without recursion).

    >>> deep = {}
    >>> for _ in range(40): deep = {"a": deep}
    >>> check_nesting({"model_type": "llama", "extra": deep})
    Traceback (most recent call last):
    ...
    planner.errors.ConfigError: `extra` nests more than 32 levels deep: a Hugging Face config.json nests a few
    """
    stack: list[tuple[Any, int, str]] = [(cfg, 0, "")]
    while stack:
        value, depth, top = stack.pop()
        if depth > max_depth:
            raise ConfigError(
                f"`{top or 'config'}` nests more than {max_depth} levels deep: a Hugging Face config.json nests a few",
                field=top or "config",
            )
        if isinstance(value, dict):
            stack.extend((v, depth + 1, top or str(k)[:40]) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, depth + 1, top) for v in value)


def check_head_fields(cfg: dict[str, Any]) -> None:
    """A speculator head's fields, checked before any is read: their types, ``speculators_config.verifier`` an
    object naming a checkpoint, ``draft_vocab_size`` an integer from 1 to the head's vocabulary.

    >>> check_head_fields({"vocab_size": 128256, "draft_vocab_size": 32000})
    >>> check_head_fields({"speculators_config": ["x"]})
    Traceback (most recent call last):
    ...
    planner.errors.ConfigError: `speculators_config` = ['x'] must be a JSON object (with a "verifier")
    >>> check_head_fields({"vocab_size": 500, "draft_vocab_size": 501})
    Traceback (most recent call last):
    ...
    planner.errors.ConfigError: `draft_vocab_size` = 501 must be an integer from 1 to the vocabulary, `vocab_size` = 500
    """
    for name, (kind, allowed) in _HEAD_TYPES.items():
        value = cfg.get(name)
        if value is not None and not isinstance(value, kind):
            raise ConfigError(f"`{name}` = {_short(value)} must be {allowed}", field=name)
    verifier = (cfg.get("speculators_config") or {}).get("verifier")
    if verifier is not None and not isinstance(verifier, dict):
        raise ConfigError(
            f"`speculators_config.verifier` = {_short(verifier)} must be a JSON object such as "
            '{"name_or_path": "org/model"}',
            field="speculators_config.verifier",
        )
    trained_on = (verifier or {}).get("name_or_path")
    if trained_on is not None and not isinstance(trained_on, str):
        raise ConfigError(
            f"`speculators_config.verifier.name_or_path` = {_short(trained_on)} must be a checkpoint name (text)",
            field="speculators_config.verifier.name_or_path",
        )
    if "draft_vocab_size" in cfg:
        draft_vocab, vocab = cfg["draft_vocab_size"], _first(cfg, ["vocab_size"])
        high = (
            vocab
            if vocab is not None
            else (config_bounds().bound("vocab_size") or FieldBound.model_construct(max=2**31 - 1)).max
        )
        if isinstance(draft_vocab, bool) or not isinstance(draft_vocab, int) or not 1 <= draft_vocab <= high:
            of = f"the vocabulary, `vocab_size` = {vocab}" if vocab is not None else f"{high:,}"
            raise ConfigError(
                f"`draft_vocab_size` = {_short(draft_vocab)} must be an integer from 1 to {of}",
                field="draft_vocab_size",
            )


def validate_config_fields(cfg: dict[str, Any]) -> None:
    """Raise ``ConfigError`` naming the first field that is of the wrong type or outside its bounds."""
    check_nesting(cfg)
    check_head_fields(cfg)
    bounds = config_bounds()
    for bound in bounds.fields:
        for name in bound.names:
            value = cfg.get(name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                if isinstance(value, float) and value.is_integer() and bound.min <= value <= bound.max:
                    continue  # e.g. 4096.0 written by some exporters; transformers accepts it
                raise ConfigError(
                    f"`{name}` = {_short(value)} must be an integer in {bound.min}..{bound.max:,}", field=name
                )
            if not bound.min <= value <= bound.max:
                raise ConfigError(
                    f"`{name}` = {_short(value)} is outside {bound.min}..{bound.max:,} ({bound.reasoning})", field=name
                )
    for name, item in _LIST_FIELDS.items():
        value = cfg.get(name)
        if value is not None and (
            not isinstance(value, list) or any(not isinstance(v, item) or isinstance(v, bool) for v in value)
        ):
            raise ConfigError(f"`{name}` must be a list of {item.__name__} values", field=name)
    for name in _DICT_FIELDS:
        if cfg.get(name) is not None and not isinstance(cfg[name], dict):
            raise ConfigError(f"`{name}` must be a JSON object", field=name)
    layers = _first(cfg, ["num_hidden_layers"])
    if isinstance(cfg.get("layer_types"), list) and layers is not None and len(cfg["layer_types"]) != layers:
        raise ConfigError(f"`layer_types` must list {layers} entries, one per layer", field="layer_types")
    heads = _first(cfg, ["num_attention_heads", "n_head", "num_heads"])
    kv_heads = _first(cfg, ["num_key_value_heads", "num_kv_heads", "n_head_kv"])
    if heads is not None and kv_heads is not None and kv_heads > heads:
        raise ConfigError(
            f"`num_key_value_heads` = {kv_heads} must be at most `num_attention_heads` = {heads}",
            field="num_key_value_heads",
        )
    experts = _first(cfg, ["num_experts", "num_local_experts", "n_routed_experts"])
    per_token = _first(cfg, ["num_experts_per_tok"])
    if experts and per_token is not None and per_token > experts:
        raise ConfigError(
            f"`num_experts_per_tok` = {per_token} must be at most the {experts} experts", field="num_experts_per_tok"
        )
    weight_bytes = rough_weight_bytes(cfg)
    if weight_bytes > bounds.max_weight_bytes.value:
        raise ConfigError(
            f"this config describes about {weight_bytes / 1e12:,.0f} TB of 16-bit weights: at most "
            f"{bounds.max_weight_bytes.value / 1e12:,.0f} TB is planned ({bounds.max_weight_bytes.reasoning})",
            field="config",
        )


def rough_weight_bytes(cfg: dict[str, Any]) -> int:
    """An upper-end estimate of 16-bit weight bytes from the size fields alone (pure arithmetic, no torch).

    Embeddings in and out, per layer four attention projections and three MLP matrices per expert.

    >>> rough_weight_bytes({"num_hidden_layers": 2, "hidden_size": 8, "intermediate_size": 16, "vocab_size": 10})
    2880
    """
    layers = _first(cfg, ["num_hidden_layers", "n_layer", "num_layers"]) or 1
    hidden = _first(cfg, ["hidden_size", "n_embd", "d_model"]) or 1
    heads = _first(cfg, ["num_attention_heads", "n_head", "num_heads"]) or 1
    head_dim = _first(cfg, ["head_dim"]) or max(hidden // heads, 1)
    width = _first(cfg, ["intermediate_size", "ffn_hidden_size", "n_inner"]) or 4 * hidden
    expert_width = _first(cfg, ["moe_intermediate_size"]) or width
    experts = _first(cfg, ["num_experts", "num_local_experts", "n_routed_experts"]) or 0
    vocab = _first(cfg, ["vocab_size"]) or 1
    attention = 4 * hidden * max(heads * head_dim, hidden)
    mlp = 3 * hidden * (width + experts * expert_width)
    return _BOUND_BYTES_PER_PARAM * (2 * vocab * hidden + layers * (attention + mlp))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
