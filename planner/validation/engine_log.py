"""Read a serving engine's start-up log (vLLM V0/V1, SGLang, TensorRT-LLM) into the facts it states.

The log lines recognised are the ones the engines print (the real logs of
data/calibration/vllm-kv-cases.csv, each row with its source URL; docs/measurement.md); the tests carry
one fixture per format, each citing its source. Each fact keeps the line it came from
(``evidence``). Units: vLLM and SGLang print GiB even where they write "GB" (the logged weights
match params × bytes / 2^30, e.g. Llama-3.1-8B 14.96 GiB computed, 14.99 logged), so "GB" in these logs is read as GiB; bytes are integers. With several ranks the first
(rank 0) value is kept, as the engines' own summaries do.

>>> facts = parse_engine_log('''
... INFO 01-22 worker.py:241] Memory profiling takes 4.98 seconds
... INFO 01-22 worker.py:241] the current vLLM instance can use total_gpu_memory (39.50GiB) x gpu_memory_utilization (0.90) = 35.55GiB
... INFO 01-22 worker.py:241] model weights take 14.96GiB; non_torch_memory takes 0.10GiB; PyTorch activation peak memory takes 9.37GiB; the rest of the memory reserved for KV Cache is 11.12GiB.
... ''')
>>> facts.engine, round(facts.kv_cache_bytes / 2**30, 2), facts.gpu_memory_utilization
('vllm-v0', 11.12, 0.9)
"""  # noqa: E501

from __future__ import annotations

import re
from collections.abc import Callable

from pydantic import BaseModel

from planner.engines.names import find_engine_id
from planner.engines.profiles import LogConventions, engine_spec
from planner.errors import InputError
from planner.units import GIB, KIB, MIB

_G = r"(-?[0-9]+(?:\.[0-9]+)?)\s*(GiB|GB|MiB|MB|KiB|KB)"  # a number and its unit
_UNITS = {"GIB": GIB, "GB": GIB, "MIB": MIB, "MB": MIB, "KIB": KIB, "KB": KIB}
MAX_LOG_CHARS = 5_000_000


class EngineLogFacts(BaseModel):
    """What a start-up log says; ``None`` where it does not say it."""

    engine: str | None = None
    engine_version: str | None = None
    engine_hints: list[str] = []
    model: str | None = None
    gpu_name: str | None = None
    dtype: str | None = None
    quantization: str | None = None
    kv_cache_dtype: str | None = None
    tensor_parallel_size: int | None = None
    pipeline_parallel_size: int | None = None
    gpu_memory_total_bytes: int | None = None
    free_memory_at_start_bytes: int | None = None
    gpu_memory_utilization: float | None = None
    requested_memory_bytes: int | None = None
    weights_bytes: int | None = None
    activation_peak_bytes: int | None = None
    non_torch_bytes: int | None = None
    cudagraph_bytes: int | None = None
    kv_cache_bytes: int | None = None
    kv_cache_tokens: int | None = None
    num_gpu_blocks: int | None = None
    block_size: int | None = None
    max_concurrency: float | None = None
    concurrency_len: int | None = None
    max_model_len: int | None = None
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    enforce_eager: bool | None = None
    speculative_method: str | None = None
    draft_model: str | None = None
    num_speculative_tokens: int | None = None
    #: True when the log says vLLM subtracts its CUDA-graph estimate from the KV budget (v0.21+), False when
    #: it estimates graphs without subtracting them (it then hints at raising gpu_memory_utilization).
    cudagraph_profiling_enabled: bool | None = None
    #: field -> the log line it was read from.
    evidence: dict[str, str] = {}
    notes: list[str] = []

    @property
    def found(self) -> list[str]:
        return sorted(self.evidence)


def _bytes(value: str, unit: str) -> int:
    return round(float(value) * _UNITS[unit.upper()])


def _int(text: str) -> int:
    return int(text.replace(",", "").replace("_", ""))


# (field, pattern, convert(match) -> value); the first pattern that matches a field wins.
Rule = tuple[str, str, Callable[[re.Match], object]]


def _b(group: int = 1) -> Callable[[re.Match], int]:
    return lambda m: _bytes(m.group(group), m.group(group + 1))


def _i(group: int = 1) -> Callable[[re.Match], int]:
    return lambda m: _int(m.group(group))


def _f(group: int = 1) -> Callable[[re.Match], float]:
    return lambda m: float(m.group(group))


def _s(group: int = 1) -> Callable[[re.Match], str]:
    return lambda m: m.group(group).strip().strip("'\"")


_ARG = r"['\"]?\s*[:=]\s*['\"]?"  # name=value, 'name': value, name: value
RULES: tuple[Rule, ...] = (
    # ----- device total, free memory, the memory knob ---------------------------------------
    ("gpu_memory_total_bytes", r"total_gpu_memory \(" + _G + r"\)", _b()),
    ("gpu_memory_total_bytes", r"total_gpu_memory=" + _G, _b()),
    ("gpu_memory_total_bytes", r"Free memory on device \([0-9.]+/" + _G + r"\)", _b()),
    ("gpu_memory_total_bytes", r"\btotal_memory=" + _G, _b()),
    ("gpu_memory_total_bytes", r"\btotal: " + _G + r", available:", _b()),
    ("free_memory_at_start_bytes", r"Free memory on device \(([0-9.]+)/[0-9.]+\s*(GiB|GB)\)", _b()),
    ("free_memory_at_start_bytes", r"Initial free memory " + _G, _b()),
    ("free_memory_at_start_bytes", r"\bfree_memory=" + _G, _b()),
    ("free_memory_at_start_bytes", r"Load weight begin\. avail mem=" + _G, _b()),
    ("gpu_memory_utilization", r"gpu_memory_utilization \(([0-9.]+)\)", _f()),
    ("gpu_memory_utilization", r"Desired GPU memory utilization is \(([0-9.]+),", _f()),
    ("gpu_memory_utilization", r"gpu_memory_utilization" + _ARG + r"([0-9.]+)", _f()),
    ("gpu_memory_utilization", r"--gpu[-_]memory[-_]utilization[ =]([0-9.]+)", _f()),
    ("gpu_memory_utilization", r"mem_fraction_static" + _ARG + r"([0-9.]+)", _f()),
    ("gpu_memory_utilization", r"--mem-fraction-static[ =]([0-9.]+)", _f()),
    ("gpu_memory_utilization", r"free_gpu_memory_fraction" + _ARG + r"([0-9.]+)", _f()),
    ("requested_memory_bytes", r"gpu_memory_utilization \([0-9.]+\) = " + _G, _b()),
    ("requested_memory_bytes", r"Desired GPU memory utilization is \([0-9.]+,\s*" + _G + r"\)", _b()),
    ("requested_memory_bytes", r"requested memory:? " + _G, _b()),
    ("requested_memory_bytes", r"\brequested " + _G, _b()),
    # ----- the components --------------------------------------------------------------------
    ("weights_bytes", r"model weights take " + _G, _b()),
    ("weights_bytes", r"weights memory: " + _G, _b()),
    ("weights_bytes", r"Actual usage is " + _G + r" for weight", _b()),
    ("weights_bytes", r"Model loading took " + _G, _b()),
    ("weights_bytes", r"Loading model weights took " + _G, _b()),
    ("weights_bytes", r"Load weight end\..*?mem usage=" + _G, _b()),
    ("weights_bytes", r"Memory usage when loading weights: " + _G, _b()),
    ("activation_peak_bytes", r"PyTorch activation peak memory takes " + _G, _b()),
    ("activation_peak_bytes", r"torch peak memory increase: " + _G, _b()),
    ("activation_peak_bytes", _G + r" for peak activation", _b()),
    ("non_torch_bytes", r"non_torch_memory takes " + _G, _b()),
    ("non_torch_bytes", r"non-torch forward increase memory: " + _G, _b()),
    ("non_torch_bytes", _G + r" for non-torch memory", _b()),
    ("non_torch_bytes", r"Memory profiling results:.*?non_torch_memory=" + _G, _b()),
    ("cudagraph_bytes", r"Estimated CUDA graph memory: " + _G + r" total", _b()),
    ("cudagraph_bytes", _G + r" for CUDAGraph memory", _b()),
    ("cudagraph_bytes", r"CUDA graph pool memory: " + _G + r" \(actual\)", _b()),
    ("cudagraph_bytes", r"Graph capturing finished in [0-9.]+ secs?, took " + _G, _b()),
    ("kv_cache_bytes", r"the rest of the memory reserved for KV Cache is " + _G, _b()),
    ("kv_cache_bytes", r"kv_cache_size=" + _G, _b()),
    ("kv_cache_bytes", r"Available KV cache memory: " + _G, _b()),
    ("kv_cache_bytes", r"Current kv cache memory in use is " + _G, _b()),
    ("kv_cache_bytes", r"\bkv_cache_memory=" + _G, _b()),
    ("kv_cache_bytes", r"Allocated " + _G + r" for max tokens in paged KV cache", _b()),
    (
        "kv_cache_bytes",
        r"K size: " + _G + r", V size: " + _G,
        lambda m: _bytes(*m.group(1, 2)) + _bytes(*m.group(3, 4)),
    ),
    # ----- capacity ----------------------------------------------------------------------------
    ("kv_cache_tokens", r"GPU KV cache size: ([0-9,]+) tokens", _i()),
    ("kv_cache_tokens", r"KV Cache is allocated\. #tokens: ([0-9]+)", _i()),
    ("kv_cache_tokens", r"max tokens in paged KV cache \(([0-9]+)\)", _i()),
    ("kv_cache_tokens", r"maximum number of tokens that can be stored in KV cache \(([0-9]+)\)", _i()),
    ("kv_cache_tokens", r"max_total_num_tokens=([0-9]+)", _i()),
    ("num_gpu_blocks", r"# (?:GPU|cuda) blocks: ([0-9]+)", _i()),
    ("num_gpu_blocks", r"num_gpu_blocks(?: is)?" + _ARG + r"([0-9]+)", _i()),
    ("num_gpu_blocks", r"Number of blocks in KV cache primary pool: ([0-9]+)", _i()),
    ("block_size", r"Number of tokens per block: ([0-9]+)", _i()),
    ("block_size", r"\bblock_size" + _ARG + r"([0-9]+)", _i()),
    ("max_concurrency", r"Maximum concurrency for [0-9,]+ tokens per request: ([0-9.]+)x", _f()),
    ("concurrency_len", r"Maximum concurrency for ([0-9,]+) tokens per request", _i()),
    # ----- configuration -----------------------------------------------------------------------
    ("max_model_len", r"max_model_len" + _ARG + r"([0-9]+)", _i()),
    ("max_model_len", r"--max-model-len[ =]([0-9]+)", _i()),
    ("max_model_len", r"max seq len \(([0-9]+)\)", _i()),
    ("max_model_len", r"\bmax_seq_len=([0-9]+)", _i()),
    ("max_model_len", r"\bcontext_len=([0-9]+)", _i()),
    ("max_num_batched_tokens", r"max_num_batched_tokens" + _ARG + r"([0-9]+)", _i()),
    ("max_num_batched_tokens", r"--max-num-batched-tokens[ =]([0-9]+)", _i()),
    ("max_num_seqs", r"max_num_seqs" + _ARG + r"([0-9]+)", _i()),
    ("max_num_seqs", r"--max-num-seqs[ =]([0-9]+)", _i()),
    ("tensor_parallel_size", r"tensor_parallel_size" + _ARG + r"([0-9]+)", _i()),
    ("tensor_parallel_size", r"--tensor-parallel-size[ =]([0-9]+)", _i()),
    ("tensor_parallel_size", r"(?:--tp(?:-size)?|\btp_size)[ =]([0-9]+)", _i()),
    ("pipeline_parallel_size", r"pipeline_parallel_size" + _ARG + r"([0-9]+)", _i()),
    ("pipeline_parallel_size", r"--pipeline-parallel-size[ =]([0-9]+)", _i()),
    ("pipeline_parallel_size", r"\bpp_size[ =]([0-9]+)", _i()),
    ("enforce_eager", r"enforce_eager" + _ARG + r"(True|False)", lambda m: m.group(1) == "True"),
    ("enforce_eager", r"--enforce-eager\b", lambda m: True),
    ("dtype", r"\bdtype=torch\.(\w+)", _s()),
    ("dtype", r"'dtype': '(\w+)'", _s()),
    ("dtype", r"--dtype[ =](\w+)", _s()),
    ("kv_cache_dtype", r"kv_cache_dtype" + _ARG + r"(\w+)", _s()),
    ("kv_cache_dtype", r"Using KV cache dtype: torch\.(\w+)", _s()),
    ("quantization", r"\bquantization" + _ARG + r"([A-Za-z]\w*)", _s()),
    ("quantization", r"--quantization[ =](\w+)", _s()),
    ("model", r"Starting to load model (\S+?)\.\.\.", _s()),
    ("model", r"'model': '([^']+)'", _s()),
    ("model", r"\bmodel='([^']+)'", _s()),
    ("model", r"model_path='([^']+)'", _s()),
    ("model", r"vllm serve (\S+)", _s()),
    ("model", r"--model[ =](\S+)", _s()),
    ("gpu_name", r"(NVIDIA (?:GeForce |RTX )?[A-Z][A-Za-z0-9]*(?:[ -][A-Za-z0-9]+){0,4})", _s()),
    ("gpu_name", r"(AMD Instinct MI\w+)", _s()),
    ("speculative_method", r"speculative_config=SpeculativeConfig\([^)]*?method='(\w+)'", _s()),
    ("speculative_method", r"'speculative_config': \{[^}]*?'method': '(\w+)'", _s()),
    ("draft_model", r"speculative_config=SpeculativeConfig\([^)]*?model='([^']+)'", _s()),
    ("draft_model", r"'speculative_config': \{[^}]*?'model': '([^']+)'", _s()),
    ("draft_model", r"--speculative[-_]model[ =](\S+)", _s()),
    ("num_speculative_tokens", r"num_spec(?:ulative)?_tokens" + _ARG + r"([0-9]+)", _i()),
    ("num_speculative_tokens", r"--num[-_]speculative[-_]tokens[ =]([0-9]+)", _i()),
    ("engine_version", r"vLLM API server version ([0-9][\w.+-]*)", _s()),
    ("engine_version", r"Initializing an? (?:V1 )?LLM engine \(v([0-9][\w.+-]*)\)", _s()),
    ("engine_version", r"\bvllm(?:==| version )([0-9]+\.[0-9]+[\w.+-]*)", _s()),
    ("engine_version", r"\bsglang(?:==| version )([0-9]+\.[0-9]+[\w.+-]*)", _s()),
    ("engine_version", r"TensorRT-LLM version: ([0-9][\w.+-]*)", _s()),
)
_COMPILED = tuple((name, re.compile(pattern, re.IGNORECASE), convert) for name, pattern, convert in RULES)

# Lines that only one engine (or one vLLM generation) prints.
_ENGINE_MARKERS: dict[str, tuple[str, ...]] = {
    "vllm-v1": (
        "Available KV cache memory",
        "Total non KV cache memory",
        "EngineCore",
        "V1 LLM engine",
        "Free memory on device",
        "gpu_worker.py",
        "SpecDecoding metrics",
        "kv_cache_utils.py",
    ),
    "vllm-v0": (
        "the current vLLM instance can use",
        "# GPU blocks",
        "# cuda blocks",
        "Memory profiling results:",
        "Loading model weights took",
        "Initializing an LLM engine",
        "Speculative metrics:",
        "gpu_executor.py",
    ),
    "sglang": ("KV Cache is allocated", "Load weight end", "mem_fraction_static", "Memory pool end", "sglang"),
    "trtllm": ("paged KV cache", "TensorRT-LLM", "[TRT-LLM]", "tensorrt_llm"),
}


def _engine(text: str) -> tuple[str | None, list[str]]:
    lowered = text.lower()
    scores = {engine: [m for m in markers if m.lower() in lowered] for engine, markers in _ENGINE_MARKERS.items()}
    best = max(scores, key=lambda e: len(scores[e]))
    if not scores[best]:
        return None, []
    if best == "vllm-v0" and scores["vllm-v1"] and len(scores["vllm-v1"]) == len(scores["vllm-v0"]):
        best = "vllm-v1"
    return best, [f"{best}: {', '.join(scores[best])}"]


def _line_of(text: str, match: re.Match) -> str:
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text[start : end if end != -1 else len(text)].strip()[:240]


def parse_engine_log(text: str | bytes) -> EngineLogFacts:
    """The facts a pasted or uploaded start-up log states (see the module docstring for the formats)."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str) or not text.strip():
        raise InputError("log", "(empty)", "the text of a serving engine's start-up log")
    if len(text) > MAX_LOG_CHARS:
        raise InputError(
            "log", f"{len(text):,} characters", f"at most {MAX_LOG_CHARS:,} characters (the start-up part)"
        )
    text = text.replace("\r\n", "\n")
    facts = EngineLogFacts()
    values: dict[str, object] = {}
    for name, pattern, convert in _COMPILED:
        if name in values:
            continue
        match = pattern.search(text)
        if match:
            try:
                values[name] = convert(match)
            except (ValueError, KeyError):
                continue
            facts.evidence[name] = _line_of(text, match)
    for name, value in values.items():
        setattr(facts, name, value)
    facts.engine, facts.engine_hints = _engine(text)
    _derive(facts, text)
    return facts


def _log_conventions(log_engine: str | None) -> LogConventions | None:
    """How the engine that wrote the log states memory (``log`` in data/engines.json)."""
    engine = find_engine_id(log_engine)
    return engine_spec(engine).log if engine else None


def _derive(facts: EngineLogFacts, text: str) -> None:
    """Facts implied by others, each with a note saying how."""
    conventions = _log_conventions(facts.engine)
    if conventions and conventions.gb_means_gib and re.search(r"[0-9]\s*GB\b", text):
        facts.notes.append('"GB" in this log is read as GiB (vLLM and SGLang print GiB under that label)')
    peak = re.search(r"Memory profiling results:.*?peak_torch_memory=" + _G, text, re.IGNORECASE)
    if facts.activation_peak_bytes is None and peak and facts.weights_bytes is not None:
        facts.activation_peak_bytes = _bytes(peak.group(1), peak.group(2)) - facts.weights_bytes
        facts.evidence["activation_peak_bytes"] = _line_of(text, peak)
        facts.notes.append("activation peak = peak_torch_memory - weights (this vLLM release logs them together)")
    if facts.kv_cache_tokens is None and facts.num_gpu_blocks is not None:
        block = facts.block_size or (conventions.default_block_size if conventions else None)
        if block:
            facts.kv_cache_tokens = facts.num_gpu_blocks * block
            facts.notes.append(f"KV tokens = {facts.num_gpu_blocks:,} blocks x {block} tokens per block")
    if facts.max_model_len is None and facts.concurrency_len is not None:
        facts.max_model_len = facts.concurrency_len
    if facts.tensor_parallel_size is None:
        ranks = {int(r) for r in re.findall(r"\b(?:TP|Worker_TP)(\d+)\b", text)}
        if ranks:
            facts.tensor_parallel_size = max(ranks) + 1
            facts.notes.append(f"TP {facts.tensor_parallel_size} from the rank names in the log")
    if facts.kv_cache_bytes is not None and facts.kv_cache_bytes < 0:
        facts.notes.append("the log reports a negative KV budget: the engine could not start with these settings")
    if re.search(r"CUDA graph memory profiling is enabled", text, re.IGNORECASE):
        facts.cudagraph_profiling_enabled = True
    elif re.search(r"Estimated CUDA graph memory|VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS", text, re.IGNORECASE):
        facts.cudagraph_profiling_enabled = False
    if conventions and conventions.kv_reported_as_k_plus_v and facts.kv_cache_bytes is not None:
        facts.notes.append("SGLang reports K and V sizes separately: KV cache = K + V")
