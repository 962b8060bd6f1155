"""Exact parameter counts, by component, from an :class:`~planner.model.architecture.Architecture`.

The model is described as a list of :class:`WeightTensor` groups (a matrix shape times how many
times it occurs), the same list the weight-byte formulas quantize. Layouts follow the transformers
modelling files of each family (``modeling_llama.py``, ``modeling_qwen2.py``, ``modeling_gemma2.py``,
``modeling_mixtral.py``, ``modeling_qwen3_moe.py``, ``modeling_deepseek_v3.py``, ``modeling_phi3.py``):

* attention: ``H·(q_heads·d) + 2·H·(kv_heads·d) + (q_heads·d)·H`` (+ biases, + q/k norms on Qwen3);
* gated MLP: ``3·H·I``; MoE: a router ``H·E`` plus ``E`` experts of ``3·H·I_e`` each;
* MLA (DeepSeek-V3): ``H·r_q + r_q + r_q·h·(d_nope+d_rope) + H·(r_kv+d_rope) + r_kv
  + r_kv·h·(d_nope+d_v) + h·d_v·H``;
* embeddings ``V·H``, an untied LM head another ``V·H``, ``norms_per_layer·H`` per layer + ``H``.

Architectures outside the formula families are counted on the meta device with transformers, and so is the
vision encoder of a multimodal checkpoint (component ``vision``).

>>> from planner.model.architecture import architecture_from_config
>>> arch = architecture_from_config({"model_type": "llama", "num_hidden_layers": 80,
...     "hidden_size": 8192, "intermediate_size": 28672, "num_attention_heads": 64,
...     "num_key_value_heads": 8, "vocab_size": 128256})
>>> count_parameters(arch).total_params
70553706496
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from planner.model.geometry import Architecture
from planner.model.meta_device import encoder_weight_tensors, has_vision_encoder, meta_weight_tensors
from planner.model.tensors import COMPONENTS, TpStyle, WeightTensor


class ParamCount(BaseModel):
    """Total and active parameters, the breakdown by component, and how they were counted."""

    total_params: int
    active_params: int
    components: dict[str, int]
    #: Persistent buffers a checkpoint stores beside the parameters (not parameters themselves).
    persistent_buffers: int = 0
    method: Literal["formula", "meta-device"]


Layers = tuple[int, ...]


def _linear(
    component: str, rows: int, cols: int, layers: Layers, bias: bool, style: TpStyle, per_layer: int = 1
) -> list[WeightTensor]:
    tensors = [WeightTensor(component, "linear", rows, cols, per_layer, layers, style)]
    if bias:
        bias_style: TpStyle = "replicated" if style == "row" else style
        tensors.append(WeightTensor(component, "bias", rows, 1, per_layer, layers, bias_style))
    return tensors


def _attention(arch: Architecture, layers: Layers) -> list[WeightTensor]:
    if arch.mla is not None:
        return _mla_attention(arch, layers)
    h, d = arch.hidden_size, arch.head_dim
    q, kv = arch.num_attention_heads * d, arch.num_kv_heads * d
    tensors = [
        *_linear("attention", q, h, layers, arch.qkv_bias, "column"),
        *_linear("attention", kv, h, layers, arch.qkv_bias, "kv_column", per_layer=2),
        *_linear("attention", h, q, layers, arch.o_bias, "row"),
    ]
    if arch.qk_norm:
        tensors.append(WeightTensor("norms", "norm", d, 1, 2, layers))
    return tensors


def _mla_attention(arch: Architecture, layers: Layers) -> list[WeightTensor]:
    mla = arch.mla
    assert mla is not None  # guarded by the caller
    h, heads, bias = arch.hidden_size, arch.num_attention_heads, arch.o_bias
    q_head = mla.qk_nope_head_dim + mla.qk_rope_head_dim
    tensors: list[WeightTensor] = []
    if mla.q_lora_rank is None:
        tensors += _linear("attention", heads * q_head, h, layers, False, "column")
    else:
        tensors += _linear("attention", mla.q_lora_rank, h, layers, bias, "replicated")
        tensors.append(WeightTensor("norms", "norm", mla.q_lora_rank, 1, 1, layers))
        tensors += _linear("attention", heads * q_head, mla.q_lora_rank, layers, False, "column")
    tensors += _linear("attention", mla.kv_lora_rank + mla.qk_rope_head_dim, h, layers, bias, "replicated")
    tensors.append(WeightTensor("norms", "norm", mla.kv_lora_rank, 1, 1, layers))
    tensors += _linear(
        "attention",
        heads * (mla.qk_nope_head_dim + mla.v_head_dim),
        mla.kv_lora_rank,
        layers,
        False,
        "column",
    )
    tensors += _linear("attention", h, heads * mla.v_head_dim, layers, bias, "row")
    return tensors


def _gated_mlp(
    component: str, hidden: int, width: int, layers: Layers, bias: bool, per_layer: int = 1
) -> list[WeightTensor]:
    return [
        *_linear(component, width, hidden, layers, bias, "column", 2 * per_layer),  # gate_proj, up_proj
        *_linear(component, hidden, width, layers, bias, "row", per_layer),  # down_proj
    ]


def weight_tensors(arch: Architecture) -> list[WeightTensor]:
    """Every parameter tensor (and persistent buffer) of a formula-family architecture."""
    if arch.formula_family is None:
        raise ValueError(f"{arch.model_type!r} has no closed-form layout; use layout_tensors()")
    h = arch.hidden_size
    every = tuple(range(arch.num_layers))
    tensors = [WeightTensor("embedding", "embedding", arch.vocab_size, h, tp_style="vocab")]
    if not arch.tie_word_embeddings:
        tensors.append(WeightTensor("lm_head", "lm_head", arch.vocab_size, h, tp_style="vocab"))
    tensors += _attention(arch, every)
    moe = arch.moe
    moe_layers = moe.moe_layers if moe else ()
    dense_layers = tuple(i for i in every if i not in set(moe_layers))
    if dense_layers:
        tensors += _gated_mlp("mlp", h, arch.intermediate_size, dense_layers, arch.mlp_bias)
    if moe and moe_layers:
        tensors.append(WeightTensor("router", "router", moe.num_experts, h, 1, moe_layers))
        tensors += _gated_mlp("experts", h, moe.expert_intermediate_size, moe_layers, False, per_layer=moe.num_experts)
        if moe.shared_intermediate_size:
            tensors += _gated_mlp("shared_experts", h, moe.shared_intermediate_size, moe_layers, False)
        if moe.router_bias_buffer:
            tensors.append(WeightTensor("buffers", "buffer", moe.num_experts, 1, 1, moe_layers))
    tensors.append(WeightTensor("norms", "norm", h, 1, arch.norms_per_layer, every))
    tensors.append(WeightTensor("norms", "norm", h, 1))  # final norm
    return tensors


def layout_tensors(arch: Architecture, config: dict[str, Any] | None = None) -> list[WeightTensor]:
    """The tensor layout: closed form for formula families, the meta-device model otherwise.

    A multimodal checkpoint whose language model is a formula family (Mistral-Small-3.1's ``mistral3`` wraps a
    ``mistral`` text config) adds its vision tower and projector from the meta device, since serving engines load
    them with the language model (:func:`planner.model.meta_device.encoder_weight_tensors`).
    """
    if arch.formula_family is not None:
        if config is not None and has_vision_encoder(config):
            return weight_tensors(arch) + encoder_weight_tensors(config)
        return weight_tensors(arch)
    if config is None:
        raise ValueError(f"{arch.model_type!r} is counted on the meta device and needs its raw config")
    return meta_weight_tensors(config)


def count_parameters(
    arch: Architecture, config: dict[str, Any] | None = None, *, tensors: list[WeightTensor] | None = None
) -> ParamCount:
    """Exact parameter counts; ``config`` is needed only for families counted on the meta device.

    ``tensors`` replaces the layout (a speculator head's, :mod:`planner.model.head_tensors`).

    Active parameters (MoE) count the ``experts_per_token`` routed experts a token visits plus
    everything else (embeddings, attention, shared experts, router), as model cards do.
    """
    components = dict.fromkeys(COMPONENTS, 0)
    buffers = 0
    for tensor in layout_tensors(arch, config) if tensors is None else tensors:
        if tensor.kind in ("buffer", "index"):
            buffers += tensor.numel
        else:
            components[tensor.component] = components.get(tensor.component, 0) + tensor.numel
    total = sum(components.values())
    active = total
    if arch.moe is not None:
        inactive = arch.moe.num_experts - arch.moe.experts_per_token
        active = total - components["experts"] * inactive // arch.moe.num_experts
    return ParamCount(
        total_params=total,
        active_params=active,
        components={k: v for k, v in components.items() if v or k in ("embedding", "attention", "norms")},
        persistent_buffers=buffers,
        method="formula" if arch.formula_family or tensors is not None else "meta-device",
    )
