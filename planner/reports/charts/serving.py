"""Plotly figures of serving under load (pure functions of planner.speed.serving_sweep results, no formulas)."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from planner.reports.charts.legend import LEGEND_BELOW, LEGEND_MARGIN_PX
from planner.speed.serving_sweep import RateSweep

ARMS = {"plain": ("without the draft", "#a0aec0"), "speculative": ("with the draft", "#2b6cb0")}
LAYOUT = {"height": 380, "margin": {"l": 10, "r": 10, "t": 40, "b": LEGEND_MARGIN_PX}, "legend": LEGEND_BELOW}


def _arms(sweep: RateSweep) -> list[str]:
    return [arm for arm in ARMS if sweep.points and arm in sweep.points[0].output_tokens_per_s]


def throughput_latency_chart(sweep: RateSweep) -> go.Figure:
    """Output tokens/s against mean TPOT as load rises: the curve operators read."""
    fig = go.Figure()
    for arm in _arms(sweep):
        name, color = ARMS[arm]
        fig.add_scatter(
            x=[p.tpot_mean_s[arm] * 1e3 for p in sweep.points],
            y=[p.output_tokens_per_s[arm] for p in sweep.points],
            mode="lines+markers",
            name=name,
            line={"color": color},
            text=[f"{p.request_rate:.2f} req/s" for p in sweep.points],
        )
    fig.update_layout(title="Throughput against latency", xaxis_title="mean TPOT (ms)", yaxis_title="output tok/s")
    return fig.update_layout(**LAYOUT)


def latency_vs_rate_chart(sweep: RateSweep) -> go.Figure:
    """p99 TTFT and mean TPOT against request rate, with and without the draft; where speculation stops paying."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("p99 TTFT (s)", "mean TPOT (ms)"))
    rates = [p.request_rate for p in sweep.points]
    for arm in _arms(sweep):
        name, color = ARMS[arm]
        fig.add_scatter(
            x=rates, y=[p.ttft_p99_s[arm] for p in sweep.points], name=name, line={"color": color}, row=1, col=1
        )
        fig.add_scatter(
            x=rates,
            y=[p.tpot_mean_s[arm] * 1e3 for p in sweep.points],
            name=name,
            line={"color": color},
            showlegend=False,
            row=1,
            col=2,
        )
    if sweep.crossover_rate is not None:
        for col in (1, 2):
            fig.add_vline(x=sweep.crossover_rate, line_dash="dash", line_color="#c53030", row=1, col=col)
        fig.add_annotation(
            text=f"speculation stops paying at {sweep.crossover_rate:.2f} req/s", x=0.5, y=1.12, xref="paper",
            yref="paper", showarrow=False,
        )  # fmt: skip
    fig.update_xaxes(title_text="requests per second")
    fig.update_yaxes(type="log", row=1, col=1)
    return fig.update_layout(**LAYOUT)


def occupancy_chart(sweep: RateSweep) -> go.Figure:
    """Running requests over time in the highest-rate run (batch occupancy)."""
    fig = go.Figure()
    for arm, samples in sweep.occupancy.items():
        name, color = ARMS[arm]
        fig.add_scatter(
            x=[t for t, _ in samples], y=[n for _, n in samples], name=name, line={"color": color, "shape": "hv"}
        )
    rate = sweep.points[-1].request_rate if sweep.points else 0.0
    fig.update_layout(
        title=f"Batch occupancy at {rate:.2f} req/s", xaxis_title="time (s)", yaxis_title="running requests"
    )
    return fig.update_layout(**LAYOUT)
