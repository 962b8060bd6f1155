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

from planner.catalog.schemas import ModelSpec, SpeculatorSpec

#: ``config.json`` fields that declare a target's own MTP layers, by family.
MTP_LAYER_FIELDS: tuple[str, ...] = ("num_nextn_predict_layers", "mtp_num_hidden_layers")


def mtp_layer_count(target: ModelSpec) -> int:
    """How many MTP layers ``target``'s checkpoint ships (0: none)."""
    for name in MTP_LAYER_FIELDS:
        value = target.config.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return 0


@cache
def _mtp_module(target_json: str) -> ModelSpec | None:
    target = ModelSpec.model_validate_json(target_json)
    layers = mtp_layer_count(target)
    if layers == 0:
        return None
    config = {**target.config, "num_hidden_layers": layers}
    for name in MTP_LAYER_FIELDS:
        config.pop(name, None)
    if "first_k_dense_replace" in config:  # the MTP layer sits after the dense prefix: an MoE layer
        config["first_k_dense_replace"] = 0
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
