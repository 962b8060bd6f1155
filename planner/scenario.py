"""The scenario the app's sidebar edits: one typed, validated set of inputs that builds a :class:`Deployment`.

Ids, not specs: the target, draft and node are catalog ids (or ids of models imported from a
``config.json`` in this session, passed to :meth:`Scenario.deployment`), so a scenario is small,
hashable as JSON and free of Streamlit. ``None`` for a precision means the checkpoint's own, for an
engine knob the engine's documented default. The draft length K defaults to the deployment's.

>>> scenario = Scenario()
>>> dep = scenario.deployment()
>>> dep.target.id, dep.draft.id, dep.tp, dep.gpu_count, dep.num_speculative_tokens
('meta-llama/Llama-3.1-70B', 'meta-llama/Llama-3.2-1B', 8, 8, 5)
>>> scenario.model_copy(update={"draft": None}).deployment().draft is None
True
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner.catalog.lookup import get_model, get_node
from planner.catalog.schemas import ModelSpec
from planner.deployment import Deployment, Engine
from planner.errors import first_pydantic_error
from planner.units import gib_to_bytes

__all__ = ["Scenario"]

_K_DEFAULT = Deployment.model_fields["num_speculative_tokens"].default


class Scenario(BaseModel):
    """Target, draft, node, precisions, engine and its knobs, and the draft length K."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target: str = "meta-llama/Llama-3.1-70B"
    #: None: serve the target alone.
    draft: str | None = "meta-llama/Llama-3.2-1B"
    node: str = "8x-h100-sxm-80gb"
    tp: int = Field(default=8, ge=1, le=64)
    pp: int = Field(default=1, ge=1, le=16)
    #: True: the draft runs at TP 1 (replicated); False: at the target's TP.
    draft_tp_one: bool = False
    #: Weight formats (data/precisions.json ids); None = the checkpoint's own.
    dtype: str | None = None
    draft_dtype: str | None = None
    kv_dtype: str = "auto"
    engine: Engine = "vllm"
    #: A release such as "0.19.0"; None = the newest profiled one.
    engine_version: str | None = None
    #: gpu_memory_utilization / mem_fraction_static / free_gpu_memory_fraction; None = the engine's default.
    memory_fraction: float | None = Field(default=None, gt=0, le=1)
    max_model_len: int = Field(default=8192, ge=16)
    k: int = Field(default=_K_DEFAULT, ge=1, le=64)
    max_num_batched_tokens: int | None = Field(default=None, ge=16)
    max_num_seqs: int | None = Field(default=None, ge=1)
    #: Overrides the catalog's device total, GiB (2^30 bytes).
    gpu_memory_gib: float | None = Field(default=None, gt=0)

    @classmethod
    def build(cls, **fields) -> Scenario:
        """Validate ``fields``; any problem is one ``PlannerError`` naming its field."""
        try:
            return cls(**fields)
        except ValidationError as exc:
            raise first_pydantic_error(exc) from None

    def deployment(self, imported: Mapping[str, ModelSpec] | None = None) -> Deployment:
        """The core's Deployment (raises PlannerError on an unknown id or a bad combination)."""
        models = dict(imported or {})

        def lookup(model_id: str) -> ModelSpec:
            return models.get(model_id) or get_model(model_id)

        draft = None if self.draft is None else lookup(self.draft)
        return Deployment.on_node(
            lookup(self.target),
            get_node(self.node),
            draft=draft,
            tp=self.tp,
            pp=self.pp,
            draft_tp=(1 if self.draft_tp_one else None) if draft else None,
            dtype=self.dtype,
            draft_dtype=self.draft_dtype if draft else None,
            kv_dtype=self.kv_dtype,
            engine=self.engine,
            engine_version=self.engine_version,
            memory_fraction=self.memory_fraction,
            max_model_len=self.max_model_len,
            num_speculative_tokens=self.k,
            max_num_batched_tokens=self.max_num_batched_tokens,
            max_num_seqs=self.max_num_seqs,
            gpu_memory_bytes=gib_to_bytes(self.gpu_memory_gib) if self.gpu_memory_gib else None,
        )
