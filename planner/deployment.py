"""A deployment: which models, in which precision, on which GPUs, served by which engine.

``Deployment`` is the one input the memory plan, the speed model, the selection matrix and the
fleet sizing all take. It validates what is structurally impossible (a TP that does not divide the
heads, more GPUs than the node has, a memory fraction outside (0, 1]) when it is built, with an
error naming the field; what an engine merely rejects (a draft with another vocabulary) becomes a
``problems`` entry of the plan instead.

>>> from planner.catalog.lookup import get_model, get_node
>>> dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8,
...                          draft=get_model("Llama-3.2-3B"))
>>> dep.target_format.id, dep.resolved_draft_tp, dep.gpus_per_replica, dep.replicas_per_node
('bf16', 8, 8, 1)
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from planner.catalog.lookup import get_gpu, get_kv_dtype, get_weight_format, list_kv_dtypes, list_weight_formats
from planner.catalog.schemas import GpuSpec, ModelSpec, NodeType, SpeculatorKind
from planner.catalog.speculators import mtp_layer_count, mtp_module, speculator_kind
from planner.defaults import NUM_SPECULATIVE_TOKENS
from planner.errors import CatalogError, InputError, first_pydantic_error
from planner.model.dtypes import KvDtype, WeightFormat, precision_id
from planner.model.parallelism import tp_problem, valid_tp_degrees

#: The serving engines, declared once: ``data/engines.json`` describes each (tests keep the two equal) and
#: ``planner.engines.names.engine_id`` maps the spellings of logs and command lines to these ids.
ENGINES: tuple[str, ...] = ("vllm", "vllm-v0", "sglang", "trtllm", "hf")
Engine = Literal[ENGINES]  # type: ignore[valid-type]


def default_weight_format(spec: ModelSpec) -> str:
    """The format a checkpoint ships in: its ``quantization_config``, else its ``torch_dtype`` (else bf16)."""
    quant = spec.config.get("quantization_config") or {}
    method = str(quant.get("quant_method", "")) if isinstance(quant, dict) else ""
    return precision_id(method) or precision_id(spec.architecture.torch_dtype) or "bf16"


class Deployment(BaseModel):
    """Target (+ optional draft) on ``gpu_count`` GPUs of one node type, served by ``engine``.

    ``None`` for a knob means the engine's documented default (see planner/engines/profiles.py).
    """

    model_config = ConfigDict(extra="forbid")

    target: ModelSpec
    draft: ModelSpec | None = None
    gpu: GpuSpec
    gpu_count: int = Field(default=1, ge=1, le=1024)
    node_id: str | None = None
    #: Overrides the device total (GiB as a log prints it, stored in bytes), e.g. to replay a log.
    gpu_memory_bytes: int | None = Field(default=None, gt=0)
    tp: int = Field(default=1, ge=1)
    pp: int = Field(default=1, ge=1)
    draft_tp: int | None = Field(default=None, ge=1)
    dtype: str | None = None
    draft_dtype: str | None = None
    kv_dtype: str = "auto"
    engine: Engine = "vllm"
    engine_version: str | None = None
    memory_fraction: float | None = Field(default=None, gt=0, le=1)
    max_model_len: int | None = Field(default=None, ge=16)
    max_num_batched_tokens: int | None = Field(default=None, ge=16)
    max_num_seqs: int | None = Field(default=None, ge=1)
    num_speculative_tokens: int = Field(default=NUM_SPECULATIVE_TOKENS, ge=1, le=64)
    #: How tokens are proposed; None: inferred from ``draft`` (a head's kind, else ``draft_model``; no draft: none).
    #: ``ngram`` needs no draft; ``mtp`` without a draft runs the target's own MTP layers.
    method: SpeculatorKind | None = None
    enforce_eager: bool = False
    #: The engine's override for a max_model_len above the model's derived context is set (vLLM
    #: ``VLLM_ALLOW_LONG_MAX_MODEL_LEN=1``, SGLang ``SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1``).
    allow_long_max_model_len: bool = False
    #: Plain transformers has no pool: memory for this many sequences of max_model_len tokens.
    hf_batch_size: int = Field(default=1, ge=1)

    @classmethod
    def build(cls, **fields) -> Deployment:
        """Validate ``fields``; any problem is one ``PlannerError`` naming its field."""
        try:
            return cls(**fields)
        except ValidationError as exc:
            raise first_pydantic_error(exc) from None

    @classmethod
    def on_node(cls, target: ModelSpec, node: NodeType, **fields) -> Deployment:
        return cls.build(target=target, gpu=get_gpu(node.gpu), gpu_count=node.gpu_count, node_id=node.id, **fields)

    def replace(self, **changes) -> Deployment:
        """A copy with ``changes`` applied, validated like a new deployment (errors name the field).

        >>> from planner.catalog.lookup import get_model, get_gpu
        >>> dep = Deployment.build(target=get_model("Llama-3.1-8B"), gpu=get_gpu("h100-sxm-80gb"), gpu_count=2)
        >>> dep.replace(tp=2).tp
        2
        """
        fields = {name: getattr(self, name) for name in type(self).model_fields}
        return Deployment.build(**{**fields, **changes})

    def with_draft(self, draft: ModelSpec) -> Deployment:
        """The same deployment with ``draft`` (its TP, precision and method back to their defaults)."""
        return self.replace(draft=draft, draft_tp=None, draft_dtype=None, method=None)

    def with_method(self, method: SpeculatorKind) -> Deployment:
        """The same deployment speculating with a draft-free ``method`` (``ngram``, or the target's ``mtp``)."""
        return self.replace(draft=None, draft_tp=None, draft_dtype=None, method=method)

    def without_draft(self) -> Deployment:
        """The same deployment serving the target alone (the baseline speculation is compared with)."""
        return self.replace(draft=None, draft_tp=None, draft_dtype=None, method=None)

    @model_validator(mode="after")
    def _check(self) -> Deployment:
        self._check_method()
        arch = self.target.architecture
        problem = tp_problem(arch, self.tp)
        if problem:
            options = ", ".join(map(str, valid_tp_degrees(arch, self.gpu_count)))
            raise InputError("tp", self.tp, f"one of {options} ({problem})")
        if self.tp * self.pp > self.gpu_count:
            raise InputError(
                "tp", self.tp, f"tp x pp <= the {self.gpu_count} GPUs available (tp {self.tp} x pp {self.pp})"
            )
        if self.pp > arch.num_layers:
            raise InputError("pp", self.pp, f"at most the target's {arch.num_layers} layers")
        if self.speculator is not None:
            draft_tp = self.resolved_draft_tp
            if draft_tp not in (1, self.tp):
                raise InputError("draft_tp", draft_tp, f"1 or the target's tp ({self.tp})")
            problem = tp_problem(self.speculator.architecture, draft_tp)
            if problem and self.draft_tp is not None:
                raise InputError("draft_tp", draft_tp, f"1, since the draft cannot run at tp {draft_tp} ({problem})")
        elif self.draft_tp is not None or self.draft_dtype is not None:
            raise InputError("draft", None, "a draft model or head when draft_tp or draft_dtype is given")
        for field, value in (("dtype", self.dtype), ("draft_dtype", self.draft_dtype)):
            if value is not None:
                _format(value, field)
        _kv(self.kv_dtype)
        return self

    def _check_method(self) -> None:
        if self.draft is not None:
            kind = speculator_kind(self.draft)
            if self.method is not None and self.method != kind:
                raise InputError(
                    "method", self.method, f"{kind} (the draft {self.draft.short_name} is a {_KIND_WORDS[kind]})"
                )
            return
        if self.method in (None, "ngram"):
            return
        if self.method == "mtp":
            if mtp_layer_count(self.target) == 0:
                raise InputError(
                    "method", "mtp", f"ngram, or a draft model or head ({self.target.short_name} has no MTP layers)"
                )
            return
        raise InputError("draft", None, f"a draft {_KIND_WORDS[self.method]} for method {self.method}")

    # ----- resolved views -------------------------------------------------------------------

    @property
    def speculative_method(self) -> SpeculatorKind | None:
        """How tokens are proposed: the draft's kind (``draft_model`` for a plain model), else ``method``.

        >>> from planner.catalog.lookup import get_model, get_gpu
        >>> base = Deployment.build(target=get_model("Llama-3.1-8B"), gpu=get_gpu("h100-sxm-80gb"))
        >>> base.speculative_method, base.with_draft(get_model("Llama-3.2-1B")).speculative_method
        (None, 'draft_model')
        >>> base.with_method("ngram").speculative_method, base.with_method("ngram").speculator is None
        ('ngram', True)
        """
        if self.draft is not None:
            return speculator_kind(self.draft)
        return self.method

    @property
    def is_speculative(self) -> bool:
        return self.speculative_method is not None

    @property
    def speculator_name(self) -> str:
        """What proposes tokens, in words: the draft's id, the target's MTP module, n-gram lookup, or ""."""
        if self.draft is not None:
            return self.draft.id
        return {"mtp": f"{self.target.short_name} MTP module", "ngram": "n-gram lookup"}.get(self.method or "", "")

    @property
    def speculator(self) -> ModelSpec | None:
        """The model that proposes tokens: the draft (model or head), the target's MTP module, or None (n-gram,
        no speculation)."""
        if self.draft is not None:
            return self.draft
        if self.method == "mtp":
            return mtp_module(self.target)
        return None

    @property
    def target_format(self) -> WeightFormat:
        return _format(self.dtype or default_weight_format(self.target), "dtype")

    @property
    def draft_format(self) -> WeightFormat | None:
        """The speculator's weight format: as given, else as the engine loads it.

        The target's own MTP layers ship in its checkpoint, quantized as the target is. A head's ``ModelConfig`` is
        built with the target's dtype but ``quantization=SpeculativeConfig.quantization``, None unless given ("we
        assume the model weights are not quantized"; vLLM ``vllm/config/speculative.py``): an AWQ or FP8 target's
        head loads unquantized in the dtype the target computes in, whatever ``torch_dtype`` its config names.
        A separate draft model loads in its own checkpoint's format unless ``dtype`` says otherwise.

        >>> from planner.catalog.lookup import get_model, get_gpu
        >>> dep = Deployment.build(target=get_model("Llama-3.1-8B"), gpu=get_gpu("h100-sxm-80gb"), dtype="fp8",
        ...                        draft=get_model("EAGLE3-LLaMA3.1-Instruct-8B"))
        >>> dep.target_format.id, dep.draft_format.id
        ('fp8', 'bf16')
        """
        spec = self.speculator
        if spec is None:
            return None
        if self.draft_dtype is not None:
            return _format(self.draft_dtype, "draft_dtype")
        if self.draft is None:
            return self.target_format
        if spec.is_head:
            return _format(self.target_format.activation_dtype, "draft_dtype")
        return _format(self.dtype or default_weight_format(spec), "draft_dtype")

    @property
    def kv(self) -> KvDtype:
        return _kv(self.kv_dtype)

    @property
    def resolved_draft_tp(self) -> int | None:
        """The speculator's TP: as given, else the target's (vLLM's default) when the draft admits it, else 1."""
        spec = self.speculator
        if spec is None:
            return None
        if self.draft_tp is not None:
            return self.draft_tp
        return self.tp if tp_problem(spec.architecture, self.tp) is None else 1

    @property
    def gpus_per_replica(self) -> int:
        return self.tp * self.pp

    @property
    def replicas_per_node(self) -> int:
        """Independent copies of the deployment that fit on the node's GPUs (data parallel)."""
        return self.gpu_count // self.gpus_per_replica

    @property
    def resolved_max_model_len(self) -> int:
        """``max_model_len`` or the target's context window (what vLLM derives by default)."""
        if self.max_model_len is not None:
            return self.max_model_len
        return self.target.architecture.max_position_embeddings or 4096


_KIND_WORDS: dict[str, str] = {
    "draft_model": "separate draft model",
    "eagle": "EAGLE head",
    "eagle3": "EAGLE-3 head",
    "mtp": "multi-token-prediction module",
    "ngram": "n-gram lookup",
}


def _format(value: str, field: str) -> WeightFormat:
    try:
        return get_weight_format(value)
    except CatalogError:
        allowed = ", ".join(f.id for f in list_weight_formats())
        raise InputError(field, value, f"one of {allowed}") from None


def _kv(value: str) -> KvDtype:
    try:
        return get_kv_dtype(value)
    except CatalogError:
        allowed = ", ".join(k.id for k in list_kv_dtypes())
        raise InputError("kv_dtype", value, f"one of {allowed}") from None
