"""Pydantic models of the catalog: models, tokenizers, GPUs, node types, prices and precisions.

They validate ``data/*.json`` on load (see :mod:`planner.catalog.lookup`) and are what every other
module receives; no module passes string-keyed dicts of facts around.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from planner.facts import SourcedFact
from planner.model.architecture import architecture_from_config
from planner.model.geometry import Architecture


class Lineage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    family: str
    generation: str | None = None
    base_model: str | None = None
    distilled_from: list[str] | None = None
    variant: str | None = None
    notes: str | None = None


class TokenizerSpec(SourcedFact):
    id: str
    name: str
    kind: Literal["bpe", "sentencepiece", "unknown"]
    regular_tokens: int | None = None
    special_tokens: int | None = None
    tokens: int | None = None
    #: A tokenizer with the same regular vocabulary (ids) but different special tokens.
    base: str | None = None


#: How a speculator proposes tokens (the names vLLM's and SGLang's ``speculative_config.method`` use):
#: a separate small model, an EAGLE / EAGLE-3 head trained on one target's hidden states, the target's own
#: multi-token-prediction layers, or n-gram lookup in the prompt (no model at all).
SpeculatorKind = Literal["draft_model", "eagle", "eagle3", "mtp", "ngram"]
SPECULATOR_KINDS: tuple[str, ...] = ("draft_model", "eagle", "eagle3", "mtp", "ngram")


class SpeculatorSpec(BaseModel):
    """What a speculator head is and what it shares with the target it was trained for.

    A catalog entry with this block is a head, not a model that runs alone: its ``config`` holds its own
    layers (an EAGLE-3 head is one decoder layer) and the engine loads the target's embeddings and LM head
    in place of the head's when ``shares_embeddings`` / ``shares_lm_head`` say so.
    """

    model_config = ConfigDict(extra="forbid")

    kind: SpeculatorKind
    #: Catalog ids of the targets the head was trained on (a head is useless on any other model). A catalog head
    #: names at least one; an imported head may name none (its target is unknown: only geometry is checked).
    targets: list[str] = Field(default_factory=list)
    #: The exact checkpoint whose hidden states it was trained on, when it is not itself a catalog id (an
    #: Instruct checkpoint whose base id the catalog lists).
    trained_on: str | None = None
    #: The catalog head whose weights this entry republishes in another format (its measurements apply here too).
    copy_of: str | None = None
    shares_embeddings: bool = True
    shares_lm_head: bool = False
    #: EAGLE-3's reduced draft vocabulary (``draft_vocab_size``) and its d2t/t2d maps; None: the target's.
    draft_vocab_size: int | None = Field(default=None, ge=1)
    #: Target layers whose hidden states feed the head (EAGLE-3 fuses three: low, middle, high).
    aux_hidden_layers: int = Field(default=1, ge=1)
    #: How the engine loads it, with the loader's source (file, function, release).
    loading_notes: str = ""


class ModelSpec(SourcedFact):
    """A model: its Hugging Face config, tokenizer identity, lineage and published size.

    ``speculator`` is set on speculator heads (EAGLE, EAGLE-3, MTP modules) and None on models that run alone.
    """

    model_config = ConfigDict(extra="forbid", ignored_types=(cached_property,))

    id: str
    size_label: str | None = None
    tokenizer: str | None = None
    lineage: Lineage
    published_params: str | None = None
    config: dict[str, Any]
    verification: str | None = None
    notes: str = ""
    origin: Literal["catalog", "imported"] = "catalog"
    speculator: SpeculatorSpec | None = None

    @model_validator(mode="after")
    def _catalog_heads_name_targets(self) -> ModelSpec:
        if self.speculator is not None and self.origin == "catalog" and not self.speculator.targets:
            raise ValueError(f"{self.id}: a catalog speculator head must name its targets")
        return self

    @cached_property
    def architecture(self) -> Architecture:
        return architecture_from_config(self.config)

    @property
    def is_head(self) -> bool:
        """A speculator head (EAGLE, EAGLE-3, MTP) rather than a model that runs alone."""
        return self.speculator is not None and self.speculator.kind in ("eagle", "eagle3", "mtp")

    @property
    def short_name(self) -> str:
        return self.id.rsplit("/", 1)[-1]


class GpuSpec(SourcedFact):
    """One accelerator. Bandwidths in GB/s (10^9 B/s), throughput in dense TFLOPS (10^12 FLOP/s)."""

    id: str
    name: str
    vendor: Literal["nvidia", "amd", "other"]
    marketed_memory_gb: float = Field(gt=0)
    memory_type: str
    reported_memory_gib: float | None = Field(default=None, gt=0)
    reported_memory_source: str | None = None
    nvidia_smi_total_mib: int | None = Field(default=None, gt=0)
    nvidia_smi_source: str | None = None
    memory_bandwidth_gb_s: float = Field(gt=0)
    bf16_dense_tflops: float | None = Field(default=None, gt=0)
    fp16_dense_tflops: float | None = Field(default=None, gt=0)
    fp8_dense_tflops: float | None = Field(default=None, gt=0)
    fp4_dense_tflops: float | None = Field(default=None, gt=0)
    scale_up_link: str
    scale_up_bandwidth_gb_s: float = Field(ge=0)
    date: str | None = None
    notes: str = ""
    #: Regular expressions (lower case) matching the names drivers and logs print for this GPU.
    name_patterns: list[str] = Field(default_factory=list)
    #: Lower is tried first (an "H100 NVL" must match before plain "H100").
    match_priority: int = 100

    @property
    def supports_bf16(self) -> bool:
        return self.bf16_dense_tflops is not None


class NodeType(SourcedFact):
    id: str
    name: str
    gpu: str
    gpu_count: int = Field(ge=1)
    fabric: str
    examples: list[str] = Field(default_factory=list)


class PriceObservation(SourcedFact):
    usd_per_gpu_hour: float = Field(gt=0)
    provider: str
    date: str


class GpuPrice(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gpu: str
    observations: list[PriceObservation] = Field(min_length=1)

    @property
    def default_usd_per_gpu_hour(self) -> float:
        """The median of the dated observations (the documented default; users override it)."""
        values = sorted(o.usd_per_gpu_hour for o in self.observations)
        mid = len(values) // 2
        return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2

    @property
    def latest_date(self) -> str:
        return max(o.date for o in self.observations)


class CatalogFile(BaseModel):
    """Top level of a data/*.json file: a description plus the entry list under one key."""

    model_config = ConfigDict(extra="allow")

    description: str

    @field_validator("description")
    @classmethod
    def _not_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("description must not be empty")
        return value
