"""Plotly figure builders: pure functions of core results, shared by the pages and the reports."""

from planner.reports.charts.fleet import cost_by_node
from planner.reports.charts.measure import (
    acceptance_by_position_bars,
    filter_records,
    log_check_bars,
    log_check_frame,
    memory_comparison_bars,
    memory_timeline,
    records_frame,
    speed_comparison_bars,
    task_acceptance_bars,
)
from planner.reports.charts.memory import concurrency_curve, draft_cost_bars, gpu_memory_bar, memory_shortfall_bar
from planner.reports.charts.selection import speedup_vs_kv_scatter
from planner.reports.charts.serving import latency_vs_rate_chart, occupancy_chart, throughput_latency_chart
from planner.reports.charts.speed import batch_speedup_chart, break_even_chart, latency_chart, speedup_heatmap

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
