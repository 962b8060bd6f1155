"""The Draft Selection chart: predicted speedup of each compatible draft against its share of the KV pool."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.colors import qualitative

from planner.decisions.selection import DecisionMatrix, matrix_table
from planner.reports.charts.plain_figure import plain_figure
from planner.reports.tables import VALUE_LABELS

#: One marker shape per speculation method, in the order methods first appear (plotly express's own sequence).
SYMBOLS = ("circle", "diamond", "square", "x", "cross", "pentagon", "hexagram", "star")


def speedup_vs_kv_scatter(matrix: DecisionMatrix, table=None) -> go.Figure | None:
    """Compatible candidates with a speed estimate, one colour per verdict and one marker shape per method, both
    named as every page names them (:data:`VALUE_LABELS`); None when there is none (unvalidated,
    :func:`planner.reports.charts.plain_figure.plain_figure`). ``table``: ``matrix_table(matrix)`` where the caller
    already holds it."""
    table = matrix_table(matrix) if table is None else table
    speed = f"speedup @ batch {matrix.batch_size}"
    compatible = table[table["verdict"] != "incompatible"].dropna(subset=[speed])
    if compatible.empty:
        return None
    x_title = "draft's share of KV pool (%)"
    colours = {v: qualitative.Plotly[i % len(qualitative.Plotly)] for i, v in enumerate(compatible["verdict"].unique())}
    symbols = {m: SYMBOLS[i % len(SYMBOLS)] for i, m in enumerate(compatible["method"].unique())}
    traces = []
    for (verdict, method), group in compatible.groupby(["verdict", "method"], sort=False):
        name = f"{VALUE_LABELS.get(verdict, verdict)}, {VALUE_LABELS.get(method, method)}"
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": name,
                "legendgroup": name,
                "x": group["draft KV share (%)"].to_numpy(),
                "y": group[speed].to_numpy(),
                "hovertext": group["draft"].tolist(),
                "hovertemplate": f"<b>%{{hovertext}}</b><br>{name}<br>{x_title} %{{x:.1f}}<br>"
                f"speedup at batch {matrix.batch_size} %{{y:.2f}}x<extra></extra>",
                "marker": {"color": colours[verdict], "symbol": symbols[method]},
            }
        )
    layout = {
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": f"predicted speedup at batch {matrix.batch_size} (x)"}},
        "legend": {"title": {"text": "verdict, method"}},
        "shapes": [
            {"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "yref": "y", "y0": 1.0, "y1": 1.0,
             "line": {"dash": "dot"}}
        ],
        "annotations": [
            {"text": "no gain", "xref": "x domain", "x": 1, "xanchor": "right", "yref": "y", "y": 1.0,
             "yanchor": "bottom", "showarrow": False}
        ],
    }  # fmt: skip
    return plain_figure(traces, layout)
