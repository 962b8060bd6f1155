"""What a design-space search covers: the configurations to try, the workload, the objectives.

A point of the space is one way to serve the target: node type × TP (× PP where the model needs it) ×
weight and KV precision × speculation (none, every compatible draft model of the catalog, the heads
trained for the target, its MTP layers, n-gram lookup) × K × batch cap (``max_num_seqs``) × engine.

>>> space = SearchSpace.build(target="Llama-3.1-8B", nodes=("1x-h100-sxm-80gb",), methods=("none", "ngram"),
...                           ks=(2, 4), dtypes=("bf16",), batch_caps=(8, 32))
>>> space.precisions(), space.k_values("ngram", 0), space.k_values("none", 0)
([('bf16', 'auto')], (2, 4), (None,))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from planner.catalog.importing import resolve_model
from planner.catalog.lookup import get_kv_dtype, get_node, get_weight_format, list_kv_dtypes, list_weight_formats
from planner.catalog.schemas import ModelSpec, NodeType
from planner.defaults import (
    DEFAULT_SLO_PRESET,
    OBJECTIVE_PERCENTILE,
    SLO_PRESETS,
    serving_lengths,
)
from planner.deployment import ENGINES, Deployment
from planner.engines.profiles import engine_profile
from planner.errors import InputError, PlannerError, first_pydantic_error
from planner.input_types import bounds_of
from planner.speed.serving_workload import Dataset, ServingWorkload, datasets
from planner.units import fmt_objective_miss, latency_objectives_text

#: Speculation methods a search can try; ``none`` is serving the target alone.
METHODS: tuple[str, ...] = ("none", "draft_model", "eagle", "eagle3", "mtp", "ngram")
#: The default search: three node types of the current generation, TP 1-8 (what the model admits), three
#: precisions, no speculation + every compatible draft + heads + n-gram (+ MTP where the target has it),
#: K 1-8, six batch caps, one engine.
DEFAULT_NODES: tuple[str, ...] = ("8x-h100-sxm-80gb", "8x-h200-sxm-141gb", "8x-b200-180gb")
DEFAULT_DTYPES: tuple[str, ...] = ("bf16", "fp8", "fp8:fp8")
DEFAULT_KS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8)
DEFAULT_BATCH_CAPS: tuple[int, ...] = (8, 16, 32, 64, 128, 256)
#: Bounds that keep one search's work bounded (the product of the axes is the number of points).
MAX_AXIS_VALUES = 64
MAX_POINTS = 200_000
MAX_BATCH_CAP = 4096
MAX_K = 16


class SearchWorkload(BaseModel):
    """The user's requests (fixed lengths or a dataset) and their arrival (a rate, or a number in flight)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # rates and lengths take the bounds every other entry point uses (the Fleet page, its link, the quote)
    requests_per_s: float | None = Field(default=None, allow_inf_nan=False, **bounds_of("fleet_requests_per_s"))
    concurrency: int | None = Field(default=None, ge=1, le=10_000_000)
    dataset: Dataset = "fixed"
    prompt_tokens: int | None = Field(default=None, **bounds_of("fleet_prompt_tokens"))
    output_tokens: int | None = Field(default=None, **bounds_of("fleet_output_tokens"))

    @model_validator(mode="after")
    def _check(self) -> SearchWorkload:
        if (self.requests_per_s is None) == (self.concurrency is None):
            raise InputError("requests_per_s", self.requests_per_s, "exactly one of a request rate or a concurrency")
        prompt_tokens, output_tokens = serving_lengths(self.dataset, self.prompt_tokens, self.output_tokens)
        object.__setattr__(self, "prompt_tokens", prompt_tokens)  # a fleet's default request, as every view's
        object.__setattr__(self, "output_tokens", output_tokens)
        return self

    @property
    def mean_prompt_tokens(self) -> float:
        return self.prompt_tokens or datasets()[self.dataset].prompt.mean_tokens

    @property
    def mean_output_tokens(self) -> float:
        return self.output_tokens or datasets()[self.dataset].output.mean_tokens

    @property
    def max_model_len(self) -> int:
        """The model length every point is sized for: the longest request (what the fleet quote uses)."""
        if self.dataset == "fixed":
            return max(16, int(self.prompt_tokens) + int(self.output_tokens))  # type: ignore[arg-type]
        return datasets()[self.dataset].max_total_tokens

    def replica_workload(self, concurrency: int, num_prompts: int) -> ServingWorkload:
        """What one replica is simulated with: ``concurrency`` requests in flight (closed loop)."""
        return ServingWorkload.build(
            concurrency=concurrency,
            dataset=self.dataset,
            prompt_tokens=self.prompt_tokens,
            output_tokens=self.output_tokens,
            num_prompts=num_prompts,
        )

    def describe(self) -> str:
        lengths = (
            f"{self.prompt_tokens:,} + {self.output_tokens:,} tokens"
            if self.dataset == "fixed"
            else f"{self.dataset} lengths"
        )
        load = (
            f"{self.requests_per_s:g} req/s" if self.requests_per_s is not None else f"{self.concurrency:,} in flight"
        )
        return f"{lengths}, {load}"


class Objectives(BaseModel):
    """Latency objectives at a percentile (None: no objective); by default a fleet's (the MLPerf Server preset,
    ``planner.defaults.SLO_PRESETS``), as a quote's traffic and every page and command default to.

    >>> Objectives().describe(), NO_OBJECTIVES.describe()
    ('p99 TTFT ≤ 2,000 ms and p99 TPOT ≤ 200 ms', 'no latency objective')
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    ttft_slo_s: float | None = Field(default=SLO_PRESETS[DEFAULT_SLO_PRESET][0], gt=0, le=1e6, allow_inf_nan=False)
    tpot_slo_s: float | None = Field(default=SLO_PRESETS[DEFAULT_SLO_PRESET][1], gt=0, le=1e6, allow_inf_nan=False)
    percentile: float = Field(default=OBJECTIVE_PERCENTILE, gt=0, le=100, allow_inf_nan=False)

    def misses(self, ttft_s: float, tpot_s: float) -> list[str]:
        """The objectives that ``ttft_s`` and ``tpot_s`` (at the percentile) miss, in words."""
        out = []
        if self.ttft_slo_s is not None and ttft_s > self.ttft_slo_s:
            out.append(fmt_objective_miss("TTFT", ttft_s, self.ttft_slo_s, self.percentile))
        if self.tpot_slo_s is not None and tpot_s > self.tpot_slo_s:
            out.append(fmt_objective_miss("TPOT", tpot_s, self.tpot_slo_s, self.percentile))
        return out

    def describe(self) -> str:
        return latency_objectives_text(self.ttft_slo_s, self.tpot_slo_s, self.percentile)


#: A search held to no latency objective (what the matrix of drafts ranks without).
NO_OBJECTIVES = Objectives(ttft_slo_s=None, tpot_slo_s=None)


@dataclass(frozen=True)
class GpusOfBase:
    """The GPUs of a deployment a search is around when it is on no catalog node type (``--gpu H100 --gpus 4``):
    what a point takes of a node."""

    id: str
    gpu: str
    gpu_count: int


class SearchSpace(BaseModel):
    """The axes of a search (catalog ids; validated, each bounded)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target: str = Field(min_length=1, max_length=200)
    nodes: tuple[str, ...] = Field(default=DEFAULT_NODES, min_length=1, max_length=MAX_AXIS_VALUES)
    engines: tuple[str, ...] = Field(default=("vllm",), min_length=1, max_length=len(ENGINES))
    methods: tuple[str, ...] = Field(default=("none", "draft_model", "eagle", "eagle3", "mtp", "ngram"), min_length=1)
    ks: tuple[int, ...] = Field(default=DEFAULT_KS, min_length=1, max_length=MAX_K)
    #: ``WEIGHTS`` or ``WEIGHTS:KV`` (KV ``auto`` follows the weights' compute dtype).
    dtypes: tuple[str, ...] = Field(default=DEFAULT_DTYPES, min_length=1, max_length=16)
    #: ``max_num_seqs`` values (None: the engine's own default for each point, as a deployment that sets none gets).
    batch_caps: tuple[int, ...] | None = Field(default=DEFAULT_BATCH_CAPS, min_length=1, max_length=MAX_AXIS_VALUES)
    #: TP degrees to try (None: every degree the model admits up to the node's GPUs).
    tps: tuple[int, ...] | None = Field(default=None, min_length=1, max_length=MAX_AXIS_VALUES)
    #: The draft models and heads to try, by id (None: every compatible one for the target).
    drafts: tuple[str, ...] | None = Field(default=None, min_length=1, max_length=MAX_AXIS_VALUES)
    #: The acceptance assumed for every speculator tried (None: each its own, measured, published or the prior).
    alpha: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    #: Models the catalog does not have (an imported target or draft), by their configuration.
    imported: tuple[ModelSpec, ...] = Field(default=(), max_length=MAX_AXIS_VALUES)
    #: The acceptance entered for every learned speculator (draft models, heads, MTP; n-gram lookup keeps its own,
    #: a property of the prompts), and measurements by speculator (a draft's id, ``ngram`` or ``mtp``); ``alpha``
    #: overrides both.
    entered_alpha: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    measured_alphas: dict[str, Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]] = Field(default_factory=dict)
    #: The deployment whose other settings every point keeps (its pipeline stages, max model length, engine release,
    #: memory fraction, token budget, GPU memory): a search around a scenario, as the decision matrix asks. None:
    #: every such knob at its default, sized for the workload's longest request, PP 2 only where no TP layout fits.
    base: Deployment | None = None
    #: The release of the engine searched that every point runs (None: ``base``'s, else the newest profiled): its
    #: memory rules, defaults and the methods it runs follow it, as on the Sizing page.
    engine_version: str | None = Field(default=None, min_length=1, max_length=40)

    @classmethod
    def build(cls, **fields) -> SearchSpace:
        try:
            return cls(**fields)
        except ValidationError as exc:
            raise first_pydantic_error(exc) from None

    @field_validator("engines")
    @classmethod
    def _engines(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for engine in value:
            if engine not in ENGINES:
                raise InputError("engines", engine, f"one of {', '.join(ENGINES)}")
        return tuple(dict.fromkeys(value))

    @field_validator("methods")
    @classmethod
    def _methods(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for method in value:
            if method not in METHODS:
                raise InputError("methods", method, f"one of {', '.join(METHODS)} or all")
        return tuple(dict.fromkeys(value))

    @field_validator("ks")
    @classmethod
    def _ks(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        for k in value:
            if not 1 <= k <= MAX_K:
                raise InputError("k", k, f"draft lengths from 1 to {MAX_K}")
        return tuple(sorted(set(value)))

    @field_validator("batch_caps")
    @classmethod
    def _caps(cls, value: tuple[int, ...] | None) -> tuple[int, ...] | None:
        if value is None:
            return None
        for cap in value:
            if not 1 <= cap <= MAX_BATCH_CAP:
                raise InputError("batch_caps", cap, f"batch caps (max_num_seqs) from 1 to {MAX_BATCH_CAP:,}")
        return tuple(sorted(set(value)))

    @field_validator("tps")
    @classmethod
    def _tps(cls, value: tuple[int, ...] | None) -> tuple[int, ...] | None:
        if value is not None:
            for tp in value:
                if not 1 <= tp <= 1024:
                    raise InputError("tp", tp, "TP degrees from 1 to 1,024")
            return tuple(sorted(set(value)))
        return value

    @field_validator("dtypes")
    @classmethod
    def _dtypes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for text in value:
            weights, _, kv = text.partition(":")
            try:
                get_weight_format(weights)
            except PlannerError:
                allowed = ", ".join(f.id for f in list_weight_formats())
                raise InputError("dtypes", text, f"WEIGHTS or WEIGHTS:KV with weights one of {allowed}") from None
            try:
                get_kv_dtype(kv or "auto")
            except PlannerError:
                allowed = ", ".join(k.id for k in list_kv_dtypes())
                raise InputError("dtypes", text, f"WEIGHTS:KV with KV one of {allowed}") from None
        return tuple(dict.fromkeys(value))

    @model_validator(mode="after")
    def _known_drafts(self) -> SearchSpace:
        """Every draft named is a model (the catalog's or an imported one), kept by its full id."""
        if self.drafts is not None:
            ids = tuple(dict.fromkeys(self.model(d, "drafts").id for d in self.drafts))
            object.__setattr__(self, "drafts", ids)
        return self

    @model_validator(mode="after")
    def _known_release(self) -> SearchSpace:
        """A release is of the one engine searched, in one of its profiled ranges (the ranges named otherwise)."""
        if self.engine_version is not None:
            if len(self.engines) != 1:
                tried = f"{len(self.engines)}: {', '.join(self.engines)}"
                raise InputError(
                    "engine_version", self.engine_version, f"a release of one engine (the search tries {tried})"
                )
            engine_profile(self.engines[0], self.engine_version)
        return self

    def release(self) -> str | None:
        """The engine release every point runs: :attr:`engine_version`, else ``base``'s (None: the newest profiled)."""
        if self.engine_version is not None:
            return self.engine_version
        return self.base.engine_version if self.base is not None else None

    def precisions(self) -> list[tuple[str, str]]:
        """(weight format, KV dtype) pairs."""
        return [(t.partition(":")[0], t.partition(":")[2] or "auto") for t in self.dtypes]

    def k_values(self, method: str, mtp_layers: int) -> tuple[int | None, ...]:
        """The draft lengths tried for ``method``: none without speculation; an MTP module drafts at most as many
        tokens as it has layers (its published acceptance is for that K, ``planner.speed.estimate.search_ks``)."""
        if method == "none":
            return (None,)
        if method == "mtp":
            return tuple(k for k in self.ks if k <= mtp_layers) or (mtp_layers,)
        return self.ks

    def target_spec(self) -> ModelSpec:
        if self.base is not None and self.base.target.id == self.target:
            return self.base.target
        return self.model(self.target, "target")

    def model(self, model_id: str, field: str) -> ModelSpec:
        """The model ``model_id``: an imported one of the space, else the catalog's."""
        found = next((m for m in self.imported if m.id == model_id), None)
        return found or resolve_model(model_id, None, field=field)

    def describe_caps(self) -> str:
        """The batch caps in words (``8, 32, 128`` or the engine's default)."""
        return ", ".join(map(str, self.batch_caps)) if self.batch_caps else "the engine's default"

    def node_specs(self) -> list[NodeType | GpusOfBase]:
        """The node types searched; a search around a deployment given by its GPUs alone (no node type) searches
        those GPUs."""
        if self.base is not None and self.base.node_id is None:
            return [GpusOfBase(f"{self.base.gpu_count}x {self.base.gpu.id}", self.base.gpu.id, self.base.gpu_count)]
        return [get_node(n) for n in self.nodes]


def check_request_fits(target: ModelSpec, workload: SearchWorkload) -> None:
    """An InputError when a request is longer than the target's context window."""
    context = target.architecture.max_position_embeddings
    if context is not None and workload.max_model_len > context:
        raise InputError(
            "prompt_tokens",
            workload.prompt_tokens,
            f"requests within {target.short_name}'s context of {context:,} tokens "
            f"(longest: {workload.max_model_len:,})",
        )


__all__ = [
    "DEFAULT_BATCH_CAPS",
    "DEFAULT_DTYPES",
    "DEFAULT_KS",
    "DEFAULT_NODES",
    "METHODS",
    "Objectives",
    "SearchSpace",
    "SearchWorkload",
    "check_request_fits",
]
