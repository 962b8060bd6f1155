"""Plotly figures of fleet quotes (pure functions of planner.decisions.fleet results)."""

from __future__ import annotations

import plotly.graph_objects as go

from planner.decisions.fleet import FleetQuote


def cost_by_node(quotes: list[FleetQuote]) -> go.Figure:
    """Monthly cost (or GPUs, without prices) on each node type, with and without speculation."""
    priced = all(q.usd_per_gpu_hour for q in quotes)
    labels = [f"{q.node} (TP {q.tp})" for q in quotes]

    def value(option):
        if option is None:
            return None
        return option.usd_per_month if priced else option.gpus

    fig = go.Figure()
    fig.add_bar(
        name="without speculation", x=labels, y=[value(q.without_speculation) for q in quotes], marker_color="#a0aec0"
    )
    fig.add_bar(name="with the draft", x=labels, y=[value(q.with_speculation) for q in quotes], marker_color="#2b6cb0")
    fig.update_layout(
        barmode="group",
        yaxis_title="USD per month (730 h)" if priced else "GPUs",
        height=380,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "y": -0.3},
    )
    return fig
