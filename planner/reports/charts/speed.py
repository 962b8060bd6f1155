"""Plotly figures of the speed model (pure functions of planner.speed.estimate results)."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from planner.reports.charts.legend import legend_below
from planner.speed.estimate import SpeedEstimate
from planner.speed.sweeps import BatchSweep, SpeedGrid

_MARGIN = {"l": 10, "r": 10, "t": 40, "b": 10}
_WITH, _WITHOUT = "#2b6cb0", "#a0aec0"


def speedup_heatmap(grid: SpeedGrid, alpha: float | None = None, k: int | None = None) -> go.Figure:
    """Speedup over α (rows) × K (columns); red below 1 (a slowdown), blue above, white at 1."""
    values = [v for row in grid.speedup for v in row]
    low, high = min(values), max(values)
    span = max(high - 1.0, 1.0 - low, 1e-9)
    fig = go.Figure(
        go.Heatmap(
            z=grid.speedup,
            x=grid.ks,
            y=grid.alphas,
            zmin=1.0 - span,
            zmax=1.0 + span,
            colorscale="RdBu",
            colorbar={"title": "speedup"},
            hovertemplate="α %{y:.2f}, K %{x}: %{z:.2f}x<extra></extra>",
        )
    )
    fig.add_contour(
        z=grid.speedup,
        x=grid.ks,
        y=grid.alphas,
        contours={"start": 1.0, "end": 1.0, "coloring": "none", "showlabels": True},
        line={"color": "#1a202c", "dash": "dash"},
        showscale=False,
        hoverinfo="skip",
        name="break-even",
    )
    if alpha is not None and k is not None:
        fig.add_scatter(
            x=[k],
            y=[alpha],
            mode="markers",
            marker={"symbol": "x", "size": 12, "color": "#1a202c"},
            name="this workload",
            hovertemplate="this workload<extra></extra>",
        )
    fig.update_layout(
        title=f"Speedup at batch {grid.batch_size} (dashed: speedup = 1)",
        xaxis_title="draft length K",
        yaxis_title="acceptance α",
        height=420,
        margin=_MARGIN,
        showlegend=False,
    )
    return fig


def batch_speedup_chart(sweep: BatchSweep) -> go.Figure:
    """Speedup (chosen and optimal K) and throughput against batch size; the crossover below 1 marked."""
    batches = [p.batch_size for p in sweep.points]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_scatter(
        x=batches,
        y=[p.speedup for p in sweep.points],
        name=f"speedup at K = {sweep.k}",
        mode="lines+markers",
        line={"color": _WITH},
        hovertemplate="batch %{x}: %{y:.2f}x<extra></extra>",
    )
    fig.add_scatter(
        x=batches,
        y=[p.speedup_at_optimal_k for p in sweep.points],
        name="speedup at the optimal K",
        mode="lines",
        line={"color": _WITH, "dash": "dot"},
        customdata=[p.optimal_k for p in sweep.points],
        hovertemplate="batch %{x}: %{y:.2f}x at K = %{customdata}<extra></extra>",
    )
    fig.add_scatter(
        x=batches,
        y=[p.throughput_tok_s for p in sweep.points],
        name="throughput with draft",
        mode="lines",
        line={"color": "#38a169"},
        secondary_y=True,
        hovertemplate="batch %{x}: %{y:,.0f} tok/s<extra></extra>",
    )
    fig.add_scatter(
        x=batches,
        y=[p.baseline_throughput_tok_s for p in sweep.points],
        name="throughput without",
        mode="lines",
        line={"color": _WITHOUT},
        secondary_y=True,
        hovertemplate="batch %{x}: %{y:,.0f} tok/s<extra></extra>",
    )
    fig.add_hline(y=1.0, line_dash="dash", line_color="#1a202c")
    if sweep.crossover_batch is not None:
        top = max(*(p.speedup for p in sweep.points), *(p.speedup_at_optimal_k for p in sweep.points), 1.0)
        fig.add_scatter(  # a trace, not a shape: shapes on a log axis with a secondary y misplace
            x=[sweep.crossover_batch, sweep.crossover_batch],
            y=[0, top],
            mode="lines+text",
            line={"color": "#c53030", "dash": "dot"},
            text=["", f"slower from batch {sweep.crossover_batch}"],
            textposition="top left",
            name="speculation stops paying",
            hoverinfo="skip",
        )
    fig.update_xaxes(type="log", title_text="batch size (concurrent sequences per replica)")
    fig.update_yaxes(title_text="speedup (x)", secondary_y=False)
    fig.update_yaxes(title_text="output tok/s per replica", secondary_y=True)
    fig.update_layout(
        title=f"Speedup and throughput against batch (α = {sweep.alpha:.2f})",
        height=420,
        margin=_MARGIN,
    )
    return legend_below(fig)


def break_even_chart(sweep: BatchSweep) -> go.Figure:
    """The smallest α that pays (at the best K) against batch size, with this workload's α."""
    points = [p for p in sweep.points if p.break_even_alpha is not None]
    fig = go.Figure(
        go.Scatter(
            x=[p.batch_size for p in points],
            y=[p.break_even_alpha for p in points],
            mode="lines+markers",
            name="break-even α",
            line={"color": "#c53030"},
            hovertemplate="batch %{x}: α ≥ %{y:.3f} pays<extra></extra>",
        )
    )
    fig.add_hline(y=sweep.alpha, line_dash="dash", line_color=_WITH, annotation_text=f"this α = {sweep.alpha:.2f}")
    never = [p.batch_size for p in sweep.points if p.break_even_alpha is None]
    if never:
        fig.add_vrect(
            x0=min(never),
            x1=max(never),
            fillcolor="#fed7d7",
            opacity=0.5,
            line_width=0,
            annotation_text="no α pays",
            annotation_position="top left",
        )
    fig.update_layout(
        title="Break-even acceptance against batch (below the line speculation costs)",
        xaxis={"type": "log", "title": "batch size"},
        yaxis={"title": "α", "range": [0, 1]},
        height=360,
        margin=_MARGIN,
        showlegend=False,
    )
    return fig


def latency_chart(estimate: SpeedEstimate) -> go.Figure:
    """TTFT and TPOT (ms) with and without the draft."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("time to first token (ms)", "time per output token (ms)"))
    for col, (without, with_draft) in enumerate(
        ((estimate.baseline_ttft_s, estimate.spec_ttft_s), (estimate.baseline_tpot_s, estimate.spec_tpot_s)), start=1
    ):
        fig.add_bar(
            x=["without draft"],
            y=[without * 1e3],
            marker_color=_WITHOUT,
            showlegend=False,
            hovertemplate="%{y:.2f} ms<extra></extra>",
            row=1,
            col=col,
        )
        fig.add_bar(
            x=["with draft"],
            y=[with_draft * 1e3],
            marker_color=_WITH,
            showlegend=False,
            hovertemplate="%{y:.2f} ms<extra></extra>",
            row=1,
            col=col,
        )
    fig.update_layout(title=f"Latency at batch {estimate.batch_size}", height=340, margin=_MARGIN)
    return fig
