"""A search drawn for people: the two frontier charts (the cloud thinned for display, the frontier exact), the
frontier table with units, and the frontier as a report (PDF, HTML, XLSX, Markdown, JSON). No formulas.

>>> thinned_indices(list(range(10)), keep={7}, limit=4)
[0, 3, 6, 7, 9]
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from planner.decisions.search import SearchPoint, SearchResult
from planner.decisions.speed_margins import SpeedMargin
from planner.decisions.traffic_draws import CountAcrossDraws
from planner.reports.charts.plain_figure import plain_figure
from planner.reports.document import Report, Section, Summary

#: Points drawn in a chart's cloud at most (WebGL draws these without freezing; the frontier is always drawn).
MAX_CLOUD_POINTS = 5_000
COLOUR_BY = {"speculation method": "method", "node type": "node"}

FRONTIER_COLUMNS = {
    "label": "configuration",
    "node": "node type",
    "tp": "TP",
    "pp": "PP",
    "dtype": "weights",
    "kv_dtype": "KV cache",
    "speculator": "speculation",
    "k": "K",
    "max_num_seqs": "batch cap (max_num_seqs)",
    "kv_cache_tokens": "KV cache tokens / replica",
    "output_tok_s_per_gpu": "output tok/s per GPU",
    "output_tok_s_per_user": "output tok/s per user",
    "ttft_s": "TTFT (s)",
    "tpot_s": "TPOT (s)",
    "replicas": "replicas at the batch cap",
    "gpus": "GPUs at the batch cap",
    "usd_per_million_output_tokens": "$ per million output tokens",
    "frontiers": "frontier",
}


def thinned_indices(candidates: Sequence[int], *, keep: set[int], limit: int) -> list[int]:
    """At most about ``limit`` of ``candidates`` at an even stride, plus every index in ``keep`` (sorted)."""
    stride = max(1, -(-len(candidates) // limit))
    chosen = set(candidates[::stride]) | (keep & set(candidates))
    return sorted(chosen)


def points_frame(points: Sequence[SearchPoint]) -> pd.DataFrame:
    """Every point with figures: the columns the charts draw and the table shows."""
    rows = [
        {
            "index": p.index,
            "label": p.label,
            "node": p.node,
            "method": p.method,
            "tp": p.tp,
            "pp": p.pp,
            "dtype": p.dtype,
            "kv_dtype": p.kv_dtype,
            "speculator": p.speculator,
            "k": p.k,
            "max_num_seqs": p.max_num_seqs,
            "kv_cache_tokens": p.kv_cache_tokens,
            "output_tok_s_per_gpu": p.output_tok_s_per_gpu,
            "output_tok_s_per_user": p.output_tok_s_per_user,
            "ttft_s": p.ttft_s,
            "tpot_s": p.tpot_s,
            "tpot_ms": None if p.tpot_s is None else p.tpot_s * 1e3,
            "replicas": p.replicas,
            "gpus": p.gpus,
            "usd_per_million_output_tokens": p.usd_per_million_output_tokens,
            "frontiers": ", ".join(p.frontiers),
            "stage": p.stage,
            "meets_objectives": bool(p.meets_objectives),
        }
        for p in points
        if p.has_figures
    ]
    return pd.DataFrame(rows)


def frontier_table(result: SearchResult) -> pd.DataFrame:
    """The frontier with units in the headers (the page, the CSV export and the report)."""
    frame = points_frame(result.frontier)
    if frame.empty:
        return pd.DataFrame(columns=list(FRONTIER_COLUMNS.values()))
    return frame[list(FRONTIER_COLUMNS)].rename(columns=FRONTIER_COLUMNS)


def _trace(frame: pd.DataFrame, x: str, y: str, **properties) -> dict:
    """One series of points: their figures on ``x`` and ``y``, the point's index (what a click returns) and label."""
    return {
        "x": frame[x].to_numpy(),
        "y": frame[y].to_numpy(),
        "customdata": frame["index"].to_numpy(),
        "text": frame["label"].tolist(),
        **properties,
    }


def frontier_charts(result: SearchResult, colour_by: str = "method", limit: int = MAX_CLOUD_POINTS):
    """(throughput chart, cost chart): every point faint (thinned to ``limit``), the frontier bold; each marker's
    ``customdata`` is the point's index (a click names the point)."""
    drawable = [p for p in result.points if p.has_figures]
    planes_on = {plane: {i for i, p in enumerate(drawable) if plane in p.frontiers} for plane in ("throughput", "cost")}
    shown_of = {plane: thinned_indices(range(len(drawable)), keep=on, limit=limit) for plane, on in planes_on.items()}
    kept = sorted(set(shown_of["throughput"]) | set(shown_of["cost"]))
    # only the points drawn are tabulated (the cloud is thinned before, not after, building their rows)
    frame = points_frame([drawable[i] for i in kept])
    frame.index = kept
    pct = f"p{result.objectives.percentile:g}"
    charts = []
    planes = (
        (
            "throughput",
            "output_tok_s_per_user",
            "output_tok_s_per_gpu",
            "output tok/s per user",
            "output tok/s per GPU",
        ),
        ("cost", "tpot_ms", "usd_per_million_output_tokens", f"{pct} TPOT (ms)", "$ per million output tokens"),
    )
    for plane, x, y, x_title, y_title in planes:
        traces: list[dict] = []
        if not frame.empty:
            on = frame.index.isin(sorted(planes_on[plane]))
            cloud = frame.loc[shown_of[plane]]
            cloud = cloud[cloud[y].notna()]
            hover = f"{x_title} %{{x:,.2f}}<br>{y_title} %{{y:,.3f}}<extra></extra>"
            for name, part in cloud.groupby(colour_by, sort=True):
                traces.append(
                    _trace(part, x, y, type="scattergl", mode="markers", name=str(name), opacity=0.25,
                           marker={"size": 5}, hovertemplate="%{text}<br>" + hover)
                )  # fmt: skip
            traces.append(
                _trace(frame[on].sort_values(x), x, y, type="scatter", mode="lines+markers", name="frontier",
                       line={"width": 3, "color": "black"}, marker={"size": 10, "color": "black"},
                       hovertemplate="<b>%{text}</b><br>" + hover)
            )  # fmt: skip
        layout = {
            "xaxis": {"title": {"text": x_title}},
            "yaxis": {"title": {"text": y_title}},
            "height": 420,
            "margin": {"t": 30},
            "legend": {"orientation": "h"},
        }
        charts.append(plain_figure(traces, layout))  # unvalidated: tests/core/reports/test_search_view.py
    return charts[0], charts[1]


def search_report(
    result: SearchResult, *, draws: CountAcrossDraws | None = None, margin: SpeedMargin | None = None
) -> Report:
    """The frontier as a document: the recommendation, the checks of its fleet that were run (``draws``: sized on
    other draws of the traffic; ``margin``: its speed margin), the frontier table, the cost of each step."""
    table = frontier_table(result)
    steps = pd.DataFrame([{"step": s.sentence} for s in result.steps])
    checks = ([f"{draws.describe()}."] if draws is not None else []) + (
        [f"Speed margin: {margin.describe()}."] if margin is not None else []
    )
    checked = [Section(title="How sure the recommendation's fleet is", notes=checks)] if checks else []
    return Report(
        title=f"Design-space search: {result.space.target}",
        subtitle=f"{result.workload.describe()}; objectives {result.objectives.describe()}",
        summary=Summary(text=result.headline),
        sections=[
            *checked,
            Section(
                title="Frontier",
                text=f"{len(result.points):,} configurations, {result.fitting_points:,} fit and start, "
                f"{result.simulated:,} simulated.",
                table=table,
            ),
            Section(title="What lower latency costs", table=steps if not steps.empty else None),
        ],
        inputs={
            "target": result.space.target,
            "node types": ", ".join(result.space.nodes),
            "engines": ", ".join(result.space.engines),
            "methods": ", ".join(result.space.methods),
            "K": ", ".join(map(str, result.space.ks)),
            "precisions": ", ".join(result.space.dtypes),
            "batch caps": result.space.describe_caps(),
        },
        assumptions=result.notes,
    )
