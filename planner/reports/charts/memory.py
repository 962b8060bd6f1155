"""Plotly figures of memory plans (pure functions of planner.memory.plan results), built from plain properties
without plotly's per-property validation (:mod:`planner.reports.charts.plain_figure`; each is tested to equal its
validated form)."""

from __future__ import annotations

import plotly.graph_objects as go

from planner.memory import COMPONENT_LABELS, GpuMemory, MemoryPlan
from planner.reports.charts.legend import legend_below_layout
from planner.reports.charts.plain_figure import plain_figure
from planner.reports.screen import whole_requests
from planner.units import GIB

#: The components that must fit before any KV cache (what a does-not-fit view stacks as "needed").
_FIXED = (
    "target_weights_bytes",
    "draft_weights_bytes",
    "torch_peak_increase_bytes",
    "non_torch_increase_bytes",
    "cudagraph_bytes",
)

COLOURS = {
    "target_weights_bytes": "#2b6cb0",
    "draft_weights_bytes": "#63b3ed",
    "torch_peak_increase_bytes": "#dd6b20",
    "non_torch_increase_bytes": "#805ad5",
    "cudagraph_bytes": "#d53f8c",
    "kv_cache_bytes": "#38a169",
    "unused_budget_bytes": "#e2e8f0",
    "outside_budget_bytes": "#cbd5e0",
}


def _bar(name: str | None, x: list, y: list, colour: str, **more) -> dict:
    """One bar trace as plain properties (the charts below are built unvalidated: :func:`plain_figure`)."""
    trace = {"type": "bar", "x": x, "y": y, "marker": {"color": colour}, **more}
    if name is not None:
        trace["name"] = name
    return trace


def gpu_memory_bar(plan: MemoryPlan) -> go.Figure:
    """One stacked bar per pipeline stage: the GPU's memory by component, in GiB, and the engine's memory limit."""
    stages: list[GpuMemory] = plan.stages
    labels = [f"stage {i}" if len(stages) > 1 else "one GPU" for i in range(len(stages))]
    traces = [
        _bar(name, [getattr(s, field) / GIB for s in stages], labels, COLOURS[field], orientation="h",
             hovertemplate=f"{name}: %{{x:.2f}} GiB<extra></extra>")
        for field, name in COMPONENT_LABELS.items()
    ]  # fmt: skip
    budget = stages[plan.binding_stage].memory_limit_bytes / GIB
    layout = {
        "shapes": [{"type": "line", "xref": "x", "yref": "y domain", "x0": budget, "x1": budget, "y0": 0, "y1": 1,
                    "line": {"color": "#1a202c", "dash": "dash"}}],
        "annotations": [{"text": f"engine memory limit {budget:.1f} GiB", "showarrow": False, "xref": "x",
                         "x": budget, "xanchor": "center", "yref": "y domain", "y": 1, "yanchor": "bottom"}],
        "barmode": "stack",
        "xaxis": {"title": {"text": "GiB (2^30 bytes) per GPU"}},
        "height": 220 + 40 * len(stages),
        "margin": {"l": 10, "r": 10, "t": 30, "b": 10},
    }  # fmt: skip
    return plain_figure(traces, legend_below_layout(layout))


def draft_cost_bars(plan: MemoryPlan) -> go.Figure:
    """KV tokens and concurrency with and without the draft, side by side."""
    categories = ["KV cache tokens (thousands)", f"whole concurrent requests at {plan.max_model_len:,} tokens"]
    without = [
        (plan.kv_cache_tokens_without_draft or 0) / 1000,
        whole_requests(plan.max_concurrency_without_draft or 0),
    ]
    with_draft = [plan.kv_cache_tokens / 1000, whole_requests(plan.max_concurrency)]
    traces = [
        _bar("without the draft", categories, without, "#a0aec0"),
        _bar("with the draft", categories, with_draft, "#2b6cb0"),
    ]
    layout = {"barmode": "group", "height": 320, "margin": {"l": 10, "r": 10, "t": 30, "b": 10}}
    return plain_figure(traces, legend_below_layout(layout))


def memory_shortfall_bar(plan: MemoryPlan) -> go.Figure | None:
    """What a plan that does not fit needs against what the GPU has (None when nothing is short).

    Weights and runtime over the engine's memory limit (the KV cache would be negative): the fixed
    components stacked beside the limit and the device. Else, when the KV cache is too small for one
    request of max_model_len: the tokens one request needs beside the tokens the cache holds.
    """
    gpu = plan.stages[plan.binding_stage]
    traces = []
    if gpu.kv_shortfall_bytes > 0:
        needed_label = "needed before any KV cache"
        for field in _FIXED:
            value = getattr(gpu, field)
            if value > 0:
                name = COMPONENT_LABELS[field]
                traces.append(
                    _bar(name, [value / GIB], [needed_label], COLOURS[field], orientation="h",
                         hovertemplate=f"{name}: %{{x:.2f}} GiB<extra></extra>")
                )  # fmt: skip
        for label, value, colour in (
            ("engine memory limit", gpu.memory_limit_bytes, "#38a169"),
            ("device total", gpu.total_bytes, "#a0aec0"),
        ):
            traces.append(
                _bar(label, [value / GIB], [label], colour, orientation="h", showlegend=False,
                     hovertemplate=f"{label}: %{{x:.2f}} GiB<extra></extra>")
            )  # fmt: skip
        title = f"Short by {gpu.kv_shortfall_bytes / GIB:,.1f} GiB per GPU before any KV cache"
        axis = "GiB (2^30 bytes) per GPU"
    elif plan.kv_cache_tokens < plan.max_model_len:
        for label, value, colour in (
            (f"one request at max length ({plan.max_model_len:,} tokens)", plan.max_model_len, "#e53e3e"),
            ("KV cache holds", plan.kv_cache_tokens, "#38a169"),
        ):
            traces.append(
                _bar(None, [value], [label], colour, orientation="h", showlegend=False,
                     hovertemplate=f"{label}: %{{x:,}} tokens<extra></extra>")
            )  # fmt: skip
        title = f"Short by {plan.max_model_len - plan.kv_cache_tokens:,} KV cache tokens for one full-length request"
        axis = "tokens"
    else:
        return None
    layout = {
        "barmode": "stack",
        "title": {"text": title},
        "xaxis": {"title": {"text": axis}},
        "height": 300,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
    }
    return plain_figure(traces, legend_below_layout(layout))


def concurrency_curve(points: list[tuple[int, float]], current_len: int) -> go.Figure:
    """Whole concurrent requests against max_model_len (log axis)."""
    peak = max([p[1] for p in points] + [1.0])
    traces = [
        {"type": "scatter", "x": [p[0] for p in points], "y": [whole_requests(p[1]) for p in points],
         "mode": "lines+markers", "name": "whole concurrent requests", "showlegend": False,
         "hovertemplate": "%{x:,} tokens: %{y:,} requests<extra></extra>"},
        # a trace marks the current length (shapes on log axes take log10 coordinates)
        {"type": "scatter", "x": [current_len, current_len], "y": [0, peak], "mode": "lines+text",
         "line": {"dash": "dot", "color": "#718096"}, "text": ["", "current max length"],
         "textposition": "top right", "hoverinfo": "skip", "showlegend": False},
    ]  # fmt: skip
    layout = {
        "xaxis": {"type": "log", "title": {"text": "max model length (tokens)"}},
        "yaxis": {"title": {"text": "whole concurrent requests"}},
        "height": 320,
        "margin": {"l": 10, "r": 10, "t": 30, "b": 10},
    }
    return plain_figure(traces, layout)
