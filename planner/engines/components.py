"""The memory components an engine subtracts before sizing its KV pool, as the profile's fields select them.

The structure follows the engines' code (see each profile's ``source``); the coefficients are calibrated on
real start-up logs (``calibration`` in ``data/engines.json``; error printed by ``make bench-accuracy``).

* torch peak increase (profile run): ``max(forward, sampler[, rejection warm-up]) + moe_workspace`` where
  ``forward = f · N · (2·H + 3·I/tp) · act_bytes`` over ``N = max_num_batched_tokens`` tokens (f per engine:
  V0 keeps one more hidden-sized tensor alive than V1's compiled graph frees),
  ``sampler = s · seqs · vocab`` (fp32 logits and the sampler's copies, on the last stage only; seqs =
  ``max_num_seqs`` dummy requests, or TensorRT-LLM's few context-only requests), and with a draft vLLM V1's
  rejection-sampler warm-up ``(s + rows · act_bytes) · seqs · vocab``. The forward pass frees its
  intermediates before logits are computed, so the phases peak apart (V0 as V1);
* non-torch increase: a constant per parallel layout (NCCL and custom all-reduce buffers at TP > 1);
* CUDA graphs: ``first + c · layers · (capture_sizes − 1)`` (vLLM's estimate; subtracted from 0.20 on).

>>> from planner.engines.profiles import engine_profile
>>> round(non_torch_bytes(engine_profile("vllm"), tp=2, pp=1) / 2**30, 2)
2.08
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from planner.engines.profiles import EngineProfile, engines_file
from planner.facts import data_cache
from planner.model.dtypes import WeightFormat
from planner.model.geometry import Architecture
from planner.units import GIB, MIB


class NonTorchGib(BaseModel):
    """Non-torch memory per GPU by parallel layout (GiB); a missing layout falls back as documented below."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    tp1: float
    tp_multi: float | None = None
    tp_multi_pcie: float | None = None
    pp_only: float | None = None


class Calibration(BaseModel):
    model_config = ConfigDict(frozen=True)

    sampler_bytes_per_logit: float
    v0_sampler_bytes_per_logit: float
    forward_activation_factor: float
    v0_forward_activation_factor: float
    moe_workspace_factor: float
    non_torch: dict[str, NonTorchGib]
    cudagraph_first_capture_bytes: int
    cudagraph_bytes_per_layer_per_extra_graph: int


@data_cache
def calibration() -> Calibration:
    raw = engines_file()["calibration"]
    return Calibration(
        sampler_bytes_per_logit=raw["sampler_bytes_per_logit"]["value"],
        v0_sampler_bytes_per_logit=raw["v0_sampler_bytes_per_logit"]["value"],
        forward_activation_factor=raw["forward_activation_factor"]["value"],
        v0_forward_activation_factor=raw["v0_forward_activation_factor"]["value"],
        moe_workspace_factor=raw["moe_workspace_factor"]["value"],
        non_torch={
            key: NonTorchGib(**raw[key])
            for key in (
                "non_torch_gib",
                "v0_non_torch_gib",
                "v0_6_non_torch_gib",
                "v0_5_non_torch_gib",
                "sglang_non_torch_gib",
                "hf_context_gib",
            )
        },
        cudagraph_first_capture_bytes=round(raw["cudagraph"]["first_capture_mib"] * MIB),
        cudagraph_bytes_per_layer_per_extra_graph=round(raw["cudagraph"]["mib_per_layer_per_extra_graph"] * MIB),
    )


def forward_activation_bytes(
    arch: Architecture, tokens: int, tp: int, element_bytes: int, profile: EngineProfile | None = None
) -> int:
    """Peak live activations of one layer over ``tokens`` tokens on one GPU (factor: ``profile``'s
    ``forward_calibration``, default vLLM V1's)."""
    h = arch.hidden_size
    q = arch.num_attention_heads * arch.head_dim
    widths = [2 * h + (2 * q + 2 * arch.num_kv_heads * arch.head_dim) / tp]  # qkv and attention output
    has_dense_layers = arch.moe is None or len(arch.moe.moe_layers) < arch.num_layers
    if has_dense_layers:
        widths.append(2 * h + 3 * arch.intermediate_size / tp)  # gate_up output and activation output
    if arch.moe is not None:
        widths.append(2 * h + 3 * arch.moe.expert_intermediate_size / tp)
    factor = getattr(calibration(), profile.forward_calibration if profile else "forward_activation_factor")
    return round(factor * tokens * max(widths) * element_bytes)


def moe_workspace_bytes(
    arch: Architecture, tokens: int, tp: int, element_bytes: int, fmt: WeightFormat | None = None
) -> int:
    """Fused-MoE workspaces (vLLM keeps them between calls): ``N · top_k · (max(2I/tp, H) + I/tp)``; none where
    the weight format ``fmt`` runs its experts through kernels without them (``fused_moe_workspace``: MXFP4)."""
    if arch.moe is None or not arch.moe.moe_layers:
        return 0
    if fmt is not None and not fmt.fused_moe_workspace and fmt.quantizes("experts", "linear"):
        return 0
    width = arch.moe.expert_intermediate_size / tp
    per_token = arch.moe.experts_per_token * (max(2 * width, arch.hidden_size) + width)
    return round(calibration().moe_workspace_factor * tokens * per_token * element_bytes)


def sampler_bytes(profile: EngineProfile, vocab_size: int, num_seqs: int) -> int:
    """The profile run's sampler over ``num_seqs`` dummy requests and the full vocabulary."""
    per_logit = getattr(calibration(), profile.sampler_calibration)
    return round(per_logit * num_seqs * vocab_size)


def rejection_warmup_bytes(profile: EngineProfile, vocab_size: int, num_seqs: int, element_bytes: int) -> int:
    """vLLM V1's rejection-sampler warm-up at start-up with a speculative config (0 where the engine has none).

    ``gpu_model_runner._dummy_sampler_run``: after the sampler's warm-up it builds dummy draft/bonus target
    logits over the vocabulary and runs the rejection sampler, which samples the bonus rows and computes the
    target probabilities (the same top-k/top-p pass); the warm-up's logits stay allocated meanwhile.
    Source: https://github.com/vllm-project/vllm/blob/main/vllm/v1/worker/gpu_model_runner.py (``_dummy_sampler_run``).

    >>> from planner.engines.profiles import engine_profile
    >>> round(rejection_warmup_bytes(engine_profile("vllm"), 128256, 1024, 2) / 2**30, 2)
    2.64
    """
    rule = profile.rejection_sampler_warmup
    if rule is None:
        return 0
    kept = rule.kept_logit_rows_per_seq * num_seqs * vocab_size * element_bytes
    return sampler_bytes(profile, vocab_size, num_seqs) + kept


def combine_peaks(profile: EngineProfile, peaks: list[int]) -> int:
    """The profile run's peak over its phases: the largest (the engine frees between them) or their sum."""
    return max(peaks) if profile.activation_peak == "max" else sum(peaks)


def non_torch_bytes(profile: EngineProfile, tp: int, pp: int, peer_link: bool = True) -> int:
    """CUDA context growth, NCCL and all-reduce buffers; custom all-reduce needs a peer link (NVLink).

    A layout the calibration does not list costs what the nearest listed one does: TP over PCIe as TP
    over NVLink, TP as TP 1, PP alone as TP 1.
    """
    gib = calibration().non_torch[profile.non_torch_calibration]
    if tp > 1:
        multi = gib.tp_multi if gib.tp_multi is not None else gib.tp1
        value = gib.tp_multi_pcie if (not peer_link and gib.tp_multi_pcie is not None) else multi
    elif pp > 1:
        value = gib.pp_only if gib.pp_only is not None else gib.tp1
    else:
        value = gib.tp1
    return round(value * GIB)


def cudagraph_bytes(profile: EngineProfile, layers: int, capture_sizes: int) -> int:
    """vLLM's CUDA-graph memory estimate: a first capture, then per-graph memory growing with depth."""
    if not profile.cudagraph_estimated or capture_sizes <= 0:
        return 0
    cal = calibration()
    return (
        cal.cudagraph_first_capture_bytes + layers * (capture_sizes - 1) * cal.cudagraph_bytes_per_layer_per_extra_graph
    )


#: Rope types whose cos/sin cache vLLM stretches by the scaling factor (``LinearScalingRotaryEmbedding``,
#: ``DynamicNTKScalingRotaryEmbedding``); YaRN stretches the original context instead.
_STRETCHED_ROPES = frozenset({"linear", "dynamic"})


def rope_cache_bytes(arch: Architecture, config: dict, element_bytes: int) -> int:
    """vLLM's rotary-embedding cos/sin caches, allocated with the model and so logged inside "weights memory".

    One ``[positions, rotary_dim]`` tensor in the model dtype per distinct rope (``get_rope`` shares equal ones):
    positions = ``max_position_embeddings`` (times the factor for linear and dynamic scaling; YaRN:
    ``original_max_position_embeddings · factor``); Gemma-3's sliding layers add an unscaled local rope
    (``rope_local_base_freq``). MLA models (DeepSeek's own rope) are not counted. Source: vLLM
    ``model_executor/layers/rotary_embedding`` (https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/rotary_embedding).

    >>> from planner.catalog.lookup import get_model
    >>> m = get_model("Llama-3.1-8B")
    >>> rope_cache_bytes(m.architecture, m.config, 2) // 2**20
    32
    """
    if arch.mla is not None or arch.max_position_embeddings is None:
        return 0
    cfg = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    scaling = cfg.get("rope_scaling") or {}
    scaling = scaling if isinstance(scaling, dict) else {}
    kind = str(scaling.get("rope_type") or scaling.get("type") or "default")
    factor = float(scaling.get("factor") or 1.0)
    positions = arch.max_position_embeddings
    if kind in _STRETCHED_ROPES:
        positions = int(positions * factor)
    elif kind == "yarn":
        positions = int(int(scaling.get("original_max_position_embeddings") or positions) * factor)
    rotary_dim = int(arch.head_dim * float(cfg.get("partial_rotary_factor") or 1.0))
    caches = positions
    if arch.model_type.startswith("gemma3") and arch.num_sliding_layers:
        caches += arch.max_position_embeddings  # the local rope of the sliding layers, unscaled
    return caches * rotary_dim * element_bytes


def memory_accuracy() -> dict[str, str]:
    """The memory model's recorded error against real start-up logs (``calibration.accuracy`` in data/engines.json,
    as ``make bench-accuracy`` printed it): the command, the date and one line per figure."""
    return dict(engines_file()["calibration"].get("accuracy", {}))
