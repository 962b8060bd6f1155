"""Which batch sizes an engine captured CUDA graphs at, and what a step of a given size runs at.

A captured graph replays a fixed shape, so an engine pads a batch up to the next captured size (a decode batch of 33
sequences runs as 40 on vLLM) and runs a batch above the largest one, or one it did not capture, without graphs:

* **vLLM V1** captures token counts ``[1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16)``, ``max`` from
  ``max_num_seqs`` (× 2, or × (1 + K) with a draft; capped at 512) (``vllm/config/vllm.py``
  ``VllmConfig._set_cudagraph_sizes``; the cap rule is ``cudagraph_capture`` in ``data/engines.json``). Uniform
  decode steps replay full graphs and mixed prefill/decode steps piecewise ones, both padded in tokens
  (``vllm/v1/worker/gpu_model_runner.py``, ``CUDAGraphMode.FULL_AND_PIECEWISE``, the default since v0.11);
* **vLLM V0** captures decode batches ``[1, 2, 4]`` and multiples of 8 up to ``max_num_seqs`` rounded up to 8
  (``vllm/worker/model_runner.py`` ``_BATCH_SIZES_TO_CAPTURE``, ``_get_max_graph_batch_size``), decode only,
  padded: up to 256 at most before v0.6.0, up to 8,192 from v0.6.0 (a server at ``--max-num-seqs 512`` replays
  graphs up to 512);
* **SGLang** captures decode batch sizes (requests; an EAGLE verify graph holds ``bs × num_draft_tokens`` tokens):
  ``[1, 2, 4, 8, 12] + range(16, 257, 8) + range(272, 512, 16) + range(512, max + 1, 32)``, or with speculation
  ``range(1, 9) + range(10, 33, 2) + range(40, 65, 4) + range(72, 257, 8) + range(272, max + 1, 16)``, up to
  ``cuda_graph_max_bs`` (by GPU memory and TP, ``data/engines.json``) (``python/sglang/srt/server_args.py``
  ``ServerArgs._generate_cuda_graph_batch_sizes``); prefill (extend) batches run without graphs;
* **TensorRT-LLM** (PyTorch backend) captures generation-only batches ``range(1, 32) + [32, 64, 128]`` up to
  ``CudaGraphConfig.max_batch_size`` (128 by default) and, with ``enable_padding`` false by default, runs any other
  size without graphs (``tensorrt_llm/llmapi/llm_args.py`` ``CudaGraphConfig._generate_cuda_graph_batch_sizes``);
* transformers ``generate`` and ``--enforce-eager`` capture nothing.

Each engine's rule, with its source, is a row of ``data/cuda_graphs.json``.

Padding tokens go through the weight GEMMs only (no attention context, no logits); a decode-only step that no graph
covers pays the eager per-layer launch cost. Steps with prefill chunks keep the graphs' cost whatever their size: their
GPU work hides the launches.

>>> plan = GraphPlan(sizes=vllm_capture_sizes(512), unit="tokens", pads=True, mixed=True, engine="vllm")
>>> plan.run(seqs=33, query_tokens=1), plan.run(seqs=33, query_tokens=4), plan.run(seqs=600, query_tokens=1)
((7, False), (4, False), (0, True))
>>> sglang = GraphPlan(sizes=sglang_capture_sizes(48, speculative=True), unit="seqs", pads=True, engine="sglang")
>>> sglang.run(seqs=33, query_tokens=8)
(56, False)
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from planner.catalog.hardware import device_total_bytes
from planner.deployment import Deployment
from planner.engines.profiles import engine_profile, parse_version, resolve_limits, sglang_gpu_mib
from planner.facts import data_cache, load_model

#: TensorRT-LLM's default ``CudaGraphConfig.max_batch_size`` (``max_batch_size or 128``).
TRTLLM_GRAPH_MAX_BATCH = 128
#: vLLM V0's largest capturable decode batch: ``_BATCH_SIZES_TO_CAPTURE`` ends at 8 × 32 before v0.6.0 and at
#: 8 × 1,024 from v0.6.0 (``vllm/worker/model_runner.py`` of v0.5.5 and v0.6.0).
VLLM_V0_GRAPH_MAX_BATCH = {(0, 0, 0): 256, (0, 6, 0): 8192}
GRAPHS_FILE = "cuda_graphs.json"


class EngineGraphs(BaseModel):
    """One engine's capture rule (``data/cuda_graphs.json``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engine: str
    ladder: Literal["vllm", "vllm_v0", "sglang", "trtllm", "none"]
    largest: Literal[
        "engine_profile_rule", "vllm_v0_max_num_seqs", "sglang_cuda_graph_max_bs",
        "trtllm_default_128", "none",
    ]  # fmt: skip
    unit: Literal["tokens", "seqs"]
    pads: bool
    mixed_steps: bool
    source: str = Field(min_length=1)


class GraphsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str
    engines: list[EngineGraphs]


@data_cache
def engine_graphs() -> dict[str, EngineGraphs]:
    """Every engine's capture rule, by engine id."""
    parsed = load_model(GRAPHS_FILE, GraphsFile)
    return {entry.engine: entry for entry in parsed.engines}


def vllm_capture_sizes(largest: int) -> tuple[int, ...]:
    """vLLM V1's default capture sizes (tokens) up to ``largest``.

    >>> len(vllm_capture_sizes(512)), vllm_capture_sizes(16)
    (51, (1, 2, 4, 8, 16))
    """
    sizes = [s for s in (1, 2, 4) if s <= largest]
    sizes += range(8, min(256, largest + 1), 8)
    sizes += range(256, largest + 1, 16)
    return tuple(sizes)


def vllm_v0_capture_sizes(largest: int) -> tuple[int, ...]:
    """vLLM V0's capture sizes (decode batches) up to ``largest``: 1, 2, 4, then every multiple of 8.

    >>> vllm_v0_capture_sizes(512)[-3:], len(vllm_v0_capture_sizes(256))
    ((496, 504, 512), 35)
    """
    return tuple(s for s in (1, 2, 4) if s <= largest) + tuple(range(8, largest + 1, 8))


def vllm_v0_largest(max_num_seqs: int, version: str | None) -> int:
    """The largest decode batch vLLM V0 captures (``_get_max_graph_batch_size``): ``max_num_seqs`` padded as a
    batch is (``_get_graph_batch_size``: 3-4 to 4, above that to a multiple of 8), at most the last capturable
    size of the release (``version``; None: the newest V0 release).

    >>> vllm_v0_largest(512, "0.5.4"), vllm_v0_largest(512, "0.6.0"), vllm_v0_largest(250, None)
    (256, 512, 256)
    """
    release = parse_version(version) if version is not None else max(VLLM_V0_GRAPH_MAX_BATCH)
    cap = VLLM_V0_GRAPH_MAX_BATCH[max(start for start in VLLM_V0_GRAPH_MAX_BATCH if start <= release)]
    padded = max_num_seqs if max_num_seqs <= 2 else 4 if max_num_seqs <= 4 else -(-max_num_seqs // 8) * 8
    return min(cap, padded)


def sglang_capture_sizes(max_bs: int, *, speculative: bool) -> tuple[int, ...]:
    """SGLang's default CUDA-graph batch sizes up to ``cuda_graph_max_bs``."""
    if speculative:
        sizes = [*range(1, 9), *range(10, 33, 2), *range(40, 65, 4), *range(72, 257, 8), *range(272, max_bs + 1, 16)]
    else:
        sizes = [1, 2, 4, 8, 12, *range(16, 257, 8), *range(272, 512, 16), *range(512, max_bs + 1, 32)]
    return tuple(s for s in sizes if s <= max_bs)


def trtllm_capture_sizes(max_batch: int = TRTLLM_GRAPH_MAX_BATCH) -> tuple[int, ...]:
    """TensorRT-LLM's default graph batch sizes without padding (``enable_padding`` false).

    >>> trtllm_capture_sizes()[-4:]
    (31, 32, 64, 128)
    """
    sizes = [*range(1, 32), 32, 64, 128]
    power = 256
    while power < max_batch:
        sizes.append(power)
        power *= 2
    sizes = sorted(s for s in sizes if s <= max_batch)
    if sizes[-1] != max_batch:
        sizes.append(max_batch)
    return tuple(sizes)


@dataclass(frozen=True, slots=True)
class GraphPlan:
    """Captured sizes (ascending), their unit, whether a batch pads up to one, whether mixed steps replay one."""

    sizes: tuple[int, ...]
    unit: str  # "tokens" or "seqs"
    pads: bool
    mixed: bool = False
    engine: str = ""

    @property
    def largest(self) -> int:
        return self.sizes[-1] if self.sizes else 0

    def run(self, *, seqs: int, query_tokens: int, prefill_tokens: int = 0) -> tuple[int, bool]:
        """(padding tokens the step runs with, whether it runs without graphs) for a step of ``seqs`` decoding
        sequences of ``query_tokens`` each and ``prefill_tokens`` of prefill chunks."""
        if not self.sizes or (prefill_tokens and not self.mixed):
            return 0, False
        size = seqs * query_tokens + prefill_tokens if self.unit == "tokens" else seqs
        if size <= 0:
            return 0, False
        i = bisect_left(self.sizes, size)
        decode_only = prefill_tokens == 0
        if i == len(self.sizes) or (not self.pads and self.sizes[i] != size):
            return 0, decode_only
        pad = self.sizes[i] - size
        return (pad if self.unit == "tokens" else pad * query_tokens), False


NO_GRAPHS = GraphPlan(sizes=(), unit="tokens", pads=False)


def _largest_by_profile(dep: Deployment, profile, limits) -> int:
    rule = profile.cudagraph_capture
    return rule.largest(dep, limits.max_num_seqs) if rule is not None else min(2 * limits.max_num_seqs, 512)


def _largest_sglang(dep: Deployment, profile, limits) -> int:
    total = dep.gpu_memory_bytes or device_total_bytes(dep.gpu).bytes
    return profile.default_limits.cuda_graph_max_bs(sglang_gpu_mib(dep, total), dep.tp)


#: How each ``largest`` rule sets the largest captured size from the deployment, its engine profile and limits.
LARGEST_RULES = {
    "engine_profile_rule": _largest_by_profile,
    "vllm_v0_max_num_seqs": lambda dep, profile, limits: vllm_v0_largest(limits.max_num_seqs, dep.engine_version),
    "sglang_cuda_graph_max_bs": _largest_sglang,
    "trtllm_default_128": lambda dep, profile, limits: TRTLLM_GRAPH_MAX_BATCH,
}

#: The capture-size ladder of each ``ladder`` rule, up to the largest size (with a draft or without).
LADDERS = {
    "vllm": lambda largest, speculative: vllm_capture_sizes(largest),
    "vllm_v0": lambda largest, speculative: vllm_v0_capture_sizes(largest),
    "sglang": lambda largest, speculative: sglang_capture_sizes(largest, speculative=speculative),
    "trtllm": lambda largest, speculative: trtllm_capture_sizes(largest),
}


def graph_plan(dep: Deployment) -> GraphPlan:
    """The capture sizes ``dep``'s engine uses by default (none with ``enforce_eager`` or a rule of ``none``)."""
    rule = engine_graphs().get(dep.engine)
    if dep.enforce_eager or rule is None or rule.ladder == "none" or rule.largest == "none":
        return NO_GRAPHS
    profile = engine_profile(dep.engine, dep.engine_version)
    largest = LARGEST_RULES[rule.largest](dep, profile, resolve_limits(dep, profile))
    sizes = LADDERS[rule.ladder](largest, dep.is_speculative)
    return GraphPlan(sizes=sizes, unit=rule.unit, pads=rule.pads, mixed=rule.mixed_steps, engine=dep.engine)
