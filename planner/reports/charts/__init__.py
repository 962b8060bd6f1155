"""Plotly figure builders: pure functions of core results, shared by the pages and the reports.

Each builder is imported from its module on first access (PEP 562), so a page that draws one chart does
not import plotly.express or the modules of charts it never draws.
"""

from __future__ import annotations

import importlib
from typing import Any

#: The module under planner.reports.charts that defines each builder.
_OWNER: dict[str, str] = {
    "acceptance_by_position_bars": "measure",
    "batch_speedup_chart": "speed",
    "break_even_chart": "speed",
    "concurrency_curve": "memory",
    "cost_by_node": "fleet",
    "draft_cost_bars": "memory",
    "filter_records": "measure",
    "gpu_memory_bar": "memory",
    "latency_chart": "speed",
    "latency_vs_rate_chart": "serving",
    "log_check_bars": "measure",
    "log_check_frame": "measure",
    "memory_comparison_bars": "measure",
    "memory_shortfall_bar": "memory",
    "memory_timeline": "measure",
    "occupancy_chart": "serving",
    "records_frame": "measure",
    "speed_comparison_bars": "measure",
    "speedup_heatmap": "speed",
    "speedup_vs_kv_scatter": "selection",
    "task_acceptance_bars": "measure",
    "throughput_latency_chart": "serving",
}

__all__ = [
    "acceptance_by_position_bars",
    "batch_speedup_chart",
    "break_even_chart",
    "concurrency_curve",
    "cost_by_node",
    "draft_cost_bars",
    "filter_records",
    "gpu_memory_bar",
    "latency_chart",
    "latency_vs_rate_chart",
    "log_check_bars",
    "log_check_frame",
    "memory_comparison_bars",
    "memory_shortfall_bar",
    "memory_timeline",
    "occupancy_chart",
    "records_frame",
    "speed_comparison_bars",
    "speedup_heatmap",
    "speedup_vs_kv_scatter",
    "task_acceptance_bars",
    "throughput_latency_chart",
]


def __getattr__(name: str) -> Any:
    module = _OWNER.get(name)
    if module is None:
        raise AttributeError(f"module 'planner.reports.charts' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"planner.reports.charts.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_OWNER})
