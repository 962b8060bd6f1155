"""The catalog: data/*.json loaded once into validated schemas, looked up by id or alias."""

from planner.catalog.config_import import MAX_CONFIG_BYTES, load_config, model_from_config
from planner.catalog.hardware import DeviceTotal, device_total_bytes, nearest_gpu_by_total
from planner.catalog.import_naming import MAX_MODEL_NAME_CHARS, checked_model_name, config_fingerprint, import_name
from planner.catalog.importing import resolve_model
from planner.catalog.lookup import (
    get_gpu,
    get_kv_dtype,
    get_model,
    get_node,
    get_price,
    get_tokenizer,
    get_weight_format,
    list_gpus,
    list_kv_dtypes,
    list_models,
    list_nodes,
    list_prices,
    list_speculators,
    list_tokenizers,
    list_weight_formats,
)
from planner.catalog.model_facts import ModelFacts, model_facts
from planner.catalog.name_matching import ModelMatch, match_gpu, match_model
from planner.catalog.schemas import (
    SPECULATOR_KINDS,
    GpuPrice,
    GpuSpec,
    Lineage,
    ModelSpec,
    NodeType,
    SpeculatorSpec,
    TokenizerSpec,
)
from planner.catalog.speculators import HEAD_WORDS, head_tensors, mtp_module, speculator_params

__all__ = [
    "HEAD_WORDS",
    "MAX_CONFIG_BYTES",
    "MAX_MODEL_NAME_CHARS",
    "SPECULATOR_KINDS",
    "DeviceTotal",
    "GpuPrice",
    "GpuSpec",
    "Lineage",
    "ModelFacts",
    "ModelMatch",
    "ModelSpec",
    "NodeType",
    "SpeculatorSpec",
    "TokenizerSpec",
    "checked_model_name",
    "config_fingerprint",
    "device_total_bytes",
    "get_gpu",
    "get_kv_dtype",
    "get_model",
    "get_node",
    "get_price",
    "get_tokenizer",
    "get_weight_format",
    "head_tensors",
    "import_name",
    "list_gpus",
    "list_kv_dtypes",
    "list_models",
    "list_nodes",
    "list_prices",
    "list_speculators",
    "list_tokenizers",
    "list_weight_formats",
    "load_config",
    "match_gpu",
    "match_model",
    "model_facts",
    "model_from_config",
    "mtp_module",
    "nearest_gpu_by_total",
    "resolve_model",
    "speculator_params",
]
