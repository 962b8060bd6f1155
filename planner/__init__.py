"""Speculative Decoding Capacity Planner: the core library (no Streamlit here).

Every figure the app, CLI and reports show is computed by a function in this package over the
catalog facts in ``data/``. This module is the public surface: each name in :data:`__all__` is
re-exported from the sub-package that owns it, resolved on first access (PEP 562), so
``import planner`` stays light and cycle-free; heavy dependencies (torch, transformers, pynvml)
load only inside the functions that need them.

>>> import planner
>>> plan = planner.plan_memory(
...     planner.Deployment.on_node(planner.get_model("Llama-3.1-8B"), planner.get_node("1x-h100-sxm-80gb"))
... )
>>> plan.fits
True
"""

from __future__ import annotations

import importlib
from typing import Any

#: The stable surface, by the module (a sub-package facade or a base module) that owns each name.
_SURFACE: dict[str, tuple[str, ...]] = {
    "planner.errors": ("CatalogError", "ConfigError", "InputError", "PlannerError"),
    "planner.units": ("GB", "GIB", "KIB", "bytes_to_gb", "bytes_to_gib", "fmt_bytes", "fmt_gb", "fmt_gib"),
    "planner.acceptance_math": (
        "alpha_from_draft_acceptance_rate",
        "alpha_from_tau",
        "break_even_alpha",
        "draft_acceptance_rate",
        "expected_tokens_per_step",
        "optimal_k",
    ),
    "planner.catalog": (
        "GpuSpec",
        "ModelFacts",
        "ModelSpec",
        "NodeType",
        "get_gpu",
        "get_kv_dtype",
        "get_model",
        "get_node",
        "list_gpus",
        "list_kv_dtypes",
        "list_models",
        "list_nodes",
        "list_weight_formats",
        "model_facts",
        "model_from_config",
        "resolve_model",
    ),
    "planner.pairs": (
        "AcceptanceEstimate",
        "Check",
        "PairContext",
        "PairVerdict",
        "acceptance_prior",
        "check_pair",
        "load_tokenizer_vocab",
    ),
    "planner.deployment": ("ENGINES", "Deployment"),
    "planner.memory": ("COMPONENT_LABELS", "MemoryPlan", "concurrency_by_context", "plan_memory"),
    "planner.speed": (
        "SpeedEstimate",
        "SpeedReport",
        "SpeedWorkload",
        "calibration_summary",
        "estimate_speed",
        "speculation_rules",
        "speed_report",
        "speed_source",
    ),
    "planner.decisions": (
        "DecisionMatrix",
        "FleetQuote",
        "MatrixRow",
        "Traffic",
        "best_quote_on_node",
        "compare_nodes",
        "decision_matrix",
        "fleet_quote",
        "matrix_table",
    ),
    "planner.scenario": ("Scenario",),
    "planner.launch": ("LaunchConfig", "NotLaunchableError", "launch_config", "read_launch_command", "render_launch"),
    "planner.validation": ("EngineLogFacts", "LogCheck", "check_log", "parse_engine_log"),
    "planner.measure": ("MeasureOptions", "MeasurementRecord", "detect_gpus", "load_records"),
    "planner.reports": ("MIME", "Report", "quote_report", "quotes_table", "sizing_report"),
}
_OWNER = {name: module for module, names in _SURFACE.items() for name in names}

#: Kept equal to the table above (tests/core/test_public_api.py).
__all__ = [
    "COMPONENT_LABELS",
    "ENGINES",
    "GB",
    "GIB",
    "KIB",
    "MIME",
    "AcceptanceEstimate",
    "CatalogError",
    "Check",
    "ConfigError",
    "DecisionMatrix",
    "Deployment",
    "EngineLogFacts",
    "FleetQuote",
    "GpuSpec",
    "InputError",
    "LaunchConfig",
    "LogCheck",
    "MatrixRow",
    "MeasureOptions",
    "MeasurementRecord",
    "MemoryPlan",
    "ModelFacts",
    "ModelSpec",
    "NodeType",
    "NotLaunchableError",
    "PairContext",
    "PairVerdict",
    "PlannerError",
    "Report",
    "Scenario",
    "SpeedEstimate",
    "SpeedReport",
    "SpeedWorkload",
    "Traffic",
    "__version__",
    "acceptance_prior",
    "alpha_from_draft_acceptance_rate",
    "alpha_from_tau",
    "best_quote_on_node",
    "break_even_alpha",
    "bytes_to_gb",
    "bytes_to_gib",
    "calibration_summary",
    "check_log",
    "check_pair",
    "compare_nodes",
    "concurrency_by_context",
    "decision_matrix",
    "detect_gpus",
    "draft_acceptance_rate",
    "estimate_speed",
    "expected_tokens_per_step",
    "fleet_quote",
    "fmt_bytes",
    "fmt_gb",
    "fmt_gib",
    "get_gpu",
    "get_kv_dtype",
    "get_model",
    "get_node",
    "launch_config",
    "list_gpus",
    "list_kv_dtypes",
    "list_models",
    "list_nodes",
    "list_weight_formats",
    "load_records",
    "load_tokenizer_vocab",
    "matrix_table",
    "model_facts",
    "model_from_config",
    "optimal_k",
    "parse_engine_log",
    "plan_memory",
    "quote_report",
    "quotes_table",
    "read_launch_command",
    "render_launch",
    "resolve_model",
    "sizing_report",
    "speculation_rules",
    "speed_report",
    "speed_source",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":  # written once, in planner.defaults (every exported document prints it)
        return importlib.import_module("planner.defaults").PLANNER_VERSION
    module = _OWNER.get(name)
    if module is None:
        raise AttributeError(f"module 'planner' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_OWNER})
