"""The Draft Selection chart: predicted speedup of each compatible draft against its share of the KV pool."""

from __future__ import annotations

import plotly.express as px
import plotly.graph_objects as go

from planner.decisions.selection import DecisionMatrix, matrix_table


def speedup_vs_kv_scatter(matrix: DecisionMatrix) -> go.Figure | None:
    """Compatible candidates with a speed estimate, one marker shape per method; None when there is none."""
    table = matrix_table(matrix)
    speed = f"speedup @ batch {matrix.batch_size}"
    compatible = table[table["verdict"] != "incompatible"].dropna(subset=[speed])
    if compatible.empty:
        return None
    fig = px.scatter(
        compatible,
        x="draft KV share (%)",
        y=speed,
        color="verdict",
        hover_name="draft",
        symbol="method",
        labels={"draft KV share (%)": "draft's share of KV pool (%)"},
    )
    fig.add_hline(y=1.0, line_dash="dot", annotation_text="no gain")
    return fig
