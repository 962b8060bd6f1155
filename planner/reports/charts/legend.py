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
    old = fig.layout.margin.b or 0
    bottom = max(old, LEGEND_MARGIN_PX)
    fig.update_layout(legend=LEGEND_BELOW, margin_b=bottom)
    if fig.layout.height:  # the plot keeps its size: the figure grows by the room added under it
        fig.update_layout(height=fig.layout.height + bottom - old)
    return fig
