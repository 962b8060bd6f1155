"""Plotly figures of the speed model (pure functions of planner.speed.estimate results), built from plain properties
without plotly's per-property validation (:mod:`planner.reports.charts.plain_figure`; each is tested to equal its
validated form): a Performance page change redraws all four."""

from __future__ import annotations

import plotly.graph_objects as go

from planner.reports.charts.legend import legend_below_layout
from planner.reports.charts.plain_figure import plain_figure
from planner.speed.estimate import SpeedEstimate
from planner.speed.sweeps import BatchSweep, SpeedGrid

_MARGIN = {"l": 10, "r": 10, "t": 40, "b": 10}
_WITH, _WITHOUT = "#2b6cb0", "#a0aec0"
#: Red below 1, blue above: plotly's "RdBu" scale as its validator spells it out.
_RED_BLUE = [list(stop) for stop in go.Heatmap(colorscale="RdBu").colorscale]


def _hline(y: float, colour: str) -> dict:
    """A dashed line across the plot at ``y`` (what ``Figure.add_hline`` adds)."""
    return {"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "yref": "y", "y0": y, "y1": y,
            "line": {"color": colour, "dash": "dash"}}  # fmt: skip


def speedup_heatmap(grid: SpeedGrid, alpha: float | None = None, k: int | None = None) -> go.Figure:
    """Speedup over α (rows) × K (columns); red below 1 (a slowdown), blue above, white at 1."""
    values = [v for row in grid.speedup for v in row]
    low, high = min(values), max(values)
    span = max(high - 1.0, 1.0 - low, 1e-9)
    traces = [
        {"type": "heatmap", "z": grid.speedup, "x": grid.ks, "y": grid.alphas, "zmin": 1.0 - span,
         "zmax": 1.0 + span, "colorscale": _RED_BLUE, "colorbar": {"title": {"text": "speedup"}},
         "hovertemplate": "α %{y:.2f}, K %{x}: %{z:.2f}x<extra></extra>"},
        {"type": "contour", "z": grid.speedup, "x": grid.ks, "y": grid.alphas,
         "contours": {"start": 1.0, "end": 1.0, "coloring": "none", "showlabels": True},
         "line": {"color": "#1a202c", "dash": "dash"}, "showscale": False, "hoverinfo": "skip", "name": "break-even"},
    ]  # fmt: skip
    if alpha is not None and k is not None:
        traces.append(
            {"type": "scatter", "x": [k], "y": [alpha], "mode": "markers", "name": "this workload",
             "marker": {"symbol": "x", "size": 12, "color": "#1a202c"},
             "hovertemplate": "this workload<extra></extra>"}
        )  # fmt: skip
    layout = {
        "title": {"text": f"Speedup at batch {grid.batch_size} (dashed: speedup = 1)"},
        "xaxis": {"title": {"text": "draft length K"}},
        "yaxis": {"title": {"text": "acceptance α"}},
        "height": 420,
        "margin": dict(_MARGIN),
        "showlegend": False,
    }
    return plain_figure(traces, layout)


def batch_speedup_chart(sweep: BatchSweep) -> go.Figure:
    """Speedup (chosen and optimal K) and throughput against batch size; the crossover below 1 marked."""
    points = sweep.points
    batches = [p.batch_size for p in points]
    traces = [
        {"type": "scatter", "x": batches, "y": [p.speedup for p in points], "name": f"speedup at K = {sweep.k}",
         "mode": "lines+markers", "line": {"color": _WITH}, "hovertemplate": "batch %{x}: %{y:.2f}x<extra></extra>"},
        {"type": "scatter", "x": batches, "y": [p.speedup_at_optimal_k for p in points],
         "name": "speedup at the optimal K", "mode": "lines", "line": {"color": _WITH, "dash": "dot"},
         "customdata": [p.optimal_k for p in points],
         "hovertemplate": "batch %{x}: %{y:.2f}x at K = %{customdata}<extra></extra>"},
        {"type": "scatter", "x": batches, "y": [p.throughput_tok_s for p in points], "name": "throughput with draft",
         "mode": "lines", "line": {"color": "#38a169"}, "xaxis": "x", "yaxis": "y2",
         "hovertemplate": "batch %{x}: %{y:,.0f} tok/s<extra></extra>"},
        {"type": "scatter", "x": batches, "y": [p.baseline_throughput_tok_s for p in points],
         "name": "throughput without", "mode": "lines", "line": {"color": _WITHOUT}, "xaxis": "x", "yaxis": "y2",
         "hovertemplate": "batch %{x}: %{y:,.0f} tok/s<extra></extra>"},
    ]  # fmt: skip
    if sweep.crossover_batch is not None:
        top = max(*(p.speedup for p in points), *(p.speedup_at_optimal_k for p in points), 1.0)
        traces.append(  # a trace, not a shape: shapes on a log axis with a secondary y misplace
            {"type": "scatter", "x": [sweep.crossover_batch, sweep.crossover_batch], "y": [0, top],
             "mode": "lines+text", "line": {"color": "#c53030", "dash": "dot"},
             "text": ["", f"slower from batch {sweep.crossover_batch}"], "textposition": "top left",
             "name": "speculation stops paying", "hoverinfo": "skip"}
        )  # fmt: skip
    layout = {
        # one plot with a second y axis on the right (the layout plotly's make_subplots gives for secondary_y)
        "xaxis": {"anchor": "y", "domain": [0.0, 0.94], "type": "log",
                  "title": {"text": "batch size (concurrent sequences per replica)"}},
        "yaxis": {"anchor": "x", "domain": [0.0, 1.0], "title": {"text": "speedup (x)"}},
        "yaxis2": {"anchor": "x", "overlaying": "y", "side": "right", "title": {"text": "output tok/s per replica"}},
        "shapes": [_hline(1.0, "#1a202c")],
        "title": {"text": f"Speedup and throughput against batch (α = {sweep.alpha:.2f})"},
        "height": 420,
        "margin": dict(_MARGIN),
    }  # fmt: skip
    return plain_figure(traces, legend_below_layout(layout))


def break_even_chart(sweep: BatchSweep) -> go.Figure:
    """The smallest α that pays (at the best K) against batch size, with this workload's α."""
    points = [p for p in sweep.points if p.break_even_alpha is not None]
    traces = [
        {"type": "scatter", "x": [p.batch_size for p in points], "y": [p.break_even_alpha for p in points],
         "mode": "lines+markers", "name": "break-even α", "line": {"color": "#c53030"},
         "hovertemplate": "batch %{x}: α ≥ %{y:.3f} pays<extra></extra>"}
    ]  # fmt: skip
    shapes = [_hline(sweep.alpha, _WITH)]
    annotations = [
        {"text": f"this α = {sweep.alpha:.2f}", "showarrow": False, "xref": "x domain", "x": 1, "xanchor": "right",
         "yref": "y", "y": sweep.alpha, "yanchor": "bottom"}
    ]  # fmt: skip
    never = [p.batch_size for p in sweep.points if p.break_even_alpha is None]
    if never:
        shapes.append(
            {"type": "rect", "xref": "x", "x0": min(never), "x1": max(never), "yref": "y domain", "y0": 0, "y1": 1,
             "fillcolor": "#fed7d7", "opacity": 0.5, "line": {"width": 0}}
        )  # fmt: skip
        annotations.append(
            {"text": "no α pays", "showarrow": False, "xref": "x", "x": min(never), "xanchor": "left",
             "yref": "y domain", "y": 1, "yanchor": "top"}
        )  # fmt: skip
    layout = {
        "shapes": shapes,
        "annotations": annotations,
        "title": {"text": "Break-even acceptance against batch (below the line speculation costs)"},
        "xaxis": {"type": "log", "title": {"text": "batch size"}},
        "yaxis": {"title": {"text": "α"}, "range": [0, 1]},
        "height": 360,
        "margin": dict(_MARGIN),
        "showlegend": False,
    }
    return plain_figure(traces, layout)


def latency_chart(estimate: SpeedEstimate) -> go.Figure:
    """TTFT and TPOT (ms) with and without the draft, side by side (two plots)."""
    traces = []
    for axis, (without, with_draft) in (
        ("", (estimate.baseline_ttft_s, estimate.spec_ttft_s)),
        ("2", (estimate.baseline_tpot_s, estimate.spec_tpot_s)),
    ):
        for label, value, colour in (("without draft", without, _WITHOUT), ("with draft", with_draft, _WITH)):
            traces.append(
                {"type": "bar", "x": [label], "y": [value * 1e3], "marker": {"color": colour}, "showlegend": False,
                 "hovertemplate": "%{y:.2f} ms<extra></extra>", "xaxis": f"x{axis}", "yaxis": f"y{axis}"}
            )  # fmt: skip
    titles = [
        {"text": text, "font": {"size": 16}, "showarrow": False, "xref": "paper", "x": x, "xanchor": "center",
         "yref": "paper", "y": 1.0, "yanchor": "bottom"}
        for text, x in (("time to first token (ms)", 0.225), ("time per output token (ms)", 0.775))
    ]  # fmt: skip
    layout = {
        # two plots side by side with their titles (the layout plotly's make_subplots gives for one row, two columns)
        "xaxis": {"anchor": "y", "domain": [0.0, 0.45]},
        "yaxis": {"anchor": "x", "domain": [0.0, 1.0]},
        "xaxis2": {"anchor": "y2", "domain": [0.55, 1.0]},
        "yaxis2": {"anchor": "x2", "domain": [0.0, 1.0]},
        "annotations": titles,
        "title": {"text": f"Latency at batch {estimate.batch_size}"},
        "height": 340,
        "margin": dict(_MARGIN),
    }
    return plain_figure(traces, layout)
