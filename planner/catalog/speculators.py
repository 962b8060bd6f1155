"""Speculator heads: the catalog's EAGLE / EAGLE-3 heads and a target's own multi-token-prediction module.

A head is a ``ModelSpec`` whose ``speculator`` block says what it is and which targets it was trained for.
The MTP module of a target that ships one (DeepSeek-V3's ``num_nextn_predict_layers``) is built from the
target's own config: the same decoder-layer geometry, ``num_nextn_predict_layers`` layers, every layer an
MoE layer (DeepSeek-V3 technical report §2.2, arXiv 2412.19437; the checkpoint stores it as layer 61,
``README_WEIGHTS.md`` of deepseek-ai/DeepSeek-V3).

>>> from planner.catalog.lookup import get_model
>>> mtp = mtp_module(get_model("DeepSeek-V3"))
>>> mtp.speculator.kind, mtp.architecture.num_layers, mtp.speculator.targets
('mtp', 1, ['deepseek-ai/DeepSeek-V3'])
>>> mtp_module(get_model("Llama-3.1-8B")) is None
True
"""

from __future__ import annotations

from functools import cache
from typing import Any

from planner.catalog.schemas import ModelSpec, SpeculatorKind, SpeculatorSpec
from planner.errors import ConfigError, InputError
from planner.model.architecture import unwrap_layer_config
from planner.model.head_tensors import head_weight_tensors
from planner.model.param_count import ParamCount, count_parameters
from planner.model.tensors import WeightTensor

#: ``config.json`` fields that declare a target's own MTP layers, by family.
MTP_LAYER_FIELDS: tuple[str, ...] = ("num_nextn_predict_layers", "mtp_num_hidden_layers")


def mtp_layer_count(target: ModelSpec) -> int:
    """How many MTP layers ``target``'s checkpoint ships (0: none)."""
    for name in MTP_LAYER_FIELDS:
        value = target.config.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return 0


def speculator_kind(model: ModelSpec) -> SpeculatorKind:
    """How ``model`` proposes tokens when it drafts: its head kind (EAGLE, EAGLE-3, MTP), else ``draft_model``."""
    return model.speculator.kind if model.speculator else "draft_model"


@cache
def _mtp_module(target_json: str) -> ModelSpec | None:
    target = ModelSpec.model_validate_json(target_json)
    layers = mtp_layer_count(target)
    if layers == 0:
        return None
    config = mtp_config(target.config)  # the MTP layer sits after the dense prefix: an MoE layer
    return ModelSpec(
        id=f"{target.id}::mtp",
        size_label=None,
        tokenizer=target.tokenizer,
        lineage=target.lineage,
        published_params=None,
        config=config,
        notes=f"The {layers} multi-token-prediction layer(s) shipped in {target.short_name}'s checkpoint.",
        origin=target.origin,
        source=target.source,
        speculator=SpeculatorSpec(
            kind="mtp",
            targets=[target.id],
            shares_embeddings=True,
            shares_lm_head=True,
            loading_notes="Built from the target's config.json (num_nextn_predict_layers).",
        ),
    )


def mtp_module(target: ModelSpec) -> ModelSpec | None:
    """The MTP module of ``target`` as a speculator head, or None when its checkpoint has none (cached per target)."""
    if mtp_layer_count(target) == 0:
        return None
    return _mtp_module(target.model_dump_json())


# ----- heads as the engine loads them --------------------------------------------------------------


def head_tensors(spec: ModelSpec, own_embeddings: bool = False, own_lm_head: bool = False) -> list[WeightTensor] | None:
    """The tensors an engine allocates for ``spec`` when it is a head (shared ones left to the target), else None.

    EAGLE-3's ``fc`` reads three target hidden states: ``3 x target_hidden_size`` when the config names it, else
    ``3 x hidden_size`` (vLLM ``llama_eagle3.py``). ``own_embeddings``: the engine holds the head's own copies of the
    embedding and LM head (an engine that loads them before freeing the duplicates); ``own_lm_head``: its own LM
    head only (vLLM releases that keep an MTP module's ``shared_head.head``).

    >>> from planner.catalog.lookup import get_model
    >>> tensors = head_tensors(get_model("EAGLE3-LLaMA3.1-Instruct-8B"))
    >>> sum(t.numel for t in tensors if t.kind != "index")
    424689664
    >>> head_tensors(get_model("Llama-3.2-1B")) is None
    True
    """
    block = spec.speculator
    if block is None or block.kind not in ("eagle", "eagle3", "mtp"):
        return None
    layer_config = unwrap_layer_config(spec.config)
    target_hidden = spec.config.get("target_hidden_size") or layer_config.get("target_hidden_size")
    return head_weight_tensors(
        spec.architecture,
        block.kind,
        target_hidden=target_hidden if isinstance(target_hidden, int) else None,
        draft_vocab=block.draft_vocab_size,
        shares_embeddings=block.shares_embeddings and not own_embeddings,
        shares_lm_head=False if (own_embeddings or own_lm_head) else block.shares_lm_head,
    )


def speculator_params(spec: ModelSpec) -> ParamCount:
    """Parameters the engine holds for ``spec``: a head's own tensors, else the whole draft model."""
    tensors = head_tensors(spec)
    config = spec.config if spec.architecture.formula_family is None else None
    return count_parameters(spec.architecture, config, tensors=tensors)


# ----- recognising a head in an imported config.json ------------------------------------------------

#: ``architectures`` entries that name a head, by kind (vLLM's model registry and SGLang's model files, and the
#: speculators library's classes).
HEAD_ARCHITECTURES: dict[str, tuple[str, ...]] = {
    "eagle3": ("Eagle3LlamaForCausalLM", "LlamaForCausalLMEagle3", "Eagle3Speculator", "Eagle3DraftModel"),
    "eagle": ("EagleLlamaForCausalLM", "LlamaForCausalLMEagle", "EagleSpeculator"),
    "mtp": ("DeepSeekMTPModel",),
}
#: Medusa heads (``MedusaModel``, ``medusa_num_heads``): recognised and refused, since vLLM's V1 engine and SGLang
#: run no Medusa method the planner models.
MEDUSA_MARKERS: tuple[str, ...] = ("MedusaModel", "medusa_num_heads")


def _architectures(config: dict[str, Any]) -> list[str]:
    value = config.get("architectures")
    return [a for a in value if isinstance(a, str)] if isinstance(value, list) else []


def recognised_kind(config: dict[str, Any]) -> str | None:
    """The head kind a config declares (architectures, ``speculators_model_type``, ``draft_vocab_size``), or None.

    >>> recognised_kind({"architectures": ["LlamaForCausalLM"], "draft_vocab_size": 32000})
    'eagle3'
    >>> recognised_kind({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 1}) is None
    True
    """
    archs = _architectures(config)
    if any(m in archs for m in MEDUSA_MARKERS) or "medusa_num_heads" in config:
        raise ConfigError(
            "this config.json is a Medusa head: the planner models EAGLE, EAGLE-3, MTP, n-gram and separate draft "
            "models (vLLM's V1 engine and SGLang run no Medusa method)",
            field="draft_config",
        )
    for kind, names in HEAD_ARCHITECTURES.items():
        if any(name in archs for name in names):
            return kind
    declared = config.get("speculators_model_type")
    if declared in ("eagle", "eagle3"):
        return str(declared)
    if config.get("model_type") == "eagle":
        return "eagle"
    if "draft_vocab_size" in config:
        return "eagle3"
    return None


def imported_speculator(config: dict[str, Any], kind: str | None = None) -> SpeculatorSpec | None:
    """The ``speculator`` block of an imported config: the kind it declares, else ``kind`` (from ``--method``).

    The targets of an imported head are unknown (its geometry is checked against the deployment's target);
    a speculators-format config names the checkpoint it was trained on (``speculators_config.verifier``).
    """
    found = recognised_kind(config)
    if found is not None and kind is not None and kind not in (found, "draft_model", "ngram"):
        raise InputError("method", kind, f"{found} (the config.json describes a {found} head)")
    found = found or (kind if kind in ("eagle", "eagle3", "mtp") else None)
    if found is None:
        return None
    verifier = (config.get("speculators_config") or {}).get("verifier") or {}
    trained_on = verifier.get("name_or_path") if isinstance(verifier, dict) else None
    draft_vocab = config.get("draft_vocab_size")
    return SpeculatorSpec(
        kind=found,
        targets=[],
        trained_on=trained_on if isinstance(trained_on, str) and "/" in trained_on[:200] else None,
        shares_embeddings=True,
        shares_lm_head=found != "eagle3",
        draft_vocab_size=draft_vocab if found == "eagle3" and isinstance(draft_vocab, int) else None,
        aux_hidden_layers=3 if found == "eagle3" else 1,
        loading_notes="Recognised in an imported config.json; loaded as vLLM and SGLang load published heads.",
    )


def mtp_config(config: dict[str, Any]) -> dict[str, Any]:
    """A target config reduced to its MTP layers (``num_nextn_predict_layers`` of them, every one MoE)."""
    layers = next((config[n] for n in MTP_LAYER_FIELDS if isinstance(config.get(n), int) and config[n] > 0), None)
    if layers is None:
        raise ConfigError(
            "an MTP draft config must declare its layers (num_nextn_predict_layers)", field="num_nextn_predict_layers"
        )
    reduced = {**config, "num_hidden_layers": layers}
    for name in MTP_LAYER_FIELDS:
        reduced.pop(name, None)
    if "first_k_dense_replace" in reduced:
        reduced["first_k_dense_replace"] = 0
    return reduced


#: How a sentence names each kind of head.
HEAD_WORDS: dict[str, str] = {"eagle": "an EAGLE head", "eagle3": "an EAGLE-3 head", "mtp": "an MTP module"}
