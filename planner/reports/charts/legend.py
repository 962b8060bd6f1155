"""Where a chart's legend goes: below everything else, with room kept for it, so it never covers an axis title
or tick labels (a legend placed at a negative ``y`` of the plot area sits on the x-axis title when the title or
the labels are long).

>>> import plotly.graph_objects as go
>>> fig = legend_below(go.Figure(layout={"margin": {"b": 10}}))
>>> fig.layout.legend.yref, fig.layout.margin.b >= LEGEND_MARGIN_PX
('container', True)
"""

from __future__ import annotations

import plotly.graph_objects as go

#: Room kept under the plot for the x-axis title, its labels and one or two rows of legend, in pixels.
LEGEND_MARGIN_PX = 110
#: A horizontal legend anchored to the bottom of the whole figure (not of the plot area).
LEGEND_BELOW = {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0, "xanchor": "left"}


def legend_below(fig: go.Figure) -> go.Figure:
    """``fig`` with its legend at the bottom of the figure and the bottom margin it needs (the figure grows)."""
    room = legend_room(fig.layout.margin.b, fig.layout.height)
    fig.update_layout(legend=LEGEND_BELOW, margin_b=room["margin_b"])
    if "height" in room:
        fig.update_layout(height=room["height"])
    return fig


def legend_below_layout(layout: dict) -> dict:
    """:func:`legend_below` of a plain layout dict (a figure built unvalidated,
    :mod:`planner.reports.charts.plain_figure`): a new dict.

    >>> legend_below_layout({"height": 300, "margin": {"l": 10, "b": 10}})["height"]
    400
    """
    margin = dict(layout.get("margin") or {})
    room = legend_room(margin.get("b"), layout.get("height"))
    out = {**layout, "legend": dict(LEGEND_BELOW), "margin": {**margin, "b": room["margin_b"]}}
    if "height" in room:
        out["height"] = room["height"]
    return out


def legend_room(margin_b: float | None, height: float | None) -> dict:
    """The bottom margin a legend below needs, and the figure's height grown by the room added (the plot keeps its
    size; no height when the figure has none)."""
    old = margin_b or 0
    bottom = max(old, LEGEND_MARGIN_PX)
    return {"margin_b": bottom, **({"height": height + bottom - old} if height else {})}
