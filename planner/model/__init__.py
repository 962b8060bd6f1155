"""A checkpoint's geometry and exact sizes: architecture from ``config.json``, parameters, weights, KV per token."""

from planner.model.architecture import architecture_from_config
from planner.model.dtypes import KvDtype, WeightFormat
from planner.model.geometry import FORMULA_FAMILIES, Architecture, MlaGeometry, MoeGeometry
from planner.model.kv_bytes import (
    kv_bytes_for_context,
    kv_bytes_per_token,
    kv_element_bytes,
    kv_heads_per_gpu,
    layer_kv_bytes_per_token,
)
from planner.model.parallelism import check_pp, check_tp, tp_problem, valid_tp_degrees
from planner.model.param_count import ParamCount, count_parameters
from planner.model.weight_bytes import WeightBytes, weight_bytes, weight_bytes_per_gpu

__all__ = [
    "FORMULA_FAMILIES",
    "Architecture",
    "KvDtype",
    "MlaGeometry",
    "MoeGeometry",
    "ParamCount",
    "WeightBytes",
    "WeightFormat",
    "architecture_from_config",
    "check_pp",
    "check_tp",
    "count_parameters",
    "kv_bytes_for_context",
    "kv_bytes_per_token",
    "kv_element_bytes",
    "kv_heads_per_gpu",
    "layer_kv_bytes_per_token",
    "tp_problem",
    "valid_tp_degrees",
    "weight_bytes",
    "weight_bytes_per_gpu",
]
