"""A figure from plain plotly properties, without plotly's validation of each.

Validating every property as a figure is built (``go.Figure`` and its trace classes) is most of the cost of a chart
of a few hundred markers (about 30 ms for the Explore pair, 50 ms for Draft Selection's scatter). A builder that
sets only properties it knows to be valid can skip it through plotly's ``_validate`` switch of ``BaseFigure``; the
figure then serialises as the validated one does (Streamlit takes a figure as built; kaleido draws it). The one place
that uses the switch; each chart built this way is tested to equal its validated form
(:func:`equals_validated`).
"""

from __future__ import annotations

import json

import plotly.graph_objects as go
import plotly.io as pio


def plain_figure(traces: list[dict], layout: dict) -> go.Figure:
    """``traces`` (each a dict with its ``type``) and ``layout``, as a figure, unvalidated.

    >>> fig = plain_figure([{"type": "scatter", "x": [1, 2], "y": [3, 4], "name": "a"}], {"height": 300})
    >>> fig.data[0].name, equals_validated(fig)
    ('a', True)
    """
    return go.Figure(data=traces, layout=layout, _validate=False)


def equals_validated(fig: go.Figure) -> bool:
    """Whether ``fig`` serialises exactly as the same figure validated property by property (an unknown or invalid
    property raises)."""
    return json.loads(pio.to_json(fig, validate=False)) == json.loads(pio.to_json(go.Figure(fig.to_dict())))
