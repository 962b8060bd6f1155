"""Everything the catalog shows about one model, computed once: params, weights, KV per token.

Remembered per model (by its JSON, custom configurations included; :func:`planner.facts.clear_caches` forgets
them with the data they come from): the weight bytes of every format walk every tensor of the model, so the
Catalog's table of every model is computed once per process, not once per visitor.

>>> from planner.catalog.lookup import get_model
>>> facts = model_facts(get_model("Llama-3.2-3B"))
>>> facts.params.total_params, round(facts.weight_bytes_by_format["bf16"] / 1e9, 1)
(3212749824, 6.4)
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel

from planner.catalog.lookup import get_kv_dtype, list_weight_formats
from planner.catalog.schemas import ModelSpec
from planner.facts import register_cache
from planner.model.geometry import Architecture
from planner.model.kv_bytes import kv_bytes_per_token, kv_element_bytes
from planner.model.param_count import ParamCount, count_parameters
from planner.model.weight_bytes import weight_bytes

KV_DTYPES_SHOWN = ("bf16", "fp8")


class ModelFacts(BaseModel):
    model: str
    size_label: str | None
    tokenizer: str | None
    architecture: Architecture
    params: ParamCount
    #: Whole-model weight bytes in every catalog weight format.
    weight_bytes_by_format: dict[str, int]
    #: Whole-model KV bytes per token (every layer in full) by KV dtype.
    kv_bytes_per_token_by_dtype: dict[str, int]


def model_facts(spec: ModelSpec) -> ModelFacts:
    """The facts of ``spec`` (a copy: callers may change it)."""
    return _facts(spec.model_dump_json()).model_copy(deep=True)


@lru_cache(maxsize=1024)
def _facts(spec_json: str) -> ModelFacts:
    spec = ModelSpec.model_validate_json(spec_json)
    arch = spec.architecture
    config = spec.config if arch.formula_family is None else None
    return ModelFacts(
        model=spec.id,
        size_label=spec.size_label,
        tokenizer=spec.tokenizer,
        architecture=arch,
        params=count_parameters(arch, config),
        weight_bytes_by_format={fmt.id: weight_bytes(arch, fmt, config).total_bytes for fmt in list_weight_formats()},
        kv_bytes_per_token_by_dtype={
            dtype: kv_bytes_per_token(arch, kv_element_bytes(get_kv_dtype(dtype), arch)) for dtype in KV_DTYPES_SHOWN
        },
    )


register_cache(_facts)
