"""Plotly figures of fleet quotes (pure functions of planner.decisions.fleet results)."""

from __future__ import annotations

import plotly.graph_objects as go

from planner.decisions.fleet_models import FleetQuote
from planner.reports.charts.legend import legend_below
from planner.units import fmt_counted, fmt_usd


def cost_by_node(quotes: list[FleetQuote]) -> go.Figure:
    """Monthly cost (or GPUs, without prices) on each node type, with and without speculation.

    Only options that meet every objective get a bar, labelled with its layout (a node type's two options may use
    different tensor-parallel degrees); an option that misses one is marked "misses an objective" at the axis (its
    fleet is not a quote).
    """
    priced = all(q.usd_per_gpu_hour for q in quotes)
    labels = [q.node for q in quotes]

    def value(option):
        if option is None or not option.meets_slo:
            return None
        return option.usd_per_month if priced else option.gpus

    def text(option):
        if option is None:
            return "no draft"
        if not option.meets_slo:
            return "misses an objective"
        return f"{option.layout}: " + (fmt_usd(option.usd_per_month) if priced else fmt_counted(option.gpus, "GPU"))

    fig = go.Figure()
    for name, pick, color in (
        ("without speculation", lambda q: q.without_speculation, "#a0aec0"),
        ("with the draft", lambda q: q.with_speculation, "#2b6cb0"),
    ):
        options = [pick(q) for q in quotes]
        fig.add_bar(
            name=name,
            x=labels,
            y=[value(o) if value(o) is not None else 0 for o in options],
            text=[text(o) for o in options],
            textposition="outside",
            cliponaxis=False,
            marker_color=color,
        )
    fig.update_layout(
        barmode="group",
        title={"text": "Options that meet every objective", "font": {"size": 14}},
        yaxis_title="USD per month (730 h)" if priced else "GPUs",
        height=400,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        uniformtext={"minsize": 9, "mode": "show"},
    )
    return legend_below(fig)
