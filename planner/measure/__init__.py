"""The measurement harness: the only part of the planner that touches a GPU.

Importing this package is light (nothing heavy at import time); the modules that run models
(``speculative_run``, ``model_loading``, ``harness``) import torch, and ``nvml_sampler`` imports
pynvml only when a sampler starts. ``record``, ``prompts``, ``acceptance_counts``,
``vllm_metrics`` and ``prediction`` are pure Python, so the Validation page and the CLI can read
records without torch. :func:`measure` is resolved on first use (PEP 562), so
``from planner.measure import measure`` is where torch and transformers load.
"""

import importlib
from typing import Any

from planner.measure.acceptance_counts import AcceptanceStats, TaskVerdict, acceptance_stats
from planner.measure.launch_options import with_launch
from planner.measure.nvml_sampler import NvmlResult, NvmlSampler, detect_gpus
from planner.measure.options import MAX_K, MeasureOptions
from planner.measure.prediction import Prediction
from planner.measure.prompts import MAX_PROMPTS_BYTES
from planner.measure.record import MeasurementRecord, load_records, measurements_dir, save_record

#: Names that load torch, resolved on first access.
_HEAVY = {"measure": "planner.measure.harness"}

__all__ = [
    "MAX_K",
    "MAX_PROMPTS_BYTES",
    "AcceptanceStats",
    "MeasureOptions",
    "MeasurementRecord",
    "NvmlResult",
    "NvmlSampler",
    "Prediction",
    "TaskVerdict",
    "acceptance_stats",
    "detect_gpus",
    "load_records",
    "measure",
    "measurements_dir",
    "save_record",
    "with_launch",
]


def __getattr__(name: str) -> Any:
    if name in _HEAVY:
        value = getattr(importlib.import_module(_HEAVY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'planner.measure' has no attribute {name!r}")
