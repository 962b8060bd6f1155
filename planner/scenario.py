"""The scenario the app's sidebar edits: one typed, validated set of inputs that builds a :class:`Deployment`.

Ids, not specs: the target, draft and node are catalog ids (or ids of models imported from a
``config.json`` in this session, passed to :meth:`Scenario.deployment`), so a scenario is small,
hashable as JSON and free of Streamlit. ``None`` for a precision means the checkpoint's own, for an
engine knob the engine's documented default. The draft length K defaults to the deployment's. The
scenario also carries the inputs of the Performance page (batch, prompt, output, acceptance and how
it is given) and of the Fleet page (traffic, objective, node types, price), so one link reproduces
every page.

A scenario travels in a link as short, stable query keys (:data:`QUERY_KEYS`); only values that
differ from the defaults are written, and :meth:`Scenario.from_query` reads them back with the same
validation, replacing any unknown or invalid value by its default and saying why:

>>> Scenario(tp=4, node="4x-l40s-48gb").to_query()
{'n': '4x-l40s-48gb', 'tp': '4'}
>>> s, problems = Scenario.from_query({"tp": "four", "zz": "1", "len": "32768"})
>>> s.tp, s.max_model_len, len(problems)
(8, 32768, 2)

>>> scenario = Scenario()
>>> dep = scenario.deployment()
>>> dep.target.id, dep.draft.id, dep.tp, dep.gpu_count, dep.num_speculative_tokens
('meta-llama/Llama-3.1-70B', 'meta-llama/Llama-3.2-1B', 8, 8, 5)
>>> scenario.model_copy(update={"draft": None}).deployment().draft is None
True
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner.catalog.lookup import (
    get_model,
    get_node,
    list_kv_dtypes,
    list_models,
    list_nodes,
    list_speculators,
    list_weight_formats,
)
from planner.catalog.schemas import ModelSpec
from planner.decisions.fleet_models import Traffic
from planner.defaults import (
    ACCEPTANCE_ALPHA,
    DEFAULT_SLO_PRESET,
    OBJECTIVE_PERCENTILE,
    SELECTION_BATCH_SIZE,
    SERVING_OUTPUT_TOKENS,
    SERVING_PROMPT_TOKENS,
    SLO_PRESETS,
)
from planner.deployment import Deployment, Engine
from planner.engines.profiles import engine_profile
from planner.errors import PlannerError, first_pydantic_error
from planner.input_types import bounds_of
from planner.speed.serving_workload import Dataset
from planner.units import gib_to_bytes

__all__ = ["EXAMPLES", "QUERY_KEYS", "Scenario", "field_label"]

_K_DEFAULT = Deployment.model_fields["num_speculative_tokens"].default
#: The node types the Fleet page compares by default (those the catalog holds).
FLEET_NODES = ("8x-h100-sxm-80gb", "8x-h200-sxm-141gb", "8x-mi300x-192gb", "4x-l40s-48gb")
AcceptanceMode = Literal["alpha", "mean_accepted_len", "draft_acceptance_rate"]
#: Longest query value read (ids, versions and node lists are shorter): anything longer is refused unread.
MAX_QUERY_VALUE_CHARS = 400
#: How ``None`` is written in a link (a field whose default is set, such as the draft).
NONE_TOKEN = "none"
#: Longest Catalog search text kept in a link.
MAX_SEARCH_CHARS = 100


class Scenario(BaseModel):
    """Target, draft, node, precisions, engine and its knobs, and the draft length K."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target: str = "meta-llama/Llama-3.1-70B"
    #: None: serve the target alone (or speculate with a draft-free ``method``).
    draft: str | None = "meta-llama/Llama-3.2-1B"
    #: A method without a draft model: n-gram lookup or the target's own MTP layers (the draft is then unused).
    method: Literal["ngram", "mtp"] | None = None
    node: str = "8x-h100-sxm-80gb"
    tp: int = Field(default=8, **bounds_of("tp"))
    pp: int = Field(default=1, **bounds_of("pp"))
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
    memory_fraction: float | None = Field(default=None, **bounds_of("memory_fraction"), allow_inf_nan=False)
    max_model_len: int = Field(default=8192, **bounds_of("max_model_len"))
    k: int = Field(default=_K_DEFAULT, **bounds_of("k"))
    max_num_batched_tokens: int | None = Field(default=None, **bounds_of("max_num_batched_tokens"))
    max_num_seqs: int | None = Field(default=None, **bounds_of("max_num_seqs"))
    #: Overrides the catalog's device total, GiB (2^30 bytes).
    gpu_memory_gib: float | None = Field(default=None, **bounds_of("gpu_memory_gib"), allow_inf_nan=False)
    # The Performance page's workload: how acceptance is given and its value (None = the default in that
    # spelling), batch size, prompt and output tokens (None = the speed rules' default workload).
    acceptance_mode: AcceptanceMode = "alpha"
    acceptance: float | None = Field(default=None, **bounds_of("acceptance"), allow_inf_nan=False)
    batch_size: int | None = Field(default=None, **bounds_of("batch_size"))
    prompt_tokens: int | None = Field(default=None, **bounds_of("prompt_tokens"))
    output_tokens: int | None = Field(default=None, **bounds_of("output_tokens"))
    #: How the Performance page's request lengths vary: every request alike, or as a dataset's (its mean lengths).
    dataset: Dataset = "fixed"
    # The Fleet page's traffic and comparison.
    fleet_requests_per_s: float = Field(default=20.0, **bounds_of("fleet_requests_per_s"), allow_inf_nan=False)
    fleet_prompt_tokens: int = Field(default=SERVING_PROMPT_TOKENS, **bounds_of("fleet_prompt_tokens"))
    fleet_output_tokens: int = Field(default=SERVING_OUTPUT_TOKENS, **bounds_of("fleet_output_tokens"))
    #: Time per output token and time to first token objectives, ms; 0 = none. The defaults are the
    #: command line's (the MLPerf Server preset, ``planner.defaults.SLO_PRESETS``): one default per input.
    fleet_tpot_slo_ms: float = Field(
        default=SLO_PRESETS[DEFAULT_SLO_PRESET][1] * 1e3, **bounds_of("fleet_tpot_slo_ms"), allow_inf_nan=False
    )
    fleet_ttft_slo_ms: float = Field(
        default=SLO_PRESETS[DEFAULT_SLO_PRESET][0] * 1e3, **bounds_of("fleet_ttft_slo_ms"), allow_inf_nan=False
    )
    fleet_percentile: float = Field(default=OBJECTIVE_PERCENTILE, **bounds_of("fleet_percentile"), allow_inf_nan=False)
    #: Acceptance α the Fleet page assumes; None: the speculator's own (as the CLI and every page).
    fleet_alpha: float | None = Field(default=None, **bounds_of("fleet_alpha"), allow_inf_nan=False)
    fleet_nodes: tuple[str, ...] = Field(default=FLEET_NODES, max_length=64)
    #: One $/GPU-hour for every node type; 0 = the catalog's prices.
    fleet_usd_per_gpu_hour: float = Field(default=0.0, **bounds_of("fleet_usd_per_gpu_hour"), allow_inf_nan=False)
    # Page inputs that travel in the link too: Draft Selection's batch to rank at and its one assumed α
    # (used when ``selection_assume_alpha``; otherwise each pair's own), and the Catalog's search box.
    selection_batch_size: int = Field(default=SELECTION_BATCH_SIZE, **bounds_of("selection_batch_size"))
    selection_assume_alpha: bool = False
    selection_alpha: float = Field(default=ACCEPTANCE_ALPHA, **bounds_of("selection_alpha"), allow_inf_nan=False)
    catalog_query: str = Field(default="", max_length=MAX_SEARCH_CHARS)

    @classmethod
    def build(cls, **fields) -> Scenario:
        """Validate ``fields``; any problem is one ``PlannerError`` naming its field."""
        try:
            return cls(**fields)
        except ValidationError as exc:
            raise first_pydantic_error(exc, labels=_LABELS) from None

    def traffic(self) -> Traffic:
        """The Fleet page's traffic and objectives (0 ms: no objective; 0 $/GPU-hour: the catalog's prices)."""
        return Traffic.build(
            requests_per_s=self.fleet_requests_per_s,
            prompt_tokens=self.fleet_prompt_tokens,
            output_tokens=self.fleet_output_tokens,
            tpot_slo_s=self.fleet_tpot_slo_ms / 1e3 if self.fleet_tpot_slo_ms else None,
            ttft_slo_s=self.fleet_ttft_slo_ms / 1e3 if self.fleet_ttft_slo_ms else None,
            percentile=self.fleet_percentile,
            alpha=self.fleet_alpha,
            usd_per_gpu_hour=self.fleet_usd_per_gpu_hour or None,
        )

    def deployment(self, imported: Mapping[str, ModelSpec] | None = None) -> Deployment:
        """The core's Deployment (raises PlannerError on an unknown id or a bad combination)."""
        models = dict(imported or {})

        def lookup(model_id: str) -> ModelSpec:
            return models.get(model_id) or get_model(model_id)

        draft = None if self.draft is None or self.method is not None else lookup(self.draft)
        return Deployment.on_node(
            lookup(self.target),
            get_node(self.node),
            draft=draft,
            method=self.method,
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

    def context_problem(self, imported: Mapping[str, ModelSpec] | None = None) -> str | None:
        """Why ``max_model_len`` is refused: above the target's own context window (None when it is not).

        vLLM refuses a ``max_model_len`` above the length derived from the model's config ("User-specified
        max_model_len ... is greater than the derived max_model_len", vllm/config/model.py), and the model was
        not trained for longer sequences.

        >>> Scenario(max_model_len=1_048_576).context_problem()
        "Max model length 1,048,576 tokens is above meta-llama/Llama-3.1-70B's context window of 131,072 tokens: \
vLLM refuses to start, and the model was not trained on longer sequences. Use at most 131,072."
        """
        target = (imported or {}).get(self.target) or get_model(self.target)
        context = target.architecture.max_position_embeddings
        if context and self.max_model_len > context:
            return (
                f"Max model length {self.max_model_len:,} tokens is above {self.target}'s context window of "
                f"{context:,} tokens: vLLM refuses to start, and the model was not trained on longer sequences. "
                f"Use at most {context:,}."
            )
        return None

    def to_query(self) -> dict[str, str]:
        """The link's query parameters: the short key and text of every field that differs from the default."""
        default = Scenario()
        return {
            key: _to_text(getattr(self, name))
            for name, key in QUERY_KEYS.items()
            if getattr(self, name) != getattr(default, name)
        }

    @classmethod
    def from_query(
        cls, params: Mapping[str, str | list[str]], model_ids: Collection[str] = ()
    ) -> tuple[Scenario, list[str]]:
        """The scenario a link describes, and what was wrong with it (each bad value replaced by its default).

        ``model_ids`` are models known besides the catalog's (imported in this session).
        """
        names = {key: name for name, key in QUERY_KEYS.items()}
        problems: list[str] = []
        fields: dict = {}
        for key, raw in params.items():
            text = raw[-1] if isinstance(raw, list) and raw else raw
            if key not in names:
                problems.append(f"Ignored the link's unknown parameter {_shown(key)}.")
                continue
            name = names[key]
            if not isinstance(text, str) or len(text) > MAX_QUERY_VALUE_CHARS:
                problems.append(f"The link's {key} is too long to be a valid {_LABELS[name]}; using the default.")
                continue
            try:
                value = _from_text(name, text.strip(), model_ids)
                cls(**{name: value})
            except (ValidationError, ValueError) as exc:
                default = cls.model_fields[name].default
                default = "the engine's or checkpoint's own" if default is None else _to_text(default)
                why = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
                problems.append(
                    f"The link's {_LABELS[name]} ({key}={_shown(text)}) is not valid: {why}. "
                    f"Using the default, {default}."
                )
                continue
            fields[name] = value
        release = fields.get("engine_version")
        if release is not None:
            engine = fields.get("engine", cls.model_fields["engine"].default)
            try:
                engine_profile(engine, release)
            except PlannerError as exc:
                del fields["engine_version"]
                problems.append(
                    f"The link's {_LABELS['engine_version']} ({QUERY_KEYS['engine_version']}={_shown(release)}) is "
                    f"not valid: {_first_sentence(exc)}. Using the default, the newest profiled release."
                )
        return cls(**fields), problems


#: Each field's key in a link. Stable: links already shared must keep their meaning, so keys are never reused.
QUERY_KEYS: dict[str, str] = {
    "target": "t",
    "draft": "d",
    "method": "m",
    "node": "n",
    "tp": "tp",
    "pp": "pp",
    "draft_tp_one": "dtp1",
    "dtype": "w",
    "draft_dtype": "dw",
    "kv_dtype": "kv",
    "engine": "e",
    "engine_version": "ev",
    "memory_fraction": "mf",
    "max_model_len": "len",
    "k": "k",
    "max_num_batched_tokens": "mbt",
    "max_num_seqs": "mns",
    "gpu_memory_gib": "gm",
    "acceptance_mode": "am",
    "acceptance": "a",
    "batch_size": "b",
    "prompt_tokens": "pt",
    "output_tokens": "ot",
    "dataset": "ds",
    "fleet_requests_per_s": "rps",
    "fleet_prompt_tokens": "fpt",
    "fleet_output_tokens": "fot",
    "fleet_tpot_slo_ms": "slo",
    "fleet_ttft_slo_ms": "ttft",
    "fleet_percentile": "pct",
    "fleet_alpha": "fa",
    "fleet_nodes": "fn",
    "fleet_usd_per_gpu_hour": "usd",
    "selection_batch_size": "sb",
    "selection_assume_alpha": "sa1",
    "selection_alpha": "sa",
    "catalog_query": "q",
}
#: Each field as a banner names it.
_LABELS = {
    "target": "target model",
    "draft": "draft model",
    "method": "draft-free method",
    "node": "node type",
    "tp": "tensor parallel size",
    "pp": "pipeline parallel size",
    "draft_tp_one": "draft tensor parallel choice",
    "dtype": "target weight format",
    "draft_dtype": "draft weight format",
    "kv_dtype": "KV cache dtype",
    "engine": "serving engine",
    "engine_version": "engine release",
    "memory_fraction": "engine memory fraction",
    "max_model_len": "max model length",
    "k": "draft length K",
    "max_num_batched_tokens": "max_num_batched_tokens",
    "max_num_seqs": "max_num_seqs",
    "gpu_memory_gib": "GPU memory override",
    "acceptance_mode": "acceptance convention",
    "acceptance": "acceptance value",
    "batch_size": "batch size",
    "prompt_tokens": "prompt tokens",
    "output_tokens": "output tokens",
    "dataset": "request lengths",
    "fleet_requests_per_s": "requests per second",
    "fleet_prompt_tokens": "fleet prompt tokens",
    "fleet_output_tokens": "fleet output tokens",
    "fleet_tpot_slo_ms": "TPOT objective",
    "fleet_ttft_slo_ms": "TTFT objective",
    "fleet_percentile": "objective percentile",
    "fleet_alpha": "fleet acceptance α",
    "fleet_nodes": "node types to compare",
    "fleet_usd_per_gpu_hour": "price override",
    "selection_batch_size": "batch size to rank at",
    "selection_assume_alpha": "one assumed α for every pair",
    "selection_alpha": "assumed α",
    "catalog_query": "model search",
}


def field_label(name: str) -> str:
    """A scenario field as people read it (banners, the Saved page's comparison).

    >>> field_label("kv_dtype")
    'KV cache dtype'
    """
    return _LABELS.get(name, name)


#: Worked examples the first screen loads in one click.
EXAMPLES: dict[str, Scenario] = {
    "70B + 1B on 8x H100": Scenario(max_model_len=32768),
    "70B + 3B on 8x H100": Scenario(draft="meta-llama/Llama-3.2-3B", max_model_len=32768),
    "8B + 1B on one L40S": Scenario(target="meta-llama/Llama-3.1-8B", node="1x-l40s-48gb", tp=1, max_model_len=16384),
    "70B on one H100 (does not fit)": Scenario(node="1x-h100-sxm-80gb", tp=1),
}


def _to_text(value) -> str:
    if value is None:
        return NONE_TOKEN
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, tuple):
        return ",".join(value)
    if isinstance(value, float):
        return repr(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(value)


def _first_sentence(exc: Exception) -> str:
    return str(exc).split(". ")[0].rstrip(".")[:200]


def _shown(text: str) -> str:
    """A user's text quoted for a message, cut short."""
    return repr(text if len(text) <= 40 else text[:40] + "…")


def _from_text(name: str, text: str, model_ids: Collection[str]):
    """A query value as the field's Python value; ids are checked against the catalog."""
    if text.lower() == NONE_TOKEN:
        return None
    if name in ("target", "draft"):
        known = {m.id for m in list_models()} | set(model_ids)
        if name == "draft":
            known |= {h.id for h in list_speculators()}
        if text not in known:
            raise ValueError("not a model in the catalog or imported in this session")
    elif name == "node":
        if text not in {n.id for n in list_nodes()}:
            raise ValueError("not a node type in the catalog")
    elif name in ("dtype", "draft_dtype"):
        if text not in {f.id for f in list_weight_formats()}:
            raise ValueError("expected one of " + ", ".join(f.id for f in list_weight_formats()))
    elif name == "kv_dtype":
        if text not in {k.id for k in list_kv_dtypes()}:
            raise ValueError("expected one of " + ", ".join(k.id for k in list_kv_dtypes()))
    elif name == "fleet_nodes":
        nodes = tuple(n.strip() for n in text.split(",") if n.strip())
        unknown = [n for n in nodes if n not in {x.id for x in list_nodes()}]
        if unknown:
            raise ValueError(f"{_shown(unknown[0])} is not a node type in the catalog")
        return nodes
    elif name in ("draft_tp_one", "selection_assume_alpha"):
        if text not in ("0", "1"):
            raise ValueError("expected 0 or 1")
        return text == "1"
    elif Scenario.model_fields[name].annotation in (float, float | None):
        number = float(text)
        if not math.isfinite(number):
            raise ValueError("expected a finite number")
        return number
    return text
