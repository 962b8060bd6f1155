"""The serving engines' default limits when a deployment leaves them unset, one typed shape per engine (a field of
each engine's profile in ``data/engines.json``, :mod:`planner.engines.profiles`): tokens per step and sequences at once
by GPU tier, and SGLang's reserved-memory rule for its default memory fraction.

>>> from planner.catalog.lookup import get_gpu, get_model
>>> from planner.engines.profiles import engine_profile
>>> dep = Deployment.build(target=get_model("Llama-3.1-8B"), gpu=get_gpu("b200-180gb"))
>>> [engine_profile("vllm", r).default_limits.batch(dep, 178 * GIB) for r in ("0.27.0", "0.28.0")]
[(8192, 1024), (16384, 1024)]
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from planner.deployment import Deployment
from planner.engines.sglang_fractions import sglang_gpu_mib
from planner.units import GIB


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Batch(_Strict):
    max_num_batched_tokens: int = Field(ge=1)
    max_num_seqs: int = Field(ge=1)


class VllmLimits(_Strict):
    """vLLM V1: larger defaults on GPUs with at least ``large_gpu_min_total_gib`` (A100s excepted), and from 0.28
    the largest on GPUs with at least ``largest_gpu_min_total_gib`` (B200, MI300X and up)."""

    large_gpu_min_total_gib: float
    large_gpu_excluded_names: tuple[str, ...]
    large: Batch
    small: Batch
    largest_gpu_min_total_gib: float | None = None
    largest: Batch | None = None

    def batch(self, dep: Deployment, total_bytes: int) -> tuple[int, int]:
        if self.largest is not None and total_bytes >= (self.largest_gpu_min_total_gib or 0) * GIB:
            return self.largest.max_num_batched_tokens, self.largest.max_num_seqs
        large = total_bytes >= self.large_gpu_min_total_gib * GIB and not any(
            name in dep.gpu.name.lower() for name in self.large_gpu_excluded_names
        )
        tier = self.large if large else self.small
        return tier.max_num_batched_tokens, tier.max_num_seqs


class VllmV0Limits(_Strict):
    """vLLM V0: ``max(max_model_len, floor)`` tokens; chunked prefill (``chunked_prefill_max_num_batched_tokens``
    per step) by default above ``chunked_prefill_above_len``, except with a draft when
    ``chunked_prefill_default_with_speculation`` is false (V0 leaves it off for speculative decoding)."""

    max_num_batched_tokens_at_least: int = Field(ge=1)
    chunked_prefill_above_len: int = Field(ge=1)
    chunked_prefill_max_num_batched_tokens: int = Field(ge=1)
    chunked_prefill_default_with_speculation: bool
    max_num_seqs: int = Field(ge=1)
    source: str

    def batch(self, dep: Deployment, total_bytes: int) -> tuple[int, int]:
        length = dep.resolved_max_model_len
        chunked = length > self.chunked_prefill_above_len and (
            not dep.is_speculative or self.chunked_prefill_default_with_speculation
        )
        if chunked:
            return self.chunked_prefill_max_num_batched_tokens, self.max_num_seqs
        return max(length, self.max_num_batched_tokens_at_least), self.max_num_seqs


class SglangGpuTier(_Strict):
    """One GPU-memory class of SGLang's ``_handle_gpu_memory_settings`` (``below_mib`` None: the largest)."""

    below_mib: int | None = Field(ge=1)
    chunked_prefill_size: int = Field(ge=1)
    cuda_graph_max_bs_tp_below_4: int = Field(ge=1)
    cuda_graph_max_bs_tp_4_up: int = Field(ge=1)


class SglangLimits(_Strict):
    """SGLang: chunked-prefill size and CUDA-graph batch by GPU memory (MiB, as nvidia-smi reports it) and TP;
    ``--max-running-requests`` defaults to 48 with speculation, else ``min(max(tokens / context · 512, 2048), 4096)``.
    """

    gpu_memory_tiers: tuple[SglangGpuTier, ...]
    max_running_requests_floor: int = Field(ge=1)
    max_running_requests_cap: int = Field(ge=1)
    max_running_requests_per_context: int = Field(ge=1)
    max_running_requests_with_speculation: int = Field(ge=1)
    source: str

    def tier(self, gpu_mib: float) -> SglangGpuTier:
        for tier in self.gpu_memory_tiers:
            if tier.below_mib is None or gpu_mib < tier.below_mib:
                return tier
        return self.gpu_memory_tiers[-1]

    def cuda_graph_max_bs(self, gpu_mib: float, tp: int) -> int:
        tier = self.tier(gpu_mib)
        return tier.cuda_graph_max_bs_tp_4_up if tp >= 4 else tier.cuda_graph_max_bs_tp_below_4

    def max_running_requests(self, tokens: int, context_len: int, speculative: bool) -> int:
        """SGLang's default ``max_running_requests`` for a pool of ``tokens`` tokens."""
        if speculative:
            return self.max_running_requests_with_speculation
        scaled = int(tokens / max(1, context_len) * self.max_running_requests_per_context)
        return min(max(scaled, self.max_running_requests_floor), self.max_running_requests_cap)

    def batch(self, dep: Deployment, total_bytes: int) -> tuple[int, int]:
        seqs = self.max_running_requests_with_speculation if dep.is_speculative else self.max_running_requests_floor
        return self.tier(sglang_gpu_mib(dep, total_bytes)).chunked_prefill_size, seqs


class FixedLimits(Batch):
    def batch(self, dep: Deployment, total_bytes: int) -> tuple[int, int]:
        return self.max_num_batched_tokens, self.max_num_seqs


class PerRequestLimits(_Strict):
    """transformers ``generate``: no batching engine; the batch is the deployment's ``hf_batch_size``."""

    max_num_batched_tokens: None = None
    max_num_seqs: None = None

    def batch(self, dep: Deployment, total_bytes: int) -> tuple[int, int]:
        return dep.hf_batch_size * dep.resolved_max_model_len, dep.hf_batch_size


class ReservedMemoryRule(_Strict):
    """SGLang's ``reserved_mem`` in MiB; ``draft_extra_mib`` by speculative method."""

    base_mib: float
    per_chunked_prefill_token_mib: float
    per_cuda_graph_bs_mib: float
    per_eighth_gpu_mib: float
    min_chunked_prefill_tokens: int
    large_gpu_above_mib: float
    min_mib_on_large_gpus: float
    draft_extra_mib: dict[str, float]
    fraction_decimals: int = Field(ge=0)
    #: Prefill CUDA graphs captured by default: MiB per captured token count (MLA models: ``prefill_graph_mla_mib``).
    prefill_graph_mib_per_size: float = 0.0
    prefill_graph_mla_mib: float = 0.0
    #: Speculative decoding (0.5.10 to 0.5.13) or pipeline parallelism turns the prefill (piecewise) CUDA graphs
    #: off, and their reserve with them.
    prefill_graphs_off_with_speculation: bool = False
    prefill_graphs_off_with_pipeline: bool = False
    source: str

    def prefill_graph_mib(self, chunked_prefill_size: int, mla: bool) -> float:
        """The prefill CUDA-graph reserve: ``len(sizes) · 8`` MiB for the token counts captured up to the chunk
        (MLA: 1.5 GiB flat).

        >>> rule = ReservedMemoryRule(base_mib=0, per_chunked_prefill_token_mib=0, per_cuda_graph_bs_mib=0,
        ...     per_eighth_gpu_mib=0, min_chunked_prefill_tokens=0, large_gpu_above_mib=0, min_mib_on_large_gpus=0,
        ...     draft_extra_mib={}, fraction_decimals=3, prefill_graph_mib_per_size=8, source="")
        >>> rule.prefill_graph_mib(2048, mla=False)  # 42 sizes, as a 2,048-token log captures them
        336.0
        """
        if not self.prefill_graph_mib_per_size:
            return 0.0
        if mla:
            return self.prefill_graph_mla_mib
        return len(prefill_graph_sizes(chunked_prefill_size)) * self.prefill_graph_mib_per_size


def prefill_graph_sizes(max_tokens: int) -> list[int]:
    """The token counts SGLang captures prefill CUDA graphs for, up to ``max_tokens`` (the chunked-prefill size):
    4..32 by 4, 48..256 by 16, 288..512 by 32, 576..1,024 by 64, 1,280..4,096 by 256, then by 512."""
    sizes = [*range(4, 33, 4), *range(48, 257, 16), *range(288, 513, 32), *range(576, 1025, 64)]
    sizes += [*range(1280, 4097, 256), *range(4608, max_tokens + 1, 512)]
    return [size for size in sizes if size <= max_tokens]
