"""Plotly figures of memory plans (pure functions of planner.memory.plan results)."""

from __future__ import annotations

import plotly.graph_objects as go

from planner.memory import COMPONENT_LABELS, GpuMemory, MemoryPlan
from planner.reports.charts.legend import legend_below
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


def gpu_memory_bar(plan: MemoryPlan) -> go.Figure:
    """One stacked bar per pipeline stage: the GPU's memory by component, in GiB."""
    stages: list[GpuMemory] = plan.stages
    labels = [f"stage {i}" if len(stages) > 1 else "one GPU" for i in range(len(stages))]
    fig = go.Figure()
    for field, name in COMPONENT_LABELS.items():
        color = COLOURS[field]
        values = [getattr(s, field) / GIB for s in stages]
        fig.add_bar(
            y=labels,
            x=values,
            name=name,
            orientation="h",
            marker_color=color,
            hovertemplate=f"{name}: %{{x:.2f}} GiB<extra></extra>",
        )
    budget = stages[plan.binding_stage].memory_limit_bytes / GIB
    fig.add_vline(
        x=budget,
        line_dash="dash",
        line_color="#1a202c",
        annotation_text=f"engine memory limit {budget:.1f} GiB",
        annotation_position="top",
    )
    fig.update_layout(
        barmode="stack",
        xaxis_title="GiB (2^30 bytes) per GPU",
        height=220 + 40 * len(stages),
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
    )
    return legend_below(fig)


def draft_cost_bars(plan: MemoryPlan) -> go.Figure:
    """KV tokens and concurrency with and without the draft, side by side."""
    fig = go.Figure()
    categories = ["KV cache tokens (thousands)", f"whole concurrent requests at {plan.max_model_len:,} tokens"]
    fig.add_bar(
        name="without the draft",
        x=categories,
        marker_color="#a0aec0",
        y=[(plan.kv_cache_tokens_without_draft or 0) / 1000, whole_requests(plan.max_concurrency_without_draft or 0)],
    )
    fig.add_bar(
        name="with the draft",
        x=categories,
        marker_color="#2b6cb0",
        y=[plan.kv_cache_tokens / 1000, whole_requests(plan.max_concurrency)],
    )
    fig.update_layout(
        barmode="group",
        height=320,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
    )
    return legend_below(fig)


def memory_shortfall_bar(plan: MemoryPlan) -> go.Figure | None:
    """What a plan that does not fit needs against what the GPU has (None when nothing is short).

    Weights and runtime over the engine's memory limit (the KV cache would be negative): the fixed
    components stacked beside the limit and the device. Else, when the KV cache is too small for one
    request of max_model_len: the tokens one request needs beside the tokens the cache holds.
    """
    gpu = plan.stages[plan.binding_stage]
    fig = go.Figure()
    if gpu.kv_shortfall_bytes > 0:
        needed_label = "needed before any KV cache"
        for field in _FIXED:
            value = getattr(gpu, field)
            if value > 0:
                name = COMPONENT_LABELS[field]
                fig.add_bar(
                    y=[needed_label],
                    x=[value / GIB],
                    name=name,
                    orientation="h",
                    marker_color=COLOURS[field],
                    hovertemplate=f"{name}: %{{x:.2f}} GiB<extra></extra>",
                )
        for label, value, colour in (
            ("engine memory limit", gpu.memory_limit_bytes, "#38a169"),
            ("device total", gpu.total_bytes, "#a0aec0"),
        ):
            fig.add_bar(
                y=[label],
                x=[value / GIB],
                name=label,
                orientation="h",
                marker_color=colour,
                showlegend=False,
                hovertemplate=f"{label}: %{{x:.2f}} GiB<extra></extra>",
            )
        title = f"Short by {gpu.kv_shortfall_bytes / GIB:,.1f} GiB per GPU before any KV cache"
        axis = "GiB (2^30 bytes) per GPU"
    elif plan.kv_cache_tokens < plan.max_model_len:
        for label, value, colour in (
            (f"one request at max length ({plan.max_model_len:,} tokens)", plan.max_model_len, "#e53e3e"),
            ("KV cache holds", plan.kv_cache_tokens, "#38a169"),
        ):
            fig.add_bar(
                y=[label],
                x=[value],
                orientation="h",
                marker_color=colour,
                showlegend=False,
                hovertemplate=f"{label}: %{{x:,}} tokens<extra></extra>",
            )
        title = f"Short by {plan.max_model_len - plan.kv_cache_tokens:,} KV cache tokens for one full-length request"
        axis = "tokens"
    else:
        return None
    fig.update_layout(
        barmode="stack",
        title=title,
        xaxis_title=axis,
        height=300,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    return legend_below(fig)


def concurrency_curve(points: list[tuple[int, float]], current_len: int) -> go.Figure:
    """Whole concurrent requests against max_model_len (log axis)."""
    fig = go.Figure(
        go.Scatter(
            x=[p[0] for p in points],
            y=[whole_requests(p[1]) for p in points],
            mode="lines+markers",
            name="whole concurrent requests",
            showlegend=False,
            hovertemplate="%{x:,} tokens: %{y:,} requests<extra></extra>",
        )
    )
    peak = max([p[1] for p in points] + [1.0])
    fig.add_scatter(  # a trace marks the current length (shapes on log axes take log10 coordinates)
        x=[current_len, current_len],
        y=[0, peak],
        mode="lines+text",
        line={"dash": "dot", "color": "#718096"},
        text=["", "current max length"],
        textposition="top right",
        hoverinfo="skip",
        showlegend=False,
    )
    fig.update_layout(
        xaxis_type="log",
        xaxis_title="max model length (tokens)",
        yaxis_title="whole concurrent requests",
        height=320,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
    )
    return fig
