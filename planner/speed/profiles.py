"""Engine speed profiles: the achievable fractions of peak and the overheads the roofline uses.

``data/speed_profiles.json`` holds two layers, each value with its source or the derivation of its
fit (``bench/fit_speed_profile.py``):

* ``vendors``: what the hardware and its libraries achieve (HBM streaming fraction, GEMM fraction of
  the dense peak, link fraction, all-reduce latency), per GPU vendor;
* ``engines``: what the serving engine adds (per-layer launch floor with and without CUDA graphs,
  per-step and per-speculative-step overheads, the draft proposer's first-pass width); an engine
  may name a ``base`` engine and ``vendor_overrides`` for values that differ by vendor.

A resolved profile is vendor values, then the base engine's, then the engine's, then the engine's
overrides for that vendor, so every number lives in one place.

>>> profile = speed_profile("vllm", "amd")
>>> profile.id, 0 < profile.bandwidth_frac <= 1
('vllm-amd', True)
>>> speed_profile("trtllm", "nvidia").value_source("allreduce_latency_s")[:6]
'SGLang'
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner.errors import CatalogError, InputError, first_pydantic_error
from planner.facts import data_cache, read_data_file

PROFILE_FILE = "speed_profiles.json"

#: Every parameter a resolved profile has (their meaning is in the data file's ``parameters``).
PARAMETERS = (
    "bandwidth_frac",
    "flops_frac",
    "gemm_half_tokens",
    "attention_flops_frac",
    "link_frac",
    "allreduce_latency_s",
    "layer_overhead_s",
    "eager_layer_overhead_s",
    "measured_layer_overhead_s",
    "step_overhead_s",
    "tp_step_overhead_s",
    "draft_step_overhead_s",
    "head_pass_overhead_s",
    "spec_step_overhead_s",
    "seq_overhead_s",
    "draft_seq_overhead_s",
    "spec_seq_overhead_s",
    "host_serial_frac",
    "sampling_bytes_per_logit",
    "draft_first_pass_tokens",
    "draft_first_pass_spans_k",
    "cuda_graphs",
    "mixed_prefill",
    "chunked_prefill",
    "admission_reserves_output",
    "scheduler_steps",
)


class ProfileValue(BaseModel):
    """One calibrated or sourced value."""

    model_config = ConfigDict(extra="forbid")

    value: float | int | bool
    source: str = Field(min_length=1)


class VendorEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    vendor: str
    values: dict[str, ProfileValue]


class EngineEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    engine: str
    base: str | None = None
    source: str = Field(min_length=1)
    values: dict[str, ProfileValue] = {}
    vendor_overrides: dict[str, dict[str, ProfileValue]] = {}


class ProfileFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str
    parameters: dict[str, str]
    calibration: dict[str, Any] = {}
    vendors: list[VendorEntry]
    engines: list[EngineEntry]


class SpeedProfile(BaseModel):
    """A resolved profile: every parameter with its value and source."""

    model_config = ConfigDict(frozen=True)

    id: str
    engine: str
    vendor: str
    bandwidth_frac: float = Field(gt=0, le=1)
    flops_frac: float = Field(gt=0, le=1)
    gemm_half_tokens: float = Field(ge=0)
    attention_flops_frac: float = Field(gt=0, le=1)
    link_frac: float = Field(gt=0, le=1)
    allreduce_latency_s: float = Field(ge=0)
    layer_overhead_s: float = Field(ge=0)
    eager_layer_overhead_s: float = Field(ge=0)
    measured_layer_overhead_s: float = Field(ge=0)
    step_overhead_s: float = Field(ge=0)
    tp_step_overhead_s: float = Field(ge=0)
    draft_step_overhead_s: float = Field(ge=0)
    head_pass_overhead_s: float = Field(ge=0)
    spec_step_overhead_s: float = Field(ge=0)
    seq_overhead_s: float = Field(ge=0)
    #: ``seq_overhead_s`` of the draft's (or head's) passes: the engine prepares a step's per-sequence inputs once.
    draft_seq_overhead_s: float = Field(ge=0)
    spec_seq_overhead_s: float = Field(ge=0)
    #: Host work per engine step the engine does not overlap with the GPU, as a share of the step's GPU time.
    host_serial_frac: float = Field(ge=0, le=1)
    sampling_bytes_per_logit: float = Field(ge=0)
    draft_first_pass_tokens: int = Field(ge=1)
    draft_first_pass_spans_k: bool
    cuda_graphs: bool
    mixed_prefill: bool
    #: A prompt may be split across steps; otherwise it runs whole in one step (its tokens must fit the budget left).
    chunked_prefill: bool
    #: Admission holds KV for the whole request (no preemption) rather than for its prompt.
    admission_reserves_output: bool
    #: Decode steps per scheduler call (vLLM V0 ``--num-scheduler-steps``): the batch is frozen for that many steps.
    scheduler_steps: int = Field(ge=1)
    #: Running-request cap an engine applies when a draft is used (0: none beyond max_num_seqs).
    sources: dict[str, str]

    def draft_first_pass_query_tokens(self, k: int) -> int:
        """Query tokens per sequence in the draft's first pass of a step (vLLM V1: K + 2)."""
        return k + self.draft_first_pass_tokens if self.draft_first_pass_spans_k else self.draft_first_pass_tokens

    def value_source(self, name: str) -> str:
        return self.sources[name]

    def with_values(self, **values: Any) -> SpeedProfile:
        """A copy with some values replaced (the fit's grid search, what-if studies)."""
        sources = dict(self.sources) | dict.fromkeys(values, "override")
        return self.model_copy(update={**values, "sources": sources})

    def parameters(self) -> list[tuple[str, float | int | bool, str]]:
        """(name, value, source) of every parameter, for the assumptions panel and reports."""
        return [(name, getattr(self, name), self.sources[name]) for name in PARAMETERS]


@data_cache
def _file() -> ProfileFile:
    try:
        return ProfileFile.model_validate(read_data_file(PROFILE_FILE))
    except ValidationError as exc:
        raise CatalogError(f"{PROFILE_FILE}: {first_pydantic_error(exc)}") from exc


def _engine_values(name: str, vendor: str, engines: dict[str, EngineEntry], seen: tuple[str, ...] = ()) -> dict:
    if name in seen:
        raise CatalogError(f"{PROFILE_FILE}: engine {name!r} inherits from itself")
    entry = engines[name]
    values: dict[str, ProfileValue] = {}
    if entry.base is not None:
        if entry.base not in engines:
            raise CatalogError(f"{PROFILE_FILE}: engine {name!r} has an unknown base {entry.base!r}")
        values |= _engine_values(entry.base, vendor, engines, (*seen, name))
    return values | entry.values | entry.vendor_overrides.get(vendor, {})


@data_cache
def _resolve(engine: str, vendor: str) -> SpeedProfile:
    data = _file()
    vendors = {v.vendor: v for v in data.vendors}
    engines = {e.engine: e for e in data.engines}
    if engine not in engines:
        raise InputError("engine", engine, f"an engine with a speed profile: {', '.join(sorted(engines))}")
    if vendor not in vendors:
        raise InputError("gpu", vendor, f"a GPU vendor with a speed profile: {', '.join(sorted(vendors))}")
    values = vendors[vendor].values | _engine_values(engine, vendor, engines)
    missing = [name for name in PARAMETERS if name not in values]
    if missing:
        raise CatalogError(f"{PROFILE_FILE}: profile {engine}-{vendor} lacks {', '.join(missing)}")
    try:
        return SpeedProfile(
            id=f"{engine}-{vendor}",
            engine=engine,
            vendor=vendor,
            sources={name: values[name].source for name in PARAMETERS},
            **{name: values[name].value for name in PARAMETERS},
        )
    except ValidationError as exc:
        raise CatalogError(f"{PROFILE_FILE} profile {engine}-{vendor}: {first_pydantic_error(exc)}") from exc


def speed_profile(engine: str, vendor: str) -> SpeedProfile:
    """The resolved profile of ``engine`` on a GPU of ``vendor``."""
    return _resolve(engine, vendor)


def calibration_summary() -> dict[str, Any]:
    """The calibration record of the data file (errors printed by ``make bench-speed-accuracy``)."""
    return dict(_file().calibration)


StepTimes = Literal["measured kernels", "roofline"]
#: Where the data file records the error of step times from each source.
ERROR_RECORDS: dict[str, str] = {"measured kernels": "serving_output_error", "roofline": "roofline_output_error"}


class ThroughputError(BaseModel):
    """The serving simulator's output tokens per second against published runs it was not fitted on, in percent
    (``make bench-serving`` prints it; the data file records it as ``calibration.serving_output_error`` with step
    times from measured kernels, ``calibration.roofline_output_error`` with every step on the roofline)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    median_abs_pct: float = Field(ge=0)
    #: The most the planner's figure was above a published one (0 where it was never above).
    most_over_pct: float = Field(ge=0)
    rows: int = Field(ge=1)
    source: str = Field(min_length=1)
    #: Where the step times of the runs behind it came from.
    step_times: StepTimes = "measured kernels"


def measured_throughput_error(step_times: StepTimes = "measured kernels") -> ThroughputError | None:
    """The recorded :class:`ThroughputError` of step times from ``step_times`` (None where the data file records
    none).

    >>> error = measured_throughput_error()
    >>> error is None or error.most_over_pct >= 0
    True
    >>> roofline = measured_throughput_error("roofline")
    >>> roofline is None or roofline.step_times
    'roofline'
    """
    key = ERROR_RECORDS[step_times]
    record = _file().calibration.get(key)
    if record is None:
        return None
    try:
        return ThroughputError.model_validate({**record, "step_times": step_times})
    except ValidationError as exc:
        raise CatalogError(f"{PROFILE_FILE}: calibration.{key}: {first_pydantic_error(exc)}") from exc


def clear_profile_cache() -> None:
    _file.cache_clear()
    _resolve.cache_clear()
