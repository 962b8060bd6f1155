"""How serving engines budget GPU memory: typed profiles from ``data/engines.json``, one variant per engine.

Everything the planner does differently per engine is a field of its profile (read from data) or a
method of its variant class below; no other module branches on an engine's name. The engine list is
``planner.deployment.ENGINES``; ``tests/core/test_engine_profiles.py`` keeps it equal to the data's
engines and to the variants here. The memory components each profile's fields select are in
:mod:`planner.engines.components`; the budget rule a profile names is applied by
:mod:`planner.memory.budget_rules`.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), engine_version="0.19.0")
>>> limits = resolve_limits(dep, engine_profile(dep.engine, dep.engine_version))
>>> limits.max_num_batched_tokens, limits.max_num_seqs, limits.memory_fraction
(8192, 1024, 0.9)
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from planner.catalog.hardware import device_total_bytes
from planner.deployment import Deployment
from planner.engines.capture_sizes import captured_sizes
from planner.engines.default_limits import (
    FixedLimits,
    PerRequestLimits,
    ReservedMemoryRule,
    SglangLimits,
    VllmLimits,
    VllmV0Limits,
)
from planner.engines.sglang_fractions import FractionByTp, ReserveByGpuTier, sglang_gpu_mib
from planner.engines.versions import parse_version
from planner.errors import CatalogError, InputError, first_pydantic_error
from planner.facts import data_cache, read_data_file, register_cache
from planner.units import GIB

BudgetRule = Literal[
    "fraction_of_total",
    "measured_after_warmup",
    "fraction_of_free_after_weights",
    "static_fraction_after_weights",
    "whole_device",
]
DraftKv = Literal[
    "shared_pool", "even_block_split", "separate_pool_with_headroom", "static_region_by_layers", "separate_cache"
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LogConventions(_Strict):
    """How an engine's start-up log states memory (read by :mod:`planner.validation.engine_log`)."""

    #: The log writes "GB" for 2^30 bytes.
    gb_means_gib: bool
    #: Tokens per KV block when the log counts blocks without stating their size.
    default_block_size: int | None = Field(ge=1)
    #: The log gives K and V sizes separately; the KV cache is their sum.
    kv_reported_as_k_plus_v: bool
    source: str


class EngineSpec(_Strict):
    """One engine: its names, memory knob and log conventions (its release profiles are listed apart)."""

    id: str
    name: str
    aliases: tuple[str, ...] = ()
    memory_knob: str | None
    log: LogConventions
    source: str


class HybridKvGroups(_Strict):
    """vLLM V1's hybrid KV-cache manager (see :mod:`planner.memory.kv_groups`): layers grouped by attention kind."""

    #: The group size is the largest kind's layer count when it is below this multiple of the smallest's
    #: (None: always the smallest).
    largest_group_below_ratio: float | None = Field(gt=1)
    source: str


class RejectionSamplerWarmup(_Strict):
    """vLLM V1's start-up sampler warm-up with a speculative config also runs the rejection sampler: one more
    sampler pass over ``max_num_seqs`` rows of the vocabulary while ``kept_logit_rows_per_seq`` rows per
    sequence of logits in the model dtype stay allocated (the warm-up's own logits and its dummy draft and
    bonus target logits); its peak joins the profile run's peaks."""

    kept_logit_rows_per_seq: int = Field(ge=0)
    source: str


class MeasuredKvSizing(_Strict):
    """How vLLM from 0.34 sizes its extensible KV cache from the memory measured after warm-up and CUDA-graph
    capture (budget rule ``measured_after_warmup``): what it keeps free beside what it measures.

    The cache gets ``min(fraction · total − resident, free at start − resident − margin) − peak``, where
    ``resident`` is what stays allocated after warm-up (weights, non-torch memory, CUDA graphs), ``peak`` the
    transient activation peak and ``margin = max(margin floor, margin_fraction_of_peak · peak)``.
    """

    #: Device memory already in use when the worker starts (the CUDA context): ``total − free at start``.
    in_use_at_start_gib: float = Field(ge=0)
    in_use_at_start_source: str
    #: The margin's floor per GPU vendor, and its share of the transient peak.
    margin_floor_gib: dict[Literal["nvidia", "amd", "other"], float]
    margin_fraction_of_peak: float = Field(ge=0, le=1)
    source: str

    def margin_floor(self, vendor: str) -> float:
        """The margin's floor in GiB on a GPU of ``vendor`` (NVIDIA's where the vendor has none of its own)."""
        return self.margin_floor_gib.get(vendor, self.margin_floor_gib["nvidia"])

    def kept_free_bytes(self, vendor: str, peak_bytes: int) -> int:
        """What the sizing keeps free on a GPU of ``vendor`` beside the transient peak: the memory in use at start
        and the margin.

        >>> sizing = engine_profile("vllm", "0.34.0").measured_kv_sizing
        >>> round(sizing.kept_free_bytes("nvidia", 2 * GIB) / GIB, 2)  # 0.51 at start + max(1, 0.75 x 2) GiB
        2.01
        """
        margin = max(round(self.margin_floor(vendor) * GIB), round(self.margin_fraction_of_peak * peak_bytes))
        return round(self.in_use_at_start_gib * GIB) + margin


# ----- profiles ----------------------------------------------------------------------------------


#: The ``max_version`` of a profile in data/engines.json that covers every later release.
OPEN_ENDED_VERSION = "99.0.0"


class EngineProfile(_Strict):
    """One engine release range: its budget rule, how its components are estimated, and its defaults."""

    id: str
    engine: str
    engine_name: str
    memory_knob: str | None
    min_version: str
    max_version: str
    budget_rule: BudgetRule
    default_memory_fraction: float | None = Field(gt=0, le=1)
    block_size: int = Field(ge=1)
    draft_kv: DraftKv
    #: The engine's profile run counts the draft's weights (vLLM V0 does not: vLLM issue #9995).
    draft_weights_budgeted: bool = True
    lookahead_slots_per_seq: Literal["k"]
    sliding_window_savings: bool
    #: The KV budget subtracts the CUDA-graph estimate (vLLM from 0.20).
    cudagraph_subtracted: bool
    #: GPU vendors on which the engine skips that estimate, so the graphs stay beside the budget (vLLM 0.20 to 0.25
    #: on ROCm).
    cudagraph_unestimated_vendors: tuple[Literal["nvidia", "amd", "other"], ...] = ()
    #: The model is compiled (torch.compile) inside the memory profile, so on a first start the compiler's
    #: temporary memory counts as activation peak (vLLM V1; vLLM issues #54122 and #54383).
    compiles_in_profile: bool = False
    #: The plan shows vLLM's CUDA-graph estimate as a component.
    cudagraph_estimated: bool
    #: The activation peak is the largest of the profile run's peaks (forward, sampler, warm-ups) or their sum.
    activation_peak: Literal["max", "sum"]
    #: Entries of ``calibration`` in data/engines.json for the forward pass's activation factor, the sampler's
    #: bytes per logit and non-torch memory.
    forward_calibration: Literal["forward_activation_factor", "v0_forward_activation_factor"] = (
        "forward_activation_factor"
    )
    sampler_calibration: Literal["sampler_bytes_per_logit", "v0_sampler_bytes_per_logit"]
    #: Sequences the profile run samples: ``max_num_seqs`` dummy requests (vLLM, SGLang) or the context-only
    #: requests that fill ``max_num_batched_tokens`` with prompts of ``max_model_len - 1`` tokens (TensorRT-LLM's
    #: estimation run, one sampled token each).
    profile_run_sequences: Literal["max_num_seqs", "context_requests"] = "max_num_seqs"
    #: The rejection-sampler warm-up vLLM V1 runs at start-up when speculating (None: none).
    rejection_sampler_warmup: RejectionSamplerWarmup | None = None
    non_torch_calibration: Literal[
        "non_torch_gib",
        "v0_non_torch_gib",
        "v0_6_non_torch_gib",
        "v0_5_non_torch_gib",
        "sglang_non_torch_gib",
        "hf_context_gib",
    ]
    #: The model's output hidden states [N, H] stay held while logits are computed and sampled (vLLM V0's
    #: ``execute_model``), so the sampler phase adds them.
    sampler_holds_hidden_states: bool = False
    #: The engine runs draft-model speculative decoding under pipeline parallelism.
    draft_with_pipeline_parallel: bool
    #: Tokens a sliding-window layer keeps beyond its window: ``max_num_batched_tokens - 1`` (vLLM's
    #: sizing) or ``-1`` (transformers keeps ``window - 1``).
    sliding_window_slack: Literal["max_num_batched_tokens", "window_minus_one"]
    #: Models mixing attention kinds get grouped KV caches with per-group tokens and a window-limited
    #: admission check; None: every layer is sized at full length in one pool.
    hybrid_kv_groups: HybridKvGroups | None = None
    #: The engine allocates rotary cos/sin caches with the model, inside its weights memory (vLLM).
    rope_cache_in_weights: bool = False
    #: An MTP module keeps its own LM head (``shared_head.head``) beside the target's (older vLLM releases).
    mtp_keeps_own_lm_head: bool = False
    #: What the extensible KV cache keeps free (budget rule ``measured_after_warmup`` only).
    measured_kv_sizing: MeasuredKvSizing | None = None
    source: str

    @property
    def open_ended(self) -> bool:
        """Whether the profile covers every release from its first on (``OPEN_ENDED_VERSION``)."""
        return parse_version(self.max_version) >= parse_version(OPEN_ENDED_VERSION)

    def releases(self) -> str:
        """The releases the profile covers, in words.

        >>> engine_profile("vllm", "0.21.0").releases(), engine_profile("vllm").releases()
        ('vLLM (V1 engine) from 0.20.0, before 0.26.0', 'vLLM (V1 engine) from 0.34.0 on')
        >>> engine_profile("trtllm").releases()
        'TensorRT-LLM, every release'
        """
        first = "" if parse_version(self.min_version) == parse_version("0") else f" from {self.min_version}"
        if self.open_ended:
            return f"{self.engine_name}{first} on" if first else f"{self.engine_name}, every release"
        return f"{self.engine_name}{first}, before {self.max_version}"

    def subtracts_graphs(self, vendor: str) -> bool:
        """Whether the KV budget on a GPU of ``vendor`` subtracts the CUDA-graph estimate.

        >>> [engine_profile("vllm", release).subtracts_graphs("amd") for release in ("0.25.0", "0.26.0")]
        [False, True]
        """
        return self.cudagraph_subtracted and vendor not in self.cudagraph_unestimated_vendors

    def profile_run_seqs(self, limits: Limits, max_model_len: int) -> int:
        """Sequences the profile run samples (see ``profile_run_sequences``).

        >>> limits = Limits(memory_fraction=0.9, block_size=32, max_num_batched_tokens=8192, max_num_seqs=2048,
        ...                 cudagraph_capture_sizes=0)
        >>> trtllm, vllm = engine_profile("trtllm"), engine_profile("vllm")
        >>> trtllm.profile_run_seqs(limits, 4096), vllm.profile_run_seqs(limits, 4096)
        (3, 2048)
        """
        if self.profile_run_sequences == "max_num_seqs":
            return limits.max_num_seqs
        tokens = limits.max_num_batched_tokens
        prompt = max(1, min(tokens, max_model_len - 1))
        return -(-tokens // prompt)

    def memory_fraction(self, dep: Deployment, total_bytes: int) -> tuple[float, list[str]]:
        """The memory knob's value when the deployment leaves it unset, and how it was derived."""
        if self.default_memory_fraction is None:
            raise CatalogError(f"engines.json profile {self.id}: default_memory_fraction is required")
        return self.default_memory_fraction, []


class VllmProfile(EngineProfile):
    engine: Literal["vllm"]
    default_limits: VllmLimits

    @model_validator(mode="after")
    def _measured_rule_has_its_sizing(self) -> VllmProfile:
        if (self.budget_rule == "measured_after_warmup") != (self.measured_kv_sizing is not None):
            raise ValueError("measured_kv_sizing is given exactly when the budget rule is measured_after_warmup")
        return self


class VllmV0Profile(EngineProfile):
    engine: Literal["vllm-v0"]
    default_limits: VllmV0Limits


class TrtllmProfile(EngineProfile):
    engine: Literal["trtllm"]
    default_limits: FixedLimits


class HfProfile(EngineProfile):
    engine: Literal["hf"]
    default_limits: PerRequestLimits


class SglangProfile(EngineProfile):
    """One SGLang release family: its default static fraction (a TP table to 0.4.7, a reserve by GPU tier from
    0.4.8, the reserved-memory rule from 0.5.3), what the static region holds, and when the draft's weights are
    loaded."""

    engine: Literal["sglang"]
    default_limits: SglangLimits
    reserved_memory_rule: ReservedMemoryRule | None = None
    fraction_by_tp: FractionByTp | None = None
    reserve_by_gpu_tier: ReserveByGpuTier | None = None
    #: The draft's weights are loaded before the pool is sized, so they come out of the static region.
    draft_weights_in_static_region: bool = False
    #: While the pool is sized the draft head still holds its own copies of the target's embedding and LM head.
    draft_head_copies_kept_while_sizing: bool = False

    @model_validator(mode="after")
    def _one_fraction_rule(self) -> SglangProfile:
        rules = (self.reserved_memory_rule, self.fraction_by_tp, self.reserve_by_gpu_tier)
        if sum(rule is not None for rule in rules) != 1:
            raise ValueError("exactly one of reserved_memory_rule, fraction_by_tp and reserve_by_gpu_tier")
        return self

    def memory_fraction(self, dep: Deployment, total_bytes: int) -> tuple[float, list[str]]:
        """SGLang's default ``mem_fraction_static = round((gpu_mem - reserved_mem) / gpu_mem, 3)``."""
        if self.default_memory_fraction is not None:
            return self.default_memory_fraction, []
        fraction = self.default_fraction(dep, total_bytes, dep.speculative_method)
        rule = "TP table" if self.fraction_by_tp is not None else "reserved-memory rule"
        return fraction, [f"mem_fraction_static {fraction:.3f} from SGLang's {rule}"]

    def default_fraction(self, dep: Deployment, total_bytes: int, method: str | None) -> float:
        """The rule for speculative ``method`` (``draft_model``, ``eagle``, ``eagle3``, ``mtp``, ``ngram`` or None).

        >>> from planner.catalog.lookup import get_model, get_gpu
        >>> dep = Deployment.build(target=get_model("Llama-3.1-8B"), gpu=get_gpu("h200-sxm-141gb"), engine="sglang")
        >>> engine_profile("sglang", "0.5.3").default_fraction(dep, 0, None)
        0.907
        >>> engine_profile("sglang", "0.4.5").default_fraction(dep, 0, None)  # the TP table
        0.88
        """
        gpu_mib = sglang_gpu_mib(dep, total_bytes)
        if self.fraction_by_tp is not None:  # 0.4 to 0.4.7: the TP table and its large-GPU terms
            return self.fraction_by_tp.fraction(dep.tp, dep.pp, gpu_mib, speculative=method is not None)
        if self.reserve_by_gpu_tier is not None:  # 0.4.8 to 0.5.2: a reserve by GPU tier
            return self.reserve_by_gpu_tier.fraction(dep.tp, dep.pp, gpu_mib, method)
        rule, limits = self.reserved_memory_rule, self.default_limits
        assert rule is not None  # one rule is set (_one_fraction_rule)
        tier = limits.tier(gpu_mib)
        chunk = dep.max_num_batched_tokens or tier.chunked_prefill_size
        reserved = (
            rule.base_mib
            + max(chunk, rule.min_chunked_prefill_tokens) * rule.per_chunked_prefill_token_mib
            + limits.cuda_graph_max_bs(gpu_mib, dep.tp) * rule.per_cuda_graph_bs_mib
            + dep.tp * dep.pp / 8 * rule.per_eighth_gpu_mib
            + (
                0.0
                if (rule.prefill_graphs_off_with_speculation and method is not None)
                or (rule.prefill_graphs_off_with_pipeline and dep.pp > 1)
                else rule.prefill_graph_mib(max(chunk, 0), mla=dep.target.architecture.mla is not None)
            )
        )
        if gpu_mib > rule.large_gpu_above_mib:
            reserved = max(reserved, rule.min_mib_on_large_gpus)
        if method is not None:
            if method not in rule.draft_extra_mib:
                raise InputError("speculative_method", method, f"one of {', '.join(rule.draft_extra_mib)}")
            reserved += rule.draft_extra_mib[method]
        return max(0.05, round((gpu_mib - reserved) / gpu_mib, rule.fraction_decimals))


_ProfileVariant = Annotated[
    VllmProfile | VllmV0Profile | SglangProfile | TrtllmProfile | HfProfile, Field(discriminator="engine")
]
#: Every profile variant, one per engine (the test keeps them equal to ``ENGINES`` and to the data).
PROFILE_VARIANTS: tuple[type[EngineProfile], ...] = (
    VllmProfile,
    VllmV0Profile,
    SglangProfile,
    TrtllmProfile,
    HfProfile,
)
_PROFILE: TypeAdapter[EngineProfile] = TypeAdapter(_ProfileVariant)


class Limits(BaseModel):
    """The engine knobs after defaults are applied (what the engine will actually use)."""

    memory_fraction: float
    block_size: int
    max_num_batched_tokens: int
    max_num_seqs: int
    cudagraph_capture_sizes: int
    notes: list[str] = []


@data_cache
def engines_file() -> dict:
    return read_data_file("engines.json")


@data_cache
def list_engines() -> tuple[EngineSpec, ...]:
    """The engines of ``data/engines.json``, in file order."""
    specs = []
    for raw in engines_file()["engines"]:
        fields = {key: value for key, value in raw.items() if key != "profiles"}
        try:
            specs.append(EngineSpec.model_validate(fields))
        except ValidationError as exc:
            raise CatalogError(f"engines.json engine {raw.get('id')}: {first_pydantic_error(exc)}") from exc
    return tuple(specs)


@data_cache
def list_engine_profiles() -> tuple[EngineProfile, ...]:
    profiles = []
    for engine, raw in zip(list_engines(), engines_file()["engines"], strict=True):
        for entry in raw["profiles"]:
            fields = {**entry, "engine": engine.id, "engine_name": engine.name, "memory_knob": engine.memory_knob}
            try:
                profiles.append(_PROFILE.validate_python(fields))
            except ValidationError as exc:
                raise CatalogError(f"engines.json profile {entry.get('id')}: {first_pydantic_error(exc)}") from exc
    return tuple(profiles)


def engine_spec(engine: str) -> EngineSpec:
    """The engine ``engine`` (an id of ``ENGINES``)."""
    for spec in list_engines():
        if spec.id == engine:
            return spec
    raise InputError("engine", engine, f"one of {', '.join(s.id for s in list_engines())}")


@data_cache
def engine_profiles(engine: str) -> tuple[EngineProfile, ...]:
    """Every profiled release range of ``engine``, oldest first (kept: a design-space search asks thousands of
    times)."""
    found = [p for p in list_engine_profiles() if p.engine == engine_spec(engine).id]
    return tuple(sorted(found, key=lambda p: parse_version(p.min_version)))


@lru_cache(maxsize=256)
def engine_profile(engine: str, version: str | None = None) -> EngineProfile:
    """The profile of ``engine`` covering ``version`` (default: the newest profiled release; the last 256 asked
    are kept, forgotten with the data caches)."""
    candidates = engine_profiles(engine)
    if version is None:
        return candidates[-1]
    wanted = parse_version(version)
    for profile in candidates:
        if parse_version(profile.min_version) <= wanted and (
            wanted < parse_version(profile.max_version) or profile.open_ended
        ):
            return profile
    ranges = ", ".join(
        f"{p.min_version} or later" if p.open_ended else f"[{p.min_version}, {p.max_version})" for p in candidates
    )
    raise InputError("engine_version", version, f"a {engine} release in {ranges}")


register_cache(engine_profile)


def engine_release(engine: str, version: str | None) -> str:
    """The release of ``engine`` asked for (None: the newest profiled) and the profile that sizes it, in words.

    >>> engine_release("vllm", None)
    'the newest profiled release: vLLM (V1 engine) from 0.34.0 on (profile vllm-v1-0.34)'
    >>> engine_release("vllm", "0.19.1")
    'release 0.19.1: vLLM (V1 engine) from 0.10.0, before 0.20.0 (profile vllm-v1-0.10)'
    """
    profile = engine_profile(engine, version)
    which = f"release {version}" if version else "the newest profiled release"
    return f"{which}: {profile.releases()} (profile {profile.id})"


def resolve_limits(dep: Deployment, profile: EngineProfile) -> Limits:
    """Apply the engine's documented defaults to the knobs the deployment leaves unset."""
    total = dep.gpu_memory_bytes or device_total_bytes(dep.gpu).bytes
    notes: list[str] = []
    fraction = dep.memory_fraction
    if fraction is None:
        fraction, notes = profile.memory_fraction(dep, total)
    tokens, seqs = profile.default_limits.batch(dep, total)  # type: ignore[attr-defined]
    tokens = dep.max_num_batched_tokens or tokens
    seqs = dep.max_num_seqs or seqs
    captures = len(captured_sizes(dep, profile, seqs, tokens))
    return Limits(
        memory_fraction=fraction,
        block_size=profile.block_size,
        max_num_batched_tokens=tokens,
        max_num_seqs=seqs,
        cudagraph_capture_sizes=captures,
        notes=notes,
    )
