"""The CUDA-graph batch sizes each serving engine captures by default (``data/cuda_graphs.json``, one rule per
engine, each transcribing its engine's source): what the memory plan counts for vLLM's graph estimate and what the
step model pads a batch to (:mod:`planner.speed.cuda_graphs`), from one place.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.engines.profiles import engine_profile
>>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), engine="vllm-v0")
>>> sizes = captured_sizes(dep, engine_profile("vllm-v0"), 256, 8192)
>>> len(sizes), sizes[-1]
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
    ladder: Literal["vllm_v1", "vllm_v0", "sglang", "trtllm", "none"]
    largest: Literal[
        "vllm_v1_release_rule", "vllm_v0_max_num_seqs", "sglang_cuda_graph_max_bs",
        "trtllm_default_128", "none",
    ]  # fmt: skip
    unit: Literal["tokens", "seqs"]
    pads: bool
    mixed_steps: bool
    source: str = Field(min_length=1)


class VllmV1Release(BaseModel):
    """How vLLM V1 chooses its captured sizes from one release on (``vllm_v1_releases`` in ``data/cuda_graphs.json``,
    each transcribing ``VllmConfig._set_cudagraph_sizes`` of that release)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    from_version: str
    #: The platform's largest size (``default_max_graph_size``), by GPU where it differs, and by model class where the
    #: model's config hook sets the largest size outright (then no decode sizes are appended, and the grid steps by 16
    #: above 256).
    ceiling: int = Field(ge=1)
    ceiling_by_gpu: dict[str, int]
    ceiling_by_architecture: dict[str, int]
    #: The largest size follows ``max_num_seqs`` (from 0.10: ``max_num_seqs · 2``, below); before, it is the ceiling.
    largest_from_max_num_seqs: bool
    #: Above 256 tokens the grid steps by 8 (up to 0.11.0) or 16.
    stride_above_256: Literal[8, 16]
    #: The largest size is ``max_num_seqs · 2 · (1 + K)`` with speculation (else ``max_num_seqs · 2``).
    query_len_in_ceiling: bool
    #: ``max_num_batched_tokens`` is captured too where it lies within the largest size.
    captures_max_num_batched_tokens: bool
    #: With speculation, the uniform decode sizes ``n · (1 + K)`` of a request-count grid are captured too.
    uniform_decode_sizes: bool
    #: Without speculation, ``max_num_seqs`` is captured too where it lies within the largest size.
    captures_max_num_seqs: bool
    #: With speculation, every size is rounded up to a multiple of ``1 + K`` (full decode graphs).
    rounds_to_query_len: bool
    source: str = Field(min_length=1)


class GraphsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str
    engines: list[EngineGraphs]
    vllm_v1_releases: list[VllmV1Release] = Field(min_length=1)


@data_cache
def _graphs_file() -> GraphsFile:
    return load_model(GRAPHS_FILE, GraphsFile)


@data_cache
def engine_graphs() -> dict[str, EngineGraphs]:
    """Every engine's capture rule, by engine id."""
    return {entry.engine: entry for entry in _graphs_file().engines}


@data_cache
def vllm_v1_releases() -> tuple[VllmV1Release, ...]:
    """vLLM V1's capture rules, oldest release first."""
    return tuple(sorted(_graphs_file().vllm_v1_releases, key=lambda r: parse_version(r.from_version)))


def vllm_v1_release(version: str | None) -> VllmV1Release:
    """The capture rule of vLLM ``version`` (None: the newest; a release before the first rule read: the first).

    >>> [vllm_v1_release(v).from_version for v in ("0.19.0", None, "0.9.2")]
    ['0.13.0', '0.34.0', '0.8.0']
    """
    rules = vllm_v1_releases()
    if version is None:
        return rules[-1]
    wanted = parse_version(version)
    return next((r for r in reversed(rules) if parse_version(r.from_version) <= wanted), rules[0])


def _request_counts(max_reqs: int) -> list[int]:
    """vLLM's request-count grid for uniform decode sizes (``request_counts`` in ``_set_cudagraph_sizes``): the token
    grid's steps, counted in requests, and ``max_reqs`` itself."""
    return sorted({*vllm_capture_sizes(max_reqs), max_reqs})


def vllm_v1_capture_sizes(
    rule: VllmV1Release,
    *,
    max_num_seqs: int,
    max_num_batched_tokens: int,
    query_len: int = 1,
    gpu: str = "",
    architectures: tuple[str, ...] = (),
) -> tuple[int, ...]:
    """vLLM V1's captured sizes (tokens) under ``rule``: the grid up to the largest size, what the release adds to
    it, and, with speculation (``query_len`` = 1 + K tokens per sequence), its rounding.

    Llama on an H100 at vLLM's server defaults (1,024 sequences, 8,192 tokens): 51 sizes up to 512 without a draft;
    with a draft at K = 5, 0.19 rounds them to 48 multiples of 6 (up to 498) and 0.34 adds 6 and 12 to the 51:

    >>> new, old = vllm_v1_release(None), vllm_v1_release("0.19.0")
    >>> len(vllm_v1_capture_sizes(new, max_num_seqs=1024, max_num_batched_tokens=8192))
    51
    >>> sizes = vllm_v1_capture_sizes(old, max_num_seqs=1024, max_num_batched_tokens=8192, query_len=6)
    >>> len(sizes), sizes[:4], sizes[-1]
    (48, (6, 12, 18, 24), 498)
    >>> sizes = vllm_v1_capture_sizes(new, max_num_seqs=1024, max_num_batched_tokens=8192, query_len=6)
    >>> len(sizes), sizes[:6], sizes[-1]
    (53, (1, 2, 4, 6, 8, 12), 512)
    """
    base = rule.ceiling_by_gpu.get(gpu, rule.ceiling)
    by_model = rule.ceiling_by_architecture
    set_by_model = next((by_model[a] for a in architectures if a in by_model), None)
    speculative = query_len > 1
    extra: list[int] = []
    if set_by_model is not None:
        largest = set_by_model
    else:
        per_seqs = max_num_seqs * 2 * (query_len if rule.query_len_in_ceiling else 1)
        largest = min(per_seqs, base) if rule.largest_from_max_num_seqs else base
        if rule.uniform_decode_sizes and speculative:
            extra = [n * query_len for n in _request_counts(min(max_num_seqs, base)) if n * query_len <= largest]
        elif rule.captures_max_num_seqs and not speculative and max_num_seqs <= largest:
            extra = [max_num_seqs]
    largest = min(largest, max_num_batched_tokens)
    # a model's own list steps by 16 above 256 whatever the release's grid (gpt-oss's hook up to 0.11.0; the
    # release's grid from 0.11.1)
    sizes = list(vllm_capture_sizes(largest, 16 if set_by_model is not None else rule.stride_above_256))
    if rule.captures_max_num_batched_tokens and max_num_batched_tokens <= largest:
        sizes.append(max_num_batched_tokens)
    sizes += [n for n in extra if n <= max_num_batched_tokens]
    ordered = sorted(set(sizes))
    if rule.rounds_to_query_len and speculative and ordered:
        top = ordered[-1]
        rounded = {up for n in ordered if (up := -(-n // query_len) * query_len) <= top}
        ordered = sorted(rounded) or ([query_len] if query_len <= top else [])
    return tuple(ordered)


def vllm_capture_sizes(largest: int, stride_above_256: int = 16) -> tuple[int, ...]:
    """vLLM V1's grid of capture sizes (tokens) up to ``largest``: 1, 2, 4, every 8 below 256, then every
    ``stride_above_256`` (16; 8 up to 0.11.0).

    >>> len(vllm_capture_sizes(512)), vllm_capture_sizes(16), len(vllm_capture_sizes(512, 8))
    (51, (1, 2, 4, 8, 16), 67)
    """
    sizes = [s for s in (1, 2, 4) if s <= largest]
    sizes += range(8, min(256, largest + 1), 8)
    sizes += range(256, largest + 1, stride_above_256)
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


def _largest_sglang(dep: Deployment, profile, max_num_seqs: int) -> int:
    total = dep.gpu_memory_bytes or device_total_bytes(dep.gpu).bytes
    return profile.default_limits.cuda_graph_max_bs(sglang_gpu_mib(dep, total), dep.tp)


#: How each ``largest`` rule sets the largest captured size from the deployment, its engine profile and its
#: request cap.
LARGEST_RULES = {
    "vllm_v0_max_num_seqs": lambda dep, profile, max_num_seqs: vllm_v0_largest(max_num_seqs, dep.engine_version),
    "sglang_cuda_graph_max_bs": _largest_sglang,
    "trtllm_default_128": lambda dep, profile, max_num_seqs: TRTLLM_GRAPH_MAX_BATCH,
}

#: The capture-size ladder of each ``ladder`` rule, up to the largest size (with a draft or without, the request cap
#: given).
LADDERS = {
    "vllm_v0": lambda largest, speculative, max_num_seqs: vllm_v0_capture_sizes(largest),
    "sglang": lambda largest, speculative, max_num_seqs: sglang_capture_sizes(
        largest, speculative=speculative, max_running=max_num_seqs
    ),
    "trtllm": lambda largest, speculative, max_num_seqs: trtllm_capture_sizes(largest),
}


def captured_sizes(dep: Deployment, profile, max_num_seqs: int, max_num_batched_tokens: int) -> tuple[int, ...]:
    """The batch sizes ``dep``'s engine captures graphs at (ascending, in its rule's unit), its engine profile
    ``profile``, request cap ``max_num_seqs`` and token budget ``max_num_batched_tokens`` given: none with
    ``enforce_eager`` or a rule of ``none``."""
    rule = engine_graphs().get(dep.engine)
    if dep.enforce_eager or rule is None or rule.ladder == "none" or rule.largest == "none":
        return ()
    if rule.ladder == "vllm_v1":
        architectures = dep.target.config.get("architectures") or []
        return vllm_v1_capture_sizes(
            vllm_v1_release(dep.engine_version),
            max_num_seqs=max_num_seqs,
            max_num_batched_tokens=max_num_batched_tokens,
            query_len=1 + dep.num_speculative_tokens if dep.is_speculative else 1,
            gpu=dep.gpu.id,
            architectures=tuple(architectures) if isinstance(architectures, list) else (),
        )
    largest = LARGEST_RULES[rule.largest](dep, profile, max_num_seqs)
    return LADDERS[rule.ladder](largest, dep.is_speculative, max_num_seqs)
