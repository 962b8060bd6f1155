"""What one forward pass of a deployed model costs per GPU before the batch is known, and the peaks.

:class:`ModelCost` holds, per GPU after tensor-parallel sharding and per pipeline stage, the weight
bytes a pass streams (an untied embedding table is only looked up; a multimodal checkpoint's vision
encoder is not run on text; routed experts are read in the share a batch touches), the matmul parameters
(``2 · params`` FLOPs per token, Kaplan et al. 2020, "Scaling laws", §2.1), the LM head and the KV
element size. :func:`peak_flops` is the dense peak of the weight format's GEMM: fp8 uses
``fp8_dense_tflops`` where the GPU has it, fp4 formats ``fp4_dense_tflops``, else bf16 (fp16 where bf16
is missing, e.g. T4); weight-only int4/int8 formats compute in their unquantized dtype. Attention runs at
its own precision (:func:`attention_dtype`): 8 bits over an 8-bit KV cache, else 16, never 4. Link bandwidth
is one direction of ``GpuSpec.scale_up_bandwidth_gb_s`` (listed bidirectional). The time of a pass over
a batch is :class:`planner.speed.step_model.StepModel` (docs/speed-model.md).

>>> from planner.catalog.lookup import get_gpu, get_kv_dtype, get_model, get_weight_format
>>> h100 = get_gpu("h100-sxm-80gb")
>>> cost = model_cost(get_model("Llama-3.1-70B"), get_weight_format("bf16"), get_kv_dtype("auto"), h100, tp=8)
>>> cost.compute_dtype, round(cost.matmul_params_per_gpu / 1e9, 2)
('bf16', 8.56)
"""

from __future__ import annotations

from math import ceil

from pydantic import BaseModel, ConfigDict

from planner.catalog.schemas import GpuSpec, ModelSpec
from planner.catalog.speculators import head_tensors, speculator_params
from planner.errors import InputError
from planner.model.dtypes import KvDtype, WeightFormat, element_bytes
from planner.model.geometry import Architecture
from planner.model.kv_bytes import kv_element_bytes
from planner.model.param_count import count_parameters
from planner.model.tensors import WeightTensor
from planner.model.weight_bytes import pp_stage_layers, stage_weight_bytes, weight_bytes, weight_bytes_per_gpu
from planner.speed.profiles import SpeedProfile
from planner.units import GB, TERA


class ModelCost(BaseModel):
    """What one forward pass of a deployed model costs per GPU, before the batch is known."""

    model_config = ConfigDict(frozen=True)

    model_id: str
    arch: Architecture
    weight_format: str
    compute_dtype: str
    #: The precision attention's matmuls run at (:func:`attention_dtype`).
    attention_dtype: str
    tp: int
    pp: int
    kv_element_bytes: int
    activation_bytes: int
    stage_layers: tuple[tuple[int, ...], ...]
    #: Bytes of weights one GPU of each stage reads in a pass (a head's own, plus the target's LM head it shares).
    stage_weight_bytes: tuple[int, ...]
    #: Of which bytes a text forward pass does not stream: an embedding table only looked up, a vision encoder.
    stage_lookup_bytes: tuple[int, ...]
    #: Of which routed-expert weights (read in the share a batch touches).
    stage_expert_bytes: tuple[int, ...]
    #: Matmul parameters per GPU outside the LM head, summed over stages (active experts only).
    matmul_params_per_gpu: float
    lm_head_params_per_gpu: float


def compute_dtype(gpu: GpuSpec, fmt: WeightFormat) -> str:
    """The GEMM precision a format runs at on ``gpu`` (see the module docstring)."""
    if fmt.id == "fp8" and gpu.fp8_dense_tflops:
        return "fp8"
    if fmt.id in ("nvfp4", "mxfp4") and gpu.fp4_dense_tflops:
        return "fp4"
    dtype = fmt.unquantized_dtype if fmt.quantized else fmt.id
    if dtype in ("bf16", "fp32") and gpu.bf16_dense_tflops:
        return "bf16"
    return "fp16"


def attention_dtype(gpu: GpuSpec, kv_element_bytes: int) -> str:
    """The precision attention's two matmuls (QKᵀ and PV) run at on ``gpu``: FP8 over an 8-bit KV cache where the
    GPU has FP8 tensor cores (FlashAttention-3's FP8 path, Shah et al. 2024, arXiv:2407.08608, §3.3; TensorRT-LLM's
    FP8 context FMHA), else 16 bits (bf16, fp16 where bf16 is missing). Never a 4-bit weight format's: the engines
    run attention over the KV cache, whose smallest format is 8 bits (data/precisions.json ``kv_dtypes``).

    >>> from planner.catalog.lookup import get_gpu
    >>> attention_dtype(get_gpu("b200-180gb"), 1), attention_dtype(get_gpu("b200-180gb"), 2)
    ('fp8', 'bf16')
    >>> attention_dtype(get_gpu("a100-sxm-80gb"), 1)
    'bf16'
    """
    if kv_element_bytes == 1 and gpu.fp8_dense_tflops:
        return "fp8"
    return "bf16" if gpu.bf16_dense_tflops else "fp16"


def peak_flops(gpu: GpuSpec, dtype: str) -> float:
    """Dense peak FLOP/s of ``gpu`` at a compute dtype from :func:`compute_dtype`."""
    tflops = {
        "fp8": gpu.fp8_dense_tflops,
        "fp4": gpu.fp4_dense_tflops,
        "bf16": gpu.bf16_dense_tflops or gpu.fp16_dense_tflops,
        "fp16": gpu.fp16_dense_tflops or gpu.bf16_dense_tflops,
    }[dtype]
    if not tflops:
        raise InputError("gpu", gpu.id, f"a GPU with a {dtype} TFLOPS figure in data/gpus.json")
    return tflops * TERA


def experts_touched_frac(tokens: int, num_experts: int, experts_per_token: int) -> float:
    """Expected share of a layer's experts that ``tokens`` uniformly routed tokens touch.

    >>> experts_touched_frac(1, 8, 2), round(experts_touched_frac(64, 128, 8), 3)
    (0.25, 0.984)
    """
    if tokens <= 0:
        return 0.0
    return 1.0 - (1.0 - experts_per_token / num_experts) ** tokens


def model_cost(
    spec: ModelSpec, fmt: WeightFormat, kv_dtype: KvDtype, gpu: GpuSpec, *, tp: int = 1, pp: int = 1
) -> ModelCost:
    """The per-GPU costs of ``spec`` stored in ``fmt`` on ``gpu`` under TP ``tp``, PP ``pp`` (computed once)."""
    arch = spec.architecture
    config = spec.config
    # a head streams only the tensors the engine holds for it (its shared embedding is the target's lookup)
    tensors = head_tensors(spec)
    whole = weight_bytes(arch, fmt, config, tensors=tensors)
    params = speculator_params(spec) if tensors is not None else count_parameters(arch, config)
    stages = pp_stage_layers(arch.num_layers, pp)
    per_stage = stage_weight_bytes(arch, fmt, tp=tp, pp=pp, config=config, tensors=tensors)
    if tensors is not None and spec.speculator.shares_lm_head:  # it scores with the target's LM head: read it too
        shared_head = WeightTensor("lm_head", "lm_head", arch.vocab_size, arch.hidden_size, tp_style="vocab")
        per_stage[-1] += weight_bytes_per_gpu(arch, fmt, tp=tp, tensors=[shared_head])
    embedding_per_gpu = ceil(whole.components.get("embedding", 0) / tp)
    looked_up_only = not arch.tie_word_embeddings or pp > 1
    vision_per_gpu = ceil(whole.components.get("vision", 0) / tp)  # on every stage, idle while decoding text
    lookup = [(embedding_per_gpu if (s == 0 and looked_up_only) else 0) + vision_per_gpu for s in range(pp)]
    moe_layers = set(arch.moe.moe_layers) if arch.moe else set()
    experts_per_gpu = whole.components.get("experts", 0) / tp
    expert = [
        round(experts_per_gpu * len(moe_layers & set(stage)) / len(moe_layers)) if moe_layers else 0 for stage in stages
    ]
    # a head's LM head scores its own draft vocabulary (EAGLE-3's draft_vocab_size), else the whole vocabulary
    head_vocab = (spec.speculator.draft_vocab_size if spec.speculator else None) or arch.vocab_size
    lm_head_params = head_vocab * arch.hidden_size
    untied_head = params.components.get("lm_head", 0)
    matmul = params.active_params - params.components.get("embedding", 0) - untied_head
    matmul -= params.components.get("norms", 0) + params.components.get("vision", 0)
    dtype = compute_dtype(gpu, fmt)
    activation = element_bytes(fmt.activation_dtype)
    kv_bytes = kv_element_bytes(kv_dtype, arch, fmt)
    return ModelCost(
        model_id=spec.id,
        arch=arch,
        weight_format=fmt.id,
        compute_dtype=dtype,
        attention_dtype=attention_dtype(gpu, kv_bytes),
        tp=tp,
        pp=pp,
        kv_element_bytes=kv_bytes,
        activation_bytes=activation,
        stage_layers=tuple(tuple(stage) for stage in stages),
        stage_weight_bytes=tuple(per_stage),
        stage_lookup_bytes=tuple(lookup),
        stage_expert_bytes=tuple(expert),
        matmul_params_per_gpu=matmul / tp,
        lm_head_params_per_gpu=lm_head_params / tp,
    )


def attention_flops_per_position(arch: Architecture, tp: int, layers: tuple[int, ...], *, sliding: bool) -> float:
    """Attention FLOPs per (query, cached key) pair on one GPU, summed over the full (or sliding) layers.

    QKᵀ and PV each take ``2 · heads/tp · head_dim`` per pair; absorbed MLA scores over the latent
    and rope parts and reads values over the latent.
    """
    heads = arch.num_attention_heads / tp
    if arch.mla is not None:
        per_position = 2 * heads * (2 * arch.mla.kv_lora_rank + arch.mla.qk_rope_head_dim)
    else:
        per_position = 4 * heads * arch.head_dim
    windowed = arch.sliding_window is not None
    count = sum(1 for layer in layers if (windowed and arch.layer_types[layer] == "sliding_attention") == sliding)
    return per_position * count


def elementwise_bytes_per_token(arch: Architecture, tp: int, activation_bytes: int) -> float:
    """HBM bytes one GPU moves per new token of a pass in its memory-bound elementwise kernels.

    In every decoder layer each of the ``norms_per_layer`` fused residual-add + RMSNorm kernels reads the layer's
    input and the residual and writes both (``4·h`` values; every tensor-parallel rank normalises the whole
    hidden state), and the gated MLP's SiLU-and-multiply reads gate and up (``2·I/tp``) and writes their product
    (``I/tp``); a MoE layer's routed experts run their activation inside the expert kernel, its shared expert
    as a dense MLP. The kernels and sizes of vLLM's ``fused_add_rms_norm`` and ``silu_and_mul`` ops, and of
    aiconfigurator-core's Llama model ("add_norm" ``2h → 2h``, "act_gate" ``2I/tp → I/tp``,
    https://github.com/ai-dynamo/aiconfigurator, ``sdk/models/llama.py``).

    >>> from planner.catalog.lookup import get_model
    >>> elementwise_bytes_per_token(get_model("Llama-3.1-70B").architecture, 2, 2)  # 80 × (2·4·8192 + 3·14336) × 2
    17367040.0
    """
    h = arch.hidden_size
    moe = arch.moe
    moe_layers = len(moe.moe_layers) if moe is not None else 0
    dense_layers = arch.num_layers - moe_layers
    norms = arch.norms_per_layer * 4 * h
    per_layer_dense = norms + 3 * arch.intermediate_size / tp
    per_layer_moe = norms + (3 * moe.shared_intermediate_size / tp if moe is not None else 0.0)
    return float((dense_layers * per_layer_dense + moe_layers * per_layer_moe) * activation_bytes)


def allreduce_s(message_bytes: float, tp: int, gpu: GpuSpec, profile: SpeedProfile) -> float:
    """One ring all-reduce of ``message_bytes`` over ``tp`` GPUs: latency + 2(tp−1)/tp · bytes / link."""
    if tp <= 1:
        return 0.0
    link = gpu.scale_up_bandwidth_gb_s * GB / 2 * profile.link_frac
    if link <= 0:
        raise InputError("gpu", gpu.id, "a GPU with a scale-up link for tensor parallelism > 1")
    return profile.allreduce_latency_s + 2 * (tp - 1) / tp * message_bytes / link
