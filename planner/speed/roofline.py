"""Time of one forward pass of a deployed model: bytes over bandwidth vs FLOPs over peak, plus comms.

For ``B`` sequences each adding ``q`` query tokens at a cached context of ``S`` tokens, per GPU after
tensor-parallel sharding, summed over pipeline stages (docs/speed-model.md)::

    T = Σ_stages max(bytes_read / (BW · η_bw), FLOPs / (peak · η_flops))
        + layers · t_layer + t_step (+ t_tp_step when tp > 1)        (launch floor, scheduler)
        + 2 · layers · (t_ar + 2(tp−1)/tp · B·q·H·a / (link · η_link))   (ring all-reduce, tp > 1)
        + one logits gather (vocab-parallel LM head)

* bytes read: every weight on the GPU except an untied embedding table (only looked up), routed
  experts only in the share a batch touches (below), the KV cache of every sequence
  (``planner.model.kv_bytes.kv_bytes_for_context``) and the new tokens' KV written;
* FLOPs: ``2 · active matmul params / tp`` per token (Kaplan et al. 2020, "Scaling laws", §2.1),
  ``4 · heads/tp · head_dim · context`` per token and layer for attention (QKᵀ and PV), the LM
  head for tokens that need logits;
* MoE: with ``N = B·q`` tokens each routed to ``k`` of ``E`` experts, uniform routing touches
  ``E · (1 − (1 − k/E)^N)`` experts per layer on average (balls into bins), so decode at small
  batch reads few experts and large batches read them all;
* the peak is the dense TFLOPS of the weight format's GEMM: fp8 uses ``fp8_dense_tflops`` where
  the GPU has it, fp4 formats ``fp4_dense_tflops``, else bf16 (fp16 where bf16 is missing, e.g.
  T4); weight-only int4/int8 formats compute in their unquantized dtype;
* link bandwidth is one direction of ``GpuSpec.scale_up_bandwidth_gb_s`` (listed bidirectional).

Every efficiency and overhead comes from the engine's :class:`~planner.speed.profiles.SpeedProfile`.

>>> from planner.catalog.lookup import get_gpu, get_kv_dtype, get_model, get_weight_format
>>> from planner.speed.profiles import speed_profile
>>> h100 = get_gpu("h100-sxm-80gb")
>>> cost = model_cost(get_model("Llama-3.1-70B"), get_weight_format("bf16"), get_kv_dtype("auto"), h100, tp=8)
>>> step = forward_time(cost, h100, speed_profile("vllm", "nvidia"),
...                     batch_size=1, query_tokens=1, context_tokens=1024)
>>> step.bound, step.weight_read_bytes < step.weight_bytes
('memory', True)
"""

from __future__ import annotations

from math import ceil

from pydantic import BaseModel, ConfigDict

from planner.catalog.schemas import GpuSpec, ModelSpec
from planner.errors import InputError
from planner.model.dtypes import KvDtype, WeightFormat, element_bytes
from planner.model.geometry import Architecture
from planner.model.kv_bytes import kv_bytes_for_context, kv_bytes_per_token, kv_element_bytes
from planner.model.param_count import count_parameters
from planner.model.weight_bytes import pp_stage_layers, stage_weight_bytes, weight_bytes
from planner.speed.profiles import SpeedProfile
from planner.units import GB, TERA


class ModelCost(BaseModel):
    """What one forward pass of a deployed model costs per GPU, before the batch is known."""

    model_config = ConfigDict(frozen=True)

    model_id: str
    arch: Architecture
    weight_format: str
    compute_dtype: str
    tp: int
    pp: int
    kv_element_bytes: int
    activation_bytes: int
    stage_layers: tuple[tuple[int, ...], ...]
    #: Bytes of weights on one GPU of each stage.
    stage_weight_bytes: tuple[int, ...]
    #: Of which an embedding table only looked up (not streamed) in a forward pass.
    stage_lookup_bytes: tuple[int, ...]
    #: Of which routed-expert weights (read in the share a batch touches).
    stage_expert_bytes: tuple[int, ...]
    #: Matmul parameters per GPU outside the LM head, summed over stages (active experts only).
    matmul_params_per_gpu: float
    lm_head_params_per_gpu: float


class ForwardTime(BaseModel):
    """One forward pass: what it moves and computes per GPU, and how long each part takes."""

    batch_size: int
    query_tokens: int
    context_tokens: int
    weight_bytes: int
    weight_read_bytes: int
    kv_read_bytes: int
    flops: float
    memory_s: float
    compute_s: float
    overhead_s: float
    communication_s: float
    total_s: float
    bound: str


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
    whole = weight_bytes(arch, fmt, config)
    params = count_parameters(arch, config)
    stages = pp_stage_layers(arch.num_layers, pp)
    per_stage = stage_weight_bytes(arch, fmt, tp=tp, pp=pp, config=config)
    embedding_per_gpu = ceil(whole.components.get("embedding", 0) / tp)
    looked_up_only = not arch.tie_word_embeddings or pp > 1
    lookup = [embedding_per_gpu if (s == 0 and looked_up_only) else 0 for s in range(pp)]
    moe_layers = set(arch.moe.moe_layers) if arch.moe else set()
    experts_per_gpu = whole.components.get("experts", 0) / tp
    expert = [
        round(experts_per_gpu * len(moe_layers & set(stage)) / len(moe_layers)) if moe_layers else 0 for stage in stages
    ]
    lm_head_params = arch.vocab_size * arch.hidden_size
    untied_head = params.components.get("lm_head", 0)
    matmul = params.active_params - params.components.get("embedding", 0) - untied_head
    matmul -= params.components.get("norms", 0)
    dtype = compute_dtype(gpu, fmt)
    activation = element_bytes(fmt.activation_dtype)
    return ModelCost(
        model_id=spec.id,
        arch=arch,
        weight_format=fmt.id,
        compute_dtype=dtype,
        tp=tp,
        pp=pp,
        kv_element_bytes=kv_element_bytes(kv_dtype, arch, fmt),
        activation_bytes=activation,
        stage_layers=tuple(tuple(stage) for stage in stages),
        stage_weight_bytes=tuple(per_stage),
        stage_lookup_bytes=tuple(lookup),
        stage_expert_bytes=tuple(expert),
        matmul_params_per_gpu=matmul / tp,
        lm_head_params_per_gpu=lm_head_params / tp,
    )


def _attention_flops_per_token(arch: Architecture, tp: int, context: float, layers: tuple[int, ...]) -> float:
    heads = arch.num_attention_heads / tp
    if arch.mla is not None:  # absorbed MLA: scores over the latent + rope part, values over the latent
        per_position = 2 * heads * (2 * arch.mla.kv_lora_rank + arch.mla.qk_rope_head_dim)
    else:
        per_position = 4 * heads * arch.head_dim
    total = 0.0
    for layer in layers:
        sliding = arch.layer_types[layer] == "sliding_attention" and arch.sliding_window is not None
        total += per_position * (min(context, arch.sliding_window) if sliding else context)
    return total


def allreduce_s(message_bytes: float, tp: int, gpu: GpuSpec, profile: SpeedProfile) -> float:
    """One ring all-reduce of ``message_bytes`` over ``tp`` GPUs: latency + 2(tp−1)/tp · bytes / link."""
    if tp <= 1:
        return 0.0
    link = gpu.scale_up_bandwidth_gb_s * GB / 2 * profile.link_frac
    if link <= 0:
        raise InputError("gpu", gpu.id, "a GPU with a scale-up link for tensor parallelism > 1")
    return profile.allreduce_latency_s + 2 * (tp - 1) / tp * message_bytes / link


def forward_time(
    cost: ModelCost,
    gpu: GpuSpec,
    profile: SpeedProfile,
    *,
    batch_size: int,
    query_tokens: int,
    context_tokens: int,
    logits_tokens: int | None = None,
    cuda_graphs: bool = True,
) -> ForwardTime:
    """Seconds of one forward pass of ``batch_size`` sequences × ``query_tokens`` new tokens each.

    ``context_tokens`` is what each sequence already has cached; ``logits_tokens`` (default
    ``query_tokens``) how many of its new tokens need logits (1 in a prefill, all in a verify).
    """
    if batch_size < 1:
        raise InputError("batch_size", batch_size, "an integer >= 1")
    if query_tokens < 1:
        raise InputError("query_tokens", query_tokens, "an integer >= 1")
    if context_tokens < 0:
        raise InputError("context_tokens", context_tokens, "an integer >= 0")
    arch = cost.arch
    logits = query_tokens if logits_tokens is None else logits_tokens
    tokens = batch_size * query_tokens
    bandwidth = gpu.memory_bandwidth_gb_s * GB * profile.bandwidth_frac
    peak = peak_flops(gpu, cost.compute_dtype) * profile.flops_frac
    touched = experts_touched_frac(tokens, arch.moe.num_experts, arch.moe.experts_per_token) if arch.moe else 1.0
    attention_context = context_tokens + (query_tokens + 1) / 2  # causal within the new tokens
    memory_s = compute_s = stages_s = 0.0
    weight_read = kv_read = 0
    flops = 0.0
    for index, layers in enumerate(cost.stage_layers):
        streamed = cost.stage_weight_bytes[index] - cost.stage_lookup_bytes[index]
        weights = round(streamed - cost.stage_expert_bytes[index] * (1 - touched))
        kv = batch_size * kv_bytes_for_context(arch, cost.kv_element_bytes, context_tokens, cost.tp, layers=layers)
        kv_new = tokens * kv_bytes_per_token(arch, cost.kv_element_bytes, cost.tp, layers=layers)
        stage_flops = 2 * cost.matmul_params_per_gpu * tokens * len(layers) / arch.num_layers
        stage_flops += tokens * _attention_flops_per_token(arch, cost.tp, attention_context, layers)
        if index == len(cost.stage_layers) - 1:
            stage_flops += 2 * cost.lm_head_params_per_gpu * batch_size * logits
        stage_memory = (weights + kv + kv_new) / bandwidth
        stage_compute = stage_flops / peak
        memory_s += stage_memory
        compute_s += stage_compute
        stages_s += max(stage_memory, stage_compute)
        weight_read += weights
        kv_read += kv
        flops += stage_flops
    per_layer = profile.layer_overhead_s if (cuda_graphs and profile.cuda_graphs) else profile.eager_layer_overhead_s
    overhead_s = arch.num_layers * per_layer + profile.step_overhead_s
    if cost.tp > 1:  # engines that broadcast each step's inputs to the TP workers (vLLM V0)
        overhead_s += profile.tp_step_overhead_s
    hidden_bytes = tokens * arch.hidden_size * cost.activation_bytes
    communication_s = 2 * arch.num_layers * allreduce_s(hidden_bytes, cost.tp, gpu, profile)
    if cost.tp > 1:  # gather of the vocab-parallel logits (half the bytes of an all-reduce)
        logits_bytes = batch_size * logits * arch.vocab_size * cost.activation_bytes
        communication_s += allreduce_s(logits_bytes / 2, cost.tp, gpu, profile)
    if cost.pp > 1:  # hidden states handed from stage to stage
        link = gpu.scale_up_bandwidth_gb_s * GB / 2 * profile.link_frac
        communication_s += (cost.pp - 1) * (profile.allreduce_latency_s + hidden_bytes / link)
    return ForwardTime(
        batch_size=batch_size,
        query_tokens=query_tokens,
        context_tokens=context_tokens,
        weight_bytes=max(cost.stage_weight_bytes),
        weight_read_bytes=weight_read,
        kv_read_bytes=kv_read,
        flops=flops,
        memory_s=memory_s,
        compute_s=compute_s,
        overhead_s=overhead_s,
        communication_s=communication_s,
        total_s=stages_s + overhead_s + communication_s,
        bound="memory" if memory_s >= compute_s else "compute",
    )
