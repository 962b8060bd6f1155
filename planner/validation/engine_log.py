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
import re._parser as re_parser
from collections.abc import Callable
from typing import NamedTuple

from pydantic import BaseModel

from planner.engines.names import find_engine_id
from planner.engines.profiles import LogConventions, engine_spec
from planner.errors import InputError
from planner.units import GIB, KIB, MIB

# Every quantifier is bounded and no quantified part overlaps its neighbour, so one search costs at most a
# constant per starting position: parsing time grows linearly with the log (bench/log_parse_timing.py).
_G = r"(-?[0-9]{1,15}(?:\.[0-9]{1,12})?)[ \t]{0,4}(GiB|GB|MiB|MB|KiB|KB)"  # a number and its unit
_NUM = r"[0-9.]{1,24}"
_UNITS = {"GIB": GIB, "GB": GIB, "MIB": MIB, "MB": MIB, "KIB": KIB, "KB": KIB}
#: The most a log may hold: the Validation page and the CLI accept the same (the start-up part of a log).
MAX_LOG_CHARS = 5_000_000
#: Lines longer than this are read up to this length (engine config lines are a few thousand characters).
MAX_LINE_CHARS = 8_192


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
    #: True when the log says vLLM subtracts its CUDA-graph estimate from the KV budget (0.20 on), False when
    #: it estimates graphs without subtracting them (it then hints at raising gpu_memory_utilization).
    cudagraph_profiling_enabled: bool | None = None
    #: True when vLLM sized its KV cache from the memory measured after warm-up (0.34's extensible KV cache:
    #: its "Memory after warmup" line).
    kv_sized_after_warmup: bool | None = None
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


_ARG = r"['\"]?[ \t]{0,4}[:=][ \t]{0,4}['\"]?"  # name=value, 'name': value, name: value
RULES: tuple[Rule, ...] = (
    # ----- device total, free memory, the memory knob ---------------------------------------
    ("gpu_memory_total_bytes", r"total_gpu_memory \(" + _G + r"\)", _b()),
    ("gpu_memory_total_bytes", r"total_gpu_memory=" + _G, _b()),
    ("gpu_memory_total_bytes", r"Free memory on device \([0-9.]{1,24}/" + _G + r"\)", _b()),
    ("gpu_memory_total_bytes", r"\btotal_memory=" + _G, _b()),
    ("gpu_memory_total_bytes", r"\btotal: " + _G + r", available:", _b()),
    ("free_memory_at_start_bytes", r"Free memory on device \(([0-9.]{1,24})/[0-9.]{1,24}[ \t]{0,4}(GiB|GB)\)", _b()),
    ("free_memory_at_start_bytes", r"Initial free memory " + _G, _b()),
    ("free_memory_at_start_bytes", r"\bfree_memory=" + _G, _b()),
    ("free_memory_at_start_bytes", r"Load weight begin\. avail mem=" + _G, _b()),
    ("gpu_memory_utilization", r"gpu_memory_utilization \(([0-9.]{1,24})\)", _f()),
    ("gpu_memory_utilization", r"Desired GPU memory utilization is \(([0-9.]{1,24}),", _f()),
    ("gpu_memory_utilization", r"gpu_memory_utilization" + _ARG + r"([0-9.]{1,24})", _f()),
    ("gpu_memory_utilization", r"--gpu[-_]memory[-_]utilization[ =]([0-9.]{1,24})", _f()),
    ("gpu_memory_utilization", r"mem_fraction_static" + _ARG + r"([0-9.]{1,24})", _f()),
    ("gpu_memory_utilization", r"--mem-fraction-static[ =]([0-9.]{1,24})", _f()),
    ("gpu_memory_utilization", r"free_gpu_memory_fraction" + _ARG + r"([0-9.]{1,24})", _f()),
    ("requested_memory_bytes", r"gpu_memory_utilization \([0-9.]{1,24}\) = " + _G, _b()),
    ("requested_memory_bytes", r"Desired GPU memory utilization is \([0-9.]{1,24},[ \t]{0,4}" + _G + r"\)", _b()),
    ("requested_memory_bytes", r"requested memory:? " + _G, _b()),
    ("requested_memory_bytes", r"\brequested " + _G, _b()),
    # ----- the components --------------------------------------------------------------------
    ("weights_bytes", r"model weights take " + _G, _b()),
    ("weights_bytes", r"weights memory: " + _G, _b()),
    ("weights_bytes", r"Actual usage is " + _G + r" for weight", _b()),
    ("weights_bytes", r"Model loading took " + _G, _b()),
    ("weights_bytes", r"Loading model weights took " + _G, _b()),
    ("weights_bytes", r"Load weight end\..{0,2000}?mem usage=" + _G, _b()),
    ("weights_bytes", r"Memory usage when loading weights: " + _G, _b()),
    ("activation_peak_bytes", r"PyTorch activation peak memory takes " + _G, _b()),
    ("activation_peak_bytes", r"torch peak memory increase: " + _G, _b()),
    ("activation_peak_bytes", _G + r" for peak activation", _b()),
    ("non_torch_bytes", r"non_torch_memory takes " + _G, _b()),
    ("non_torch_bytes", r"non-torch forward increase memory: " + _G, _b()),
    ("non_torch_bytes", _G + r" for non-torch memory", _b()),
    ("non_torch_bytes", r"Memory profiling results:.{0,2000}?non_torch_memory=" + _G, _b()),
    ("cudagraph_bytes", r"Estimated CUDA graph memory: " + _G + r" total", _b()),
    ("cudagraph_bytes", _G + r" for CUDAGraph memory", _b()),
    ("cudagraph_bytes", r"CUDA graph pool memory: " + _G + r" \(actual\)", _b()),
    ("cudagraph_bytes", r"Graph capturing finished in [0-9.]{1,24} secs?, took " + _G, _b()),
    # vLLM 0.34's extensible KV cache, sized after warm-up: its line states the final size (the "Available KV
    # cache memory" it also prints is the estimate at the requested memory, before warm-up)
    ("kv_cache_bytes", r"[0-9]{1,18} KV cache blocks \(" + _G + r"\) fit within the requested", _b()),
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
    ("kv_cache_tokens", r"GPU KV cache size: ([0-9,]{1,20}) tokens", _i()),
    ("kv_cache_tokens", r"KV Cache is allocated\. #tokens: ([0-9]{1,18})", _i()),
    ("kv_cache_tokens", r"max tokens in paged KV cache \(([0-9]{1,18})\)", _i()),
    ("kv_cache_tokens", r"maximum number of tokens that can be stored in KV cache \(([0-9]{1,18})\)", _i()),
    ("kv_cache_tokens", r"max_total_num_tokens=([0-9]{1,18})", _i()),
    ("num_gpu_blocks", r"([0-9]{1,18}) KV cache blocks \([0-9.]{1,24} GiB\) fit within the requested", _i()),
    ("num_gpu_blocks", r"# (?:GPU|cuda) blocks: ([0-9]{1,18})", _i()),
    ("num_gpu_blocks", r"num_gpu_blocks(?: is)?" + _ARG + r"([0-9]{1,18})", _i()),
    ("num_gpu_blocks", r"Number of blocks in KV cache primary pool: ([0-9]{1,18})", _i()),
    ("block_size", r"Number of tokens per block: ([0-9]{1,18})", _i()),
    ("block_size", r"\bblock_size" + _ARG + r"([0-9]{1,18})", _i()),
    ("max_concurrency", r"Maximum concurrency for [0-9,]{1,20} tokens per request: ([0-9.]{1,24})x", _f()),
    ("concurrency_len", r"Maximum concurrency for ([0-9,]{1,20}) tokens per request", _i()),
    # ----- configuration -----------------------------------------------------------------------
    ("max_model_len", r"max_model_len" + _ARG + r"([0-9]{1,18})", _i()),
    ("max_model_len", r"--max-model-len[ =]([0-9]{1,18})", _i()),
    ("max_model_len", r"max seq len \(([0-9]{1,18})\)", _i()),
    ("max_model_len", r"\bmax_seq_len=([0-9]{1,18})", _i()),
    ("max_model_len", r"\bcontext_len=([0-9]{1,18})", _i()),
    ("max_num_batched_tokens", r"max_num_batched_tokens" + _ARG + r"([0-9]{1,18})", _i()),
    ("max_num_batched_tokens", r"--max-num-batched-tokens[ =]([0-9]{1,18})", _i()),
    ("max_num_seqs", r"max_num_seqs" + _ARG + r"([0-9]{1,18})", _i()),
    ("max_num_seqs", r"--max-num-seqs[ =]([0-9]{1,18})", _i()),
    ("tensor_parallel_size", r"tensor_parallel_size" + _ARG + r"([0-9]{1,18})", _i()),
    ("tensor_parallel_size", r"--tensor-parallel-size[ =]([0-9]{1,18})", _i()),
    ("tensor_parallel_size", r"--tp(?:-size)?[ =]([0-9]{1,18})", _i()),
    ("tensor_parallel_size", r"\btp_size[ =]([0-9]{1,18})", _i()),
    ("pipeline_parallel_size", r"pipeline_parallel_size" + _ARG + r"([0-9]{1,18})", _i()),
    ("pipeline_parallel_size", r"--pipeline-parallel-size[ =]([0-9]{1,18})", _i()),
    ("pipeline_parallel_size", r"\bpp_size[ =]([0-9]{1,18})", _i()),
    ("enforce_eager", r"enforce_eager" + _ARG + r"(True|False)", lambda m: m.group(1) == "True"),
    ("enforce_eager", r"--enforce-eager\b", lambda m: True),
    ("dtype", r"\bdtype=torch\.(\w{1,40})", _s()),
    ("dtype", r"'dtype': '(\w{1,40})'", _s()),
    ("dtype", r"--dtype[ =](\w{1,40})", _s()),
    ("kv_cache_dtype", r"kv_cache_dtype" + _ARG + r"(\w{1,40})", _s()),
    ("kv_cache_dtype", r"Using KV cache dtype: torch\.(\w{1,40})", _s()),
    ("quantization", r"\bquantization" + _ARG + r"([A-Za-z]\w{0,40})", _s()),
    ("quantization", r"--quantization[ =](\w{1,40})", _s()),
    ("model", r"Starting to load model (\S{1,300}?)\.\.\.", _s()),
    ("model", r"'model': '([^']{1,300})'", _s()),
    ("model", r"\bmodel='([^']{1,300})'", _s()),
    ("model", r"model_path='([^']{1,300})'", _s()),
    ("model", r"vllm serve (\S{1,300})", _s()),
    ("model", r"--model[ =](\S{1,300})", _s()),
    ("gpu_name", r"(NVIDIA (?:GeForce |RTX )?[A-Z][A-Za-z0-9]{0,20}(?:[ -][A-Za-z0-9]{1,20}){0,4})", _s()),
    ("gpu_name", r"(AMD Instinct MI\w{1,20})", _s()),
    ("speculative_method", r"speculative_config=SpeculativeConfig\([^)]{0,2000}?method='(\w{1,40})'", _s()),
    ("speculative_method", r"'speculative_config': \{[^}]{0,2000}?'method': '(\w{1,40})'", _s()),
    ("draft_model", r"speculative_config=SpeculativeConfig\([^)]{0,2000}?model='([^']{1,300})'", _s()),
    ("draft_model", r"'speculative_config': \{[^}]{0,2000}?'model': '([^']{1,300})'", _s()),
    ("draft_model", r"--speculative[-_]model[ =](\S{1,300})", _s()),
    ("num_speculative_tokens", r"num_spec(?:ulative)?_tokens" + _ARG + r"([0-9]{1,18})", _i()),
    ("num_speculative_tokens", r"--num[-_]speculative[-_]tokens[ =]([0-9]{1,18})", _i()),
    ("engine_version", r"vLLM API server version ([0-9][\w.+-]{0,40})", _s()),
    ("engine_version", r"Initializing an? (?:V1 )?LLM engine \(v([0-9][\w.+-]{0,40})\)", _s()),
    ("engine_version", r"\bvllm(?:==| version )([0-9]{1,6}\.[0-9]{1,6}[\w.+-]{0,40})", _s()),
    ("engine_version", r"\bsglang(?:==| version )([0-9]{1,6}\.[0-9]{1,6}[\w.+-]{0,40})", _s()),
    ("engine_version", r"TensorRT-LLM version: ([0-9][\w.+-]{0,40})", _s()),
)


def _needle(pattern: str) -> tuple[str, int]:
    r"""The longest text every match of ``pattern`` contains (lower-cased) and where it starts in ``pattern``.

    >>> _needle(r"Free memory on device \([0-9.]{1,24}/" + _G)
    ('free memory on device (', 0)
    >>> _needle(r"# (?:GPU|cuda) blocks: ([0-9]{1,18})")
    (' blocks: ', 14)
    """
    pieces: list[tuple[str, int]] = []
    current, begin, depth, i = "", 0, 0, 0
    while i < len(pattern):
        at, char = i, pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            literal = pattern[i + 1] if not pattern[i + 1].isalnum() else None
            i += 2
        elif char == "[":
            literal, i = None, pattern.index("]", i + 2) + 1
        elif char == "{":
            literal, i = None, pattern.index("}", i) + 1
        else:
            literal, i = (char if char not in "()|.^$?*+{}" else None), i + 1
            depth += char == "("
            depth -= char == ")"
        if literal is not None and depth == 0 and not (i < len(pattern) and pattern[i] in "?*+{"):
            begin = at if not current else begin
            current += literal
        else:
            pieces.append((current, begin))
            current = ""
    pieces.append((current, begin))
    text, start = max(pieces, key=lambda piece: len(piece[0]))
    return text.lower(), start


class _Rule(NamedTuple):
    field: str
    needle: str
    #: The most characters a match can hold before the needle (every quantifier is bounded).
    before: int
    pattern: re.Pattern
    convert: Callable[[re.Match], object]


#: Needles for the patterns whose every literal sits inside a group (each such match starts with it).
_GIVEN_NEEDLES = {"(NVIDIA": "nvidia ", "(AMD": "amd instinct mi"}


def _rule(field: str, pattern: str, convert: Callable[[re.Match], object]) -> _Rule:
    needle, start = _needle(pattern)
    if len(needle) < 2:
        needle, start = next(n for prefix, n in _GIVEN_NEEDLES.items() if pattern.startswith(prefix)), 0
    before = re_parser.parse(pattern[:start]).getwidth()[1] if start else 0
    return _Rule(field, needle, before, re.compile(pattern, re.IGNORECASE), convert)


_RULES = tuple(_rule(*rule) for rule in RULES)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
#: Needle occurrences tried per line and rule (a real line states a fact once).
_TRIES_PER_LINE = 4

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


def _engine(lowered: str) -> tuple[str | None, list[str]]:
    scores = {engine: [m for m in markers if m.lower() in lowered] for engine, markers in _ENGINE_MARKERS.items()}
    best = max(scores, key=lambda e: len(scores[e]))
    if not scores[best]:
        return None, []
    if best == "vllm-v0" and scores["vllm-v1"] and len(scores["vllm-v1"]) == len(scores["vllm-v0"]):
        best = "vllm-v1"
    return best, [f"{best}: {', '.join(scores[best])}"]


def _match_at(rule: _Rule, text: str, hit: int, start: int, stop: int) -> re.Match | None:
    """The leftmost match holding the needle found at ``hit``; it starts at most ``rule.before`` earlier."""
    for begin in range(max(start, hit - rule.before), hit + 1):
        match = rule.pattern.match(text, begin, stop)
        if match is not None and match.end() >= hit + len(rule.needle):
            return match
    return None


def _first_match(text: str, lowered: str, rule: _Rule) -> tuple[re.Match, str] | None:
    """The first line (cut to :data:`MAX_LINE_CHARS`) where ``rule`` matches, with the match.

    ``str.find`` locates the needle; the regex is tried only where a match holding that needle can start
    (a bounded window), at most :data:`_TRIES_PER_LINE` times per line: linear in the text's length.
    """
    pos = 0
    while (hit := lowered.find(rule.needle, pos)) != -1:
        start = text.rfind("\n", 0, hit) + 1
        end = text.find("\n", hit)
        end = len(text) if end == -1 else end
        stop = min(end, start + MAX_LINE_CHARS)
        tries = 0
        while hit != -1 and tries < _TRIES_PER_LINE:
            match = _match_at(rule, text, hit, start, stop)
            if match is not None:
                return match, text[start:stop]
            tries += 1
            hit = lowered.find(rule.needle, hit + 1, stop)
        pos = end + 1
    return None


def _check_size(text: str | bytes) -> str:
    if isinstance(text, bytes | bytearray):
        if len(text) > 4 * MAX_LOG_CHARS:
            raise InputError("log", f"{len(text):,} bytes", f"at most {MAX_LOG_CHARS:,} characters (the start-up part)")
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str) or not text.strip():
        raise InputError("log", "(empty)", "the text of a serving engine's start-up log")
    if len(text) > MAX_LOG_CHARS:
        raise InputError(
            "log", f"{len(text):,} characters", f"at most {MAX_LOG_CHARS:,} characters (the start-up part)"
        )
    return text


def parse_engine_log(text: str | bytes) -> EngineLogFacts:
    """The facts a pasted or uploaded start-up log states (see the module docstring for the formats).

    Per rule, one pass: ``str.find`` for the rule's literal text, then its regex (every quantifier bounded)
    on the line holding it, lines cut at :data:`MAX_LINE_CHARS`. The time is linear in the log's length
    (bench/log_parse_timing.py); the first rule of a field that matches anywhere wins.
    """
    text = _check_size(text).replace("\r\n", "\n").replace("\r", "\n")
    lowered = text.translate(_ASCII_LOWER)  # same length as text, so positions carry over
    facts = EngineLogFacts()
    if max(map(len, text.split("\n"))) > MAX_LINE_CHARS:
        facts.notes.append(f"lines longer than {MAX_LINE_CHARS:,} characters: only their start was read")
    for rule in _RULES:
        if rule.field in facts.evidence:
            continue
        found = _first_match(text, lowered, rule)
        if found is None:
            continue
        try:
            value = rule.convert(found[0])
        except (ValueError, KeyError, OverflowError):
            continue
        setattr(facts, rule.field, value)
        facts.evidence[rule.field] = found[1].strip()[:240]
    facts.engine, facts.engine_hints = _engine(lowered)
    _derive(facts, text, lowered)
    return facts


def _log_conventions(log_engine: str | None) -> LogConventions | None:
    """How the engine that wrote the log states memory (``log`` in data/engines.json)."""
    engine = find_engine_id(log_engine)
    return engine_spec(engine).log if engine else None


_PEAK = _rule("activation_peak_bytes", r"Memory profiling results:.{0,2000}?peak_torch_memory=" + _G, _b())
_GB = _rule("notes", r"[0-9][ \t]{0,4}GB\b", lambda m: True)
_RANK = re.compile(r"\b(?:TP|Worker_TP)([0-9]{1,6})\b", re.IGNORECASE)


def _derive(facts: EngineLogFacts, text: str, lowered: str) -> None:
    """Facts implied by others, each with a note saying how."""
    conventions = _log_conventions(facts.engine)
    if conventions and conventions.gb_means_gib and _first_match(text, lowered, _GB):
        facts.notes.append('"GB" in this log is read as GiB (vLLM and SGLang print GiB under that label)')
    peak = _first_match(text, lowered, _PEAK)
    if facts.activation_peak_bytes is None and peak and facts.weights_bytes is not None:
        facts.activation_peak_bytes = _bytes(peak[0].group(1), peak[0].group(2)) - facts.weights_bytes
        facts.evidence["activation_peak_bytes"] = peak[1].strip()[:240]
        facts.notes.append("activation peak = peak_torch_memory - weights (this vLLM release logs them together)")
    if facts.kv_cache_tokens is None and facts.num_gpu_blocks is not None:
        block = facts.block_size or (conventions.default_block_size if conventions else None)
        if block:
            facts.kv_cache_tokens = facts.num_gpu_blocks * block
            facts.notes.append(f"KV tokens = {facts.num_gpu_blocks:,} blocks x {block} tokens per block")
    if facts.max_model_len is None and facts.concurrency_len is not None:
        facts.max_model_len = facts.concurrency_len
    if facts.tensor_parallel_size is None and "tp" in lowered:
        ranks = {int(r) for r in _RANK.findall(text)}
        if ranks:
            facts.tensor_parallel_size = max(ranks) + 1
            facts.notes.append(f"TP {facts.tensor_parallel_size} from the rank names in the log")
    if facts.kv_cache_bytes is not None and facts.kv_cache_bytes < 0:
        facts.notes.append("the log reports a negative KV budget: the engine could not start with these settings")
    if "memory after warmup:" in lowered and "kv cache blocks" in lowered:
        facts.kv_sized_after_warmup = True
    if "cuda graph memory profiling is enabled" in lowered:
        facts.cudagraph_profiling_enabled = True
    elif "estimated cuda graph memory" in lowered or "vllm_memory_profiler_estimate_cudagraphs" in lowered:
        facts.cudagraph_profiling_enabled = False
    if conventions and conventions.kv_reported_as_k_plus_v and facts.kv_cache_bytes is not None:
        facts.notes.append("SGLang reports K and V sizes separately: KV cache = K + V")
