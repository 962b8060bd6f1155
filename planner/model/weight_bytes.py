"""Weight bytes of a model in a storage format, whole and per GPU under tensor/pipeline parallelism.

Formula, per linear layer of ``rows`` outputs and ``cols`` inputs in a quantized format
(layouts as vLLM's ``awq.py`` / ``gptq.py`` / ``fp8.py`` ``create_weights`` allocate them)::

    packed values  rows·cols·bits/8
    scales         rows·ceil(cols/group)·scale_bytes·copies    (group = cols when per-channel)
    zero points    ceil(cols/group)·ceil(rows·zp_bits/32)·4     (packed into int32)
    g_idx          cols·g_idx_bytes                              (GPTQ act-order index)
    tensor scales  tensor_scale_bytes                            (NVFP4 global scales)

Embeddings, the LM head, norms, biases and MoE routers stay in the format's ``unquantized_dtype``, and so does
every linear layer outside a format's ``quantized_components`` (vLLM runs MXFP4 for MoE experts only) and a
multimodal checkpoint's vision encoder and projector: quantized checkpoints quantize the linear layers of the language
model's transformer blocks only (e.g. the RedHatAI w8a8 model cards, "Only weights and activations of the linear
operators within transformers blocks are quantized", https://huggingface.co/RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-quantized.w8a8).

>>> from planner.catalog.lookup import get_model, get_weight_format
>>> plan = weight_bytes(get_model("Llama-3.1-70B").architecture, get_weight_format("bf16"))
>>> plan.total_bytes, round(plan.total_bytes / 2**30, 1)
(141107412992, 131.4)
"""

from __future__ import annotations

from math import ceil
from typing import Any

from pydantic import BaseModel

from planner.errors import InputError
from planner.model.dtypes import WeightFormat, element_bytes
from planner.model.geometry import Architecture
from planner.model.param_count import layout_tensors
from planner.model.tensors import WeightTensor

UNQUANTIZED_KINDS = ("embedding", "lm_head", "norm", "bias", "router")
#: Components a quantized checkpoint leaves in 16 bits whatever their kind: the vision encoder and projector.
UNQUANTIZED_COMPONENTS = ("vision",)
BUFFER_BYTES = 4
#: int64 index buffers (EAGLE-3 ``d2t``).
INDEX_BYTES = 8


class WeightBytes(BaseModel):
    """Bytes of weights by component, and what the format leaves unquantized."""

    format: str
    total_bytes: int
    components: dict[str, int]
    unquantized: list[str]
    bits_per_quantized_weight: float | None


def _is_quantized(tensor: WeightTensor, fmt: WeightFormat) -> bool:
    """Whether ``fmt`` packs ``tensor``: a language-model linear layer the format quantizes."""
    return fmt.quantizes(tensor.component, tensor.kind) and tensor.component not in UNQUANTIZED_COMPONENTS


def _quantized_linear_bytes(rows: int, cols: int, fmt: WeightFormat) -> int:
    group = fmt.group_size or cols
    groups = ceil(cols / group)
    packed = ceil(rows * cols * fmt.weight_bits / 8)
    scales = rows * groups * fmt.scale_bytes * fmt.scale_copies
    zeros = groups * ceil(rows * fmt.zero_point_bits / 32) * 4 if fmt.zero_point_bits else 0
    return packed + scales + zeros + cols * fmt.g_idx_bytes + fmt.tensor_scale_bytes


def tensor_bytes(
    tensor: WeightTensor,
    fmt: WeightFormat,
    rows: int | None = None,
    cols: int | None = None,
    count: int | None = None,
) -> int:
    """Bytes of ``count`` copies of ``tensor`` (optionally resharded to ``rows`` x ``cols``)."""
    rows = tensor.rows if rows is None else rows
    cols = tensor.cols if cols is None else cols
    count = tensor.count if count is None else count
    if rows == 0 or cols == 0 or count == 0:  # e.g. ``intermediate_size: 0``: no MLP, no bytes (and no 0-wide groups)
        return 0
    if tensor.kind == "buffer":
        return rows * cols * count * BUFFER_BYTES
    if tensor.kind == "index":
        return rows * cols * count * INDEX_BYTES
    if _is_quantized(tensor, fmt):
        return _quantized_linear_bytes(rows, cols, fmt) * count
    return rows * cols * count * element_bytes(fmt.activation_dtype)


def weight_bytes(
    arch: Architecture,
    fmt: WeightFormat,
    config: dict[str, Any] | None = None,
    *,
    tensors: list[WeightTensor] | None = None,
) -> WeightBytes:
    """Bytes of the whole model's weights (plus persistent buffers) stored in ``fmt`` (``tensors``: a head's)."""
    components: dict[str, int] = {}
    quantized_weights = quantized_bytes = 0
    for tensor in layout_tensors(arch, config) if tensors is None else tensors:
        n_bytes = tensor_bytes(tensor, fmt)
        components[tensor.component] = components.get(tensor.component, 0) + n_bytes
        if _is_quantized(tensor, fmt):
            quantized_weights += tensor.numel
            quantized_bytes += n_bytes
    return WeightBytes(
        format=fmt.id,
        total_bytes=sum(components.values()),
        components=components,
        unquantized=_unquantized(fmt, "vision" in components),
        bits_per_quantized_weight=8 * quantized_bytes / quantized_weights if quantized_weights else None,
    )


def _unquantized(fmt: WeightFormat, vision: bool = False) -> list[str]:
    """What a quantized format leaves in its ``unquantized_dtype``."""
    if not fmt.quantized:
        return []
    kept = ["embeddings", "lm_head", "norms", "biases", "router"] + (["vision"] if vision else [])
    if fmt.quantized_components is not None:
        kept += [f"every linear layer outside {', '.join(fmt.quantized_components)}"]
    return kept


def pp_stage_layers(num_layers: int, pp: int) -> list[range]:
    """Layers of each pipeline stage, as vLLM's ``get_pp_indices`` splits them.

    Layers divide evenly; the remainder goes one each to the stages before the last
    (``pp_stage_layers(10, 4) == [range(0, 2), range(2, 5), range(5, 8), range(8, 10)]``).
    """
    if pp < 1 or pp > num_layers:
        raise InputError("pp", pp, f"an integer from 1 to the {num_layers} layers")
    sizes = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        sizes[-i] += 1
    stages, start = [], 0
    for size in sizes:
        stages.append(range(start, start + size))
        start += size
    return stages


def _shard(tensor: WeightTensor, tp: int, kv_heads: int, head_dim: int) -> tuple[int, int]:
    """Rows and columns one rank holds under tensor parallelism of degree ``tp``."""
    if tp == 1 or tensor.tp_style == "replicated":
        return tensor.rows, tensor.cols
    if tensor.tp_style == "row":
        return tensor.rows, ceil(tensor.cols / tp)
    if tensor.tp_style == "kv_column":
        return max(1, kv_heads // tp) * head_dim, tensor.cols
    return ceil(tensor.rows / tp), tensor.cols  # column and vocab


def _expert_padding(arch: Architecture, fmt: WeightFormat, tp: int) -> float:
    """How much a format's engine pads the MoE experts on one rank: each rank's expert width rounded up to
    ``moe_intermediate_align`` (vLLM ``Mxfp4MoEMethod.create_weights``: ``round_up(intermediate_size_per_partition,
    64)``; gpt-oss-20b at TP 2: 1,440 -> 1,472), as a factor on the experts' matrices.

    >>> from planner.catalog.lookup import get_weight_format
    >>> arch = Architecture(model_type="m", formula_family=None, num_layers=1, hidden_size=8, intermediate_size=2880,
    ...     num_attention_heads=1, num_kv_heads=1, head_dim=8, vocab_size=8, layer_types=("full_attention",),
    ...     moe={"num_experts": 2, "experts_per_token": 1, "expert_intermediate_size": 2880, "moe_layers": (0,)})
    >>> _expert_padding(arch, get_weight_format("mxfp4"), 2), _expert_padding(arch, get_weight_format("mxfp4"), 1)
    (1.0222222222222221, 1.0)
    """
    align = fmt.moe_intermediate_align
    if arch.moe is None or not align or not fmt.quantizes("experts", "linear"):
        return 1.0
    width = arch.moe.expert_intermediate_size / tp
    return ceil(width / align) * align / width


def stage_weight_bytes(
    arch: Architecture,
    fmt: WeightFormat,
    *,
    tp: int = 1,
    pp: int = 1,
    config: dict[str, Any] | None = None,
    tensors: list[WeightTensor] | None = None,
) -> list[int]:
    """Bytes of weights on one GPU of each pipeline stage (all ranks of a stage hold the same)."""
    stages = pp_stage_layers(arch.num_layers, pp)
    totals = [0] * pp
    pad = _expert_padding(arch, fmt, tp)
    for tensor in layout_tensors(arch, config) if tensors is None else tensors:
        rows, cols = _shard(tensor, tp, arch.num_kv_heads, arch.head_dim)
        if tensor.layers:
            for s, stage in enumerate(stages):
                held = sum(1 for layer in tensor.layers if layer in stage)
                if held:
                    n_bytes = tensor_bytes(tensor, fmt, rows, cols, tensor.per_layer * held)
                    if tensor.component == "experts" and tensor.kind == "linear":
                        n_bytes = round(n_bytes * pad)
                    totals[s] += n_bytes
        else:
            # Outside the stack: embeddings on the first stage, LM head and final norm on the last;
            # a tied embedding is needed on both ends. vLLM's multimodal models build the vision encoder
            # unconditionally, so every pipeline rank holds it (e.g. vllm/model_executor/models/mistral3.py).
            first_only = tensor.kind == "embedding" and not (arch.tie_word_embeddings and pp > 1)
            holders = [0] if first_only else ([0, pp - 1] if tensor.kind == "embedding" else [pp - 1])
            if tensor.component == "vision":
                holders = list(range(pp))
            for s in set(holders):
                totals[s] += tensor_bytes(tensor, fmt, rows, cols)
    return totals


def weight_bytes_per_gpu(
    arch: Architecture,
    fmt: WeightFormat,
    *,
    tp: int = 1,
    pp: int = 1,
    config: dict[str, Any] | None = None,
    tensors: list[WeightTensor] | None = None,
) -> int:
    """Bytes of weights on the fullest GPU (engines size every rank to the tightest one)."""
    return max(stage_weight_bytes(arch, fmt, tp=tp, pp=pp, config=config, tensors=tensors))
