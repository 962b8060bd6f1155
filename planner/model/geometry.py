"""The geometry of a decoder model: every size the parameter, weight and KV formulas need.

Built from a ``config.json`` by :func:`planner.model.architecture.architecture_from_config` (closed
forms) or :func:`planner.model.meta_device.architecture_via_transformers` (other families).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

#: ``chunked_attention``: local attention within fixed chunks of ``attention_chunk_size`` tokens (Llama-4).
LayerKind = Literal["full_attention", "sliding_attention", "chunked_attention"]

#: model_types whose parameter layout the closed-form formulas know (see planner/model/param_count.py).
FORMULA_FAMILIES = frozenset(
    {"llama", "mistral", "qwen2", "qwen3", "qwen3_moe", "mixtral", "gemma2", "phi3", "deepseek_v3"}
)


def rope_type_of(cfg: dict[str, Any]) -> str:
    """The RoPE scaling type a config names (``rope_scaling`` or ``rope_parameters``), else ``default``.

    >>> rope_type_of({"rope_scaling": {"rope_type": "yarn", "factor": 32.0}}), rope_type_of({})
    ('yarn', 'default')
    """
    scaling = cfg.get("rope_scaling") or cfg.get("rope_parameters") or {}
    if isinstance(scaling, dict):
        return str(scaling.get("rope_type") or scaling.get("type") or "default")
    return "default"


class MoeGeometry(BaseModel):
    """Mixture-of-experts layout: which layers route, to how many experts of which width."""

    model_config = ConfigDict(frozen=True)

    num_experts: int = Field(ge=1)
    experts_per_token: int = Field(ge=1)
    expert_intermediate_size: int = Field(ge=1)
    #: Width of the always-on shared expert MLP (DeepSeek: n_shared_experts * moe_intermediate_size).
    shared_intermediate_size: int = Field(default=0, ge=0)
    moe_layers: tuple[int, ...]
    #: DeepSeek-V3 stores a per-expert score-correction bias as a persistent buffer.
    router_bias_buffer: bool = False


class MlaGeometry(BaseModel):
    """Multi-head latent attention (DeepSeek-V2/V3): low-rank Q and a shared compressed KV latent."""

    model_config = ConfigDict(frozen=True)

    q_lora_rank: int | None = Field(default=None, ge=1)
    kv_lora_rank: int = Field(ge=1)
    qk_nope_head_dim: int = Field(ge=1)
    qk_rope_head_dim: int = Field(ge=1)
    v_head_dim: int = Field(ge=1)


class Architecture(BaseModel):
    """Geometry of one decoder-only model, every size in elements (not bytes)."""

    model_config = ConfigDict(frozen=True)

    model_type: str
    #: The closed-form family used for counting, or None when only transformers can count it.
    formula_family: str | None
    num_layers: int = Field(ge=1)
    hidden_size: int = Field(ge=1)
    intermediate_size: int = Field(ge=0)
    num_attention_heads: int = Field(ge=1)
    num_kv_heads: int = Field(ge=1)
    head_dim: int = Field(ge=1)
    vocab_size: int = Field(ge=1)
    tie_word_embeddings: bool = False
    max_position_embeddings: int | None = None
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    qk_norm: bool = False
    norms_per_layer: int = 2
    layer_types: tuple[LayerKind, ...]
    sliding_window: int | None = None
    #: Chunk of the ``chunked_attention`` layers (Llama-4 ``attention_chunk_size``), else None.
    attention_chunk_size: int | None = None
    moe: MoeGeometry | None = None
    mla: MlaGeometry | None = None
    rope_type: str = "default"
    torch_dtype: str = "bfloat16"

    @property
    def is_moe(self) -> bool:
        return self.moe is not None

    @property
    def num_sliding_layers(self) -> int:
        return sum(kind == "sliding_attention" for kind in self.layer_types)
