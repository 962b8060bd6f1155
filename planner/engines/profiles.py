"""How serving engines budget GPU memory: profiles from ``data/engines.json`` and the components
(activation peak, non-torch memory, CUDA graphs) each engine subtracts before sizing its KV pool.

The structure follows the engines' code (see each profile's ``source``); the coefficients are
calibrated on real start-up logs (``calibration`` in the data file, error printed by
``make bench-accuracy``).

* activation peak (vLLM V1 profile run): ``max(forward, sampler) + moe_workspace`` where
  ``forward = f · N · (2·H + 3·I/tp) · act_bytes`` over ``N = max_num_batched_tokens`` tokens,
  ``sampler = s · max_num_seqs · vocab`` (fp32 logits and the sampler's copies, on the last stage only);
* non-torch memory: a constant per parallel layout (NCCL and custom all-reduce buffers at TP > 1);
* CUDA graphs: ``first + c · layers · (capture_sizes − 1)`` (vLLM's estimate; subtracted from v0.21 on).

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), engine_version="0.19.0")
>>> limits = resolve_limits(dep, engine_profile(dep.engine, dep.engine_version))
>>> limits.max_num_batched_tokens, limits.max_num_seqs, limits.memory_fraction
(8192, 1024, 0.9)
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from planner.catalog.hardware import device_total_bytes
from planner.deployment import Deployment
from planner.errors import InputError
from planner.facts import data_cache, read_data_file
from planner.model.geometry import Architecture
from planner.units import GIB, MIB

BudgetRule = Literal[
    "fraction_of_total", "fraction_of_free_after_weights", "static_fraction_after_weights", "whole_device"
]
DraftKv = Literal["shared_pool", "even_block_split", "separate_pool_with_headroom", "separate_cache"]


class EngineProfile(BaseModel):
    """One engine release range: its budget rule, defaults and where they come from."""

    model_config = ConfigDict(extra="allow")

    id: str
    engine: str
    engine_name: str
    memory_knob: str | None
    min_version: str
    max_version: str
    budget_rule: BudgetRule
    default_memory_fraction: float | None
    block_size: int = Field(ge=1)
    draft_kv: DraftKv
    draft_weights_budgeted: bool = True
    sliding_window_savings: bool
    cudagraph_subtracted: bool
    default_limits: dict[str, Any]
    reserved_memory_rule: dict[str, float] | None = None
    source: str


class Calibration(BaseModel):
    model_config = ConfigDict(extra="allow")

    sampler_bytes_per_logit: float
    forward_activation_factor: float
    moe_workspace_factor: float
    non_torch_tp1_bytes: int
    non_torch_tp_multi_bytes: int
    non_torch_tp_multi_pcie_bytes: int
    non_torch_pp_only_bytes: int
    cudagraph_first_capture_bytes: int
    cudagraph_bytes_per_layer_per_extra_graph: int
    v0_sampler_bytes_per_logit: float
    sglang_non_torch_tp1_bytes: int
    sglang_non_torch_tp_multi_bytes: int
    hf_context_bytes: int


class Limits(BaseModel):
    """The engine knobs after defaults are applied (what the engine will actually use)."""

    memory_fraction: float
    block_size: int
    max_num_batched_tokens: int
    max_num_seqs: int
    cudagraph_capture_sizes: int
    notes: list[str] = []


def parse_version(text: str) -> tuple[int, int, int]:
    """``'0.11.0+582e4e37.nv25.11'`` -> ``(0, 11, 0)``; missing parts count as 0."""
    match = re.match(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?", text.strip())
    if not match:
        raise InputError("engine_version", text, "a release number such as 0.19.0")
    return tuple(int(part or 0) for part in match.groups())  # type: ignore[return-value]


@data_cache
def _engines() -> dict[str, Any]:
    return read_data_file("engines.json")


@data_cache
def list_engine_profiles() -> tuple[EngineProfile, ...]:
    profiles = []
    for engine in _engines()["engines"]:
        for raw in engine["profiles"]:
            profiles.append(
                EngineProfile(engine=engine["id"], engine_name=engine["name"], memory_knob=engine["memory_knob"], **raw)
            )
    return tuple(profiles)


@data_cache
def calibration() -> Calibration:
    raw = _engines()["calibration"]
    nt, sg = raw["non_torch_gib"], raw["sglang_non_torch_gib"]
    return Calibration(
        sampler_bytes_per_logit=raw["sampler_bytes_per_logit"]["value"],
        forward_activation_factor=raw["forward_activation_factor"]["value"],
        moe_workspace_factor=raw["moe_workspace_factor"]["value"],
        non_torch_tp1_bytes=round(nt["tp1"] * GIB),
        non_torch_tp_multi_bytes=round(nt["tp_multi"] * GIB),
        non_torch_tp_multi_pcie_bytes=round(nt["tp_multi_pcie"] * GIB),
        non_torch_pp_only_bytes=round(nt["pp_only"] * GIB),
        cudagraph_first_capture_bytes=round(raw["cudagraph"]["first_capture_mib"] * MIB),
        cudagraph_bytes_per_layer_per_extra_graph=round(raw["cudagraph"]["mib_per_layer_per_extra_graph"] * MIB),
        v0_sampler_bytes_per_logit=raw["v0_sampler_bytes_per_logit"]["value"],
        sglang_non_torch_tp1_bytes=round(sg["tp1"] * GIB),
        sglang_non_torch_tp_multi_bytes=round(sg["tp_multi"] * GIB),
        hf_context_bytes=round(raw["hf_context_gib"]["value"] * GIB),
    )


def engine_profile(engine: str, version: str | None = None) -> EngineProfile:
    """The profile of ``engine`` covering ``version`` (default: the newest profiled release)."""
    candidates = [p for p in list_engine_profiles() if p.engine == engine]
    if not candidates:
        known = sorted({p.engine for p in list_engine_profiles()})
        raise InputError("engine", engine, f"one of {', '.join(known)}")
    if version is None:
        return max(candidates, key=lambda p: parse_version(p.min_version))
    wanted = parse_version(version)
    for profile in candidates:
        if parse_version(profile.min_version) <= wanted < parse_version(profile.max_version):
            return profile
    ranges = ", ".join(f"[{p.min_version}, {p.max_version})" for p in candidates)
    raise InputError("engine_version", version, f"a {engine} release in {ranges}")


def capture_size_count(max_capture_size: int) -> int:
    """Number of CUDA-graph batch sizes vLLM V1 captures: 1, 2, 4, 8..256 by 8, then by 16.

    >>> capture_size_count(512), capture_size_count(16)
    (51, 5)
    """
    sizes = [s for s in (1, 2, 4) if s <= max_capture_size]
    sizes += list(range(8, min(256, max_capture_size) + 1, 8))
    sizes += list(range(272, max_capture_size + 1, 16))
    return len(sizes)


def resolve_limits(dep: Deployment, profile: EngineProfile) -> Limits:
    """Apply the engine's documented defaults to the knobs the deployment leaves unset."""
    limits = profile.default_limits
    total = dep.gpu_memory_bytes or device_total_bytes(dep.gpu).bytes
    notes: list[str] = []
    fraction = dep.memory_fraction if dep.memory_fraction is not None else profile.default_memory_fraction
    if fraction is None:  # SGLang derives mem_fraction_static from its reserved-memory rule
        fraction = sglang_default_fraction(dep, profile, total)
        notes.append(f"mem_fraction_static {fraction:.3f} from SGLang's reserved-memory rule")
    if profile.engine == "vllm":
        large = total >= limits["large_gpu_min_total_gib"] * GIB and not any(
            name in dep.gpu.name.lower() for name in limits["large_gpu_excluded_names"]
        )
        tier = limits["large" if large else "small"]
        tokens, seqs = tier["max_num_batched_tokens"], tier["max_num_seqs"]
    elif profile.engine == "vllm-v0":
        long = dep.resolved_max_model_len > limits["chunked_prefill_above_len"]
        tokens = limits["chunked_prefill_max_num_batched_tokens"] if long else max(dep.resolved_max_model_len, 2048)
        seqs = limits["max_num_seqs"]
    elif profile.engine == "hf":
        tokens, seqs = dep.hf_batch_size * dep.resolved_max_model_len, dep.hf_batch_size
    else:
        tokens = limits["max_num_batched_tokens"]
        seqs = limits["max_num_seqs"]
        if profile.engine == "sglang":
            tokens = _sglang_chunk(limits, total)
    tokens = dep.max_num_batched_tokens or tokens
    seqs = dep.max_num_seqs or seqs
    captures = 0 if dep.enforce_eager else capture_size_count(min(2 * seqs, 512))
    return Limits(
        memory_fraction=fraction,
        block_size=profile.block_size,
        max_num_batched_tokens=tokens,
        max_num_seqs=seqs,
        cudagraph_capture_sizes=captures,
        notes=notes,
    )


def _sglang_chunk(limits: dict[str, Any], total_bytes: int) -> int:
    for upper_gib, chunk in limits["chunked_prefill_size_by_gpu_gib"]:
        if total_bytes < upper_gib * GIB:
            return int(chunk)
    return int(limits["chunked_prefill_size_by_gpu_gib"][-1][1])


def sglang_default_fraction(dep: Deployment, profile: EngineProfile, total_bytes: int) -> float:
    """SGLang's default ``mem_fraction_static = (gpu_mem - reserved_mem) / gpu_mem``."""
    rule = profile.reserved_memory_rule or {}
    chunk = dep.max_num_batched_tokens or _sglang_chunk(profile.default_limits, total_bytes)
    graph_bs = profile.default_limits["cuda_graph_max_bs"]
    reserved_mib = (
        rule["base_mib"]
        + max(chunk, 2048) * rule["per_chunked_prefill_token_mib"]
        + graph_bs * rule["per_cuda_graph_bs_mib"]
        + dep.tp * dep.pp / 8 * rule["per_eighth_gpu_mib"]
    )
    reserved = reserved_mib * MIB
    if total_bytes > 60 * GIB:
        reserved = max(reserved, rule["min_gib_on_gpus_above_60_gib"] * GIB)
    if dep.draft is not None:
        reserved += rule["standalone_draft_extra_gib"] * GIB
    return max(0.05, (total_bytes - reserved) / total_bytes)


# ----- components -------------------------------------------------------------------------


def act_element_bytes(weight_format_id: str, unquantized_dtype: str) -> int:
    return 4 if (weight_format_id == "fp32" or unquantized_dtype == "fp32") else 2


def forward_activation_bytes(arch: Architecture, tokens: int, tp: int, element_bytes: int) -> int:
    """Peak live activations of one layer over ``tokens`` tokens on one GPU."""
    h = arch.hidden_size
    q = arch.num_attention_heads * arch.head_dim
    widths = [2 * h + (2 * q + 2 * arch.num_kv_heads * arch.head_dim) / tp]  # qkv and attention output
    has_dense_layers = arch.moe is None or len(arch.moe.moe_layers) < arch.num_layers
    if has_dense_layers:
        widths.append(2 * h + 3 * arch.intermediate_size / tp)  # gate_up output and activation output
    if arch.moe is not None:
        widths.append(2 * h + 3 * arch.moe.expert_intermediate_size / tp)
    return round(calibration().forward_activation_factor * tokens * max(widths) * element_bytes)


def moe_workspace_bytes(arch: Architecture, tokens: int, tp: int, element_bytes: int) -> int:
    """Fused-MoE workspaces (vLLM keeps them between calls): ``N · top_k · (max(2I/tp, H) + I/tp)``."""
    if arch.moe is None or not arch.moe.moe_layers:
        return 0
    width = arch.moe.expert_intermediate_size / tp
    per_token = arch.moe.experts_per_token * (max(2 * width, arch.hidden_size) + width)
    return round(calibration().moe_workspace_factor * tokens * per_token * element_bytes)


def sampler_bytes(vocab_size: int, num_seqs: int, per_logit: float | None = None) -> int:
    """The profile run's sampler over ``num_seqs`` dummy requests and the full vocabulary."""
    return round((per_logit or calibration().sampler_bytes_per_logit) * num_seqs * vocab_size)


def non_torch_bytes(engine: str, tp: int, pp: int, peer_link: bool = True) -> int:
    """CUDA context growth, NCCL and all-reduce buffers; custom all-reduce needs a peer link (NVLink)."""
    cal = calibration()
    if engine == "sglang":
        return cal.sglang_non_torch_tp_multi_bytes if tp > 1 else cal.sglang_non_torch_tp1_bytes
    if engine == "hf":
        return cal.hf_context_bytes
    if tp > 1:
        return cal.non_torch_tp_multi_bytes if peer_link else cal.non_torch_tp_multi_pcie_bytes
    return cal.non_torch_pp_only_bytes if pp > 1 else cal.non_torch_tp1_bytes


def cudagraph_bytes(layers: int, capture_sizes: int) -> int:
    """vLLM's CUDA-graph memory estimate: a first capture, then per-graph memory growing with depth."""
    if capture_sizes <= 0:
        return 0
    cal = calibration()
    return (
        cal.cudagraph_first_capture_bytes + layers * (capture_sizes - 1) * cal.cudagraph_bytes_per_layer_per_extra_graph
    )
