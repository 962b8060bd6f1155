"""The CUDA-graph batch sizes each serving engine captures by default (``data/cuda_graphs.json``, one rule per
engine, each transcribing its engine's source): what the memory plan counts for vLLM's graph estimate and what the
step model pads a batch to (:mod:`planner.speed.cuda_graphs`), from one place.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.engines.profiles import engine_profile
>>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), engine="vllm-v0")
>>> len(captured_sizes(dep, engine_profile("vllm-v0"), 256)), captured_sizes(dep, engine_profile("vllm-v0"), 256)[-1]
(35, 256)
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from planner.catalog.hardware import device_total_bytes
from planner.deployment import Deployment
from planner.engines.sglang_fractions import sglang_gpu_mib
from planner.engines.versions import parse_version
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


def sglang_capture_sizes(max_bs: int, *, speculative: bool, max_running: int | None = None) -> tuple[int, ...]:
    """SGLang's default CUDA-graph batch sizes up to ``cuda_graph_max_bs`` (``ServerArgs``), and, with its request
    pool of ``max_running`` requests, none above the pool, whose size (and one less) is added where the ladder runs
    past it (``get_batch_sizes_to_capture``, python/sglang/srt/model_executor/cuda_graph_runner.py).

    >>> sglang_capture_sizes(256, speculative=True, max_running=50)[-4:]
    (44, 48, 49, 50)
    """
    if speculative:
        sizes = [*range(1, 9), *range(10, 33, 2), *range(40, 65, 4), *range(72, 257, 8), *range(272, max_bs + 1, 16)]
    else:
        sizes = [1, 2, 4, 8, 12, *range(16, 257, 8), *range(272, 512, 16), *range(512, max_bs + 1, 32)]
    top = max_bs
    if max_running is not None:
        if sizes[-1] > max_running:
            sizes += [max_running - 1, max_running]
        top = min(max_bs, max_running)
    return tuple(sorted({s for s in sizes if 0 < s <= top}))


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


def _largest_by_profile(dep: Deployment, profile, max_num_seqs: int) -> int:
    rule = profile.cudagraph_capture
    return rule.largest(dep, max_num_seqs) if rule is not None else min(2 * max_num_seqs, 512)


def _largest_sglang(dep: Deployment, profile, max_num_seqs: int) -> int:
    total = dep.gpu_memory_bytes or device_total_bytes(dep.gpu).bytes
    return profile.default_limits.cuda_graph_max_bs(sglang_gpu_mib(dep, total), dep.tp)


#: How each ``largest`` rule sets the largest captured size from the deployment, its engine profile and its
#: request cap.
LARGEST_RULES = {
    "engine_profile_rule": _largest_by_profile,
    "vllm_v0_max_num_seqs": lambda dep, profile, max_num_seqs: vllm_v0_largest(max_num_seqs, dep.engine_version),
    "sglang_cuda_graph_max_bs": _largest_sglang,
    "trtllm_default_128": lambda dep, profile, max_num_seqs: TRTLLM_GRAPH_MAX_BATCH,
}

#: The capture-size ladder of each ``ladder`` rule, up to the largest size (with a draft or without, the request cap
#: given).
LADDERS = {
    "vllm": lambda largest, speculative, max_num_seqs: vllm_capture_sizes(largest),
    "vllm_v0": lambda largest, speculative, max_num_seqs: vllm_v0_capture_sizes(largest),
    "sglang": lambda largest, speculative, max_num_seqs: sglang_capture_sizes(
        largest, speculative=speculative, max_running=max_num_seqs
    ),
    "trtllm": lambda largest, speculative, max_num_seqs: trtllm_capture_sizes(largest),
}


def captured_sizes(dep: Deployment, profile, max_num_seqs: int) -> tuple[int, ...]:
    """The batch sizes ``dep``'s engine captures graphs at (ascending, in its rule's unit), its engine profile
    ``profile`` and request cap ``max_num_seqs`` given: none with ``enforce_eager`` or a rule of ``none``."""
    rule = engine_graphs().get(dep.engine)
    if dep.enforce_eager or rule is None or rule.ladder == "none" or rule.largest == "none":
        return ()
    largest = LARGEST_RULES[rule.largest](dep, profile, max_num_seqs)
    return LADDERS[rule.ladder](largest, dep.is_speculative, max_num_seqs)
