"""The Explore charts: built without plotly's per-property validation, equal to the same figure validated; every
frontier point drawn in the bold series, the cloud thinned to its limit. The Explore document carries the checks of
the recommendation's fleet that were run."""

from __future__ import annotations

import pytest

from planner.decisions.search import Objectives, SearchSpace, SearchWorkload, search
from planner.reports.charts.plain_figure import equals_validated
from planner.reports.search_view import frontier_charts, search_report

SPACE = {
    "target": "Llama-3.1-8B",
    "nodes": ("1x-h100-sxm-80gb",),
    "methods": ("none", "ngram"),
    "ks": (1, 3),
    "dtypes": ("bf16", "fp8"),
    "batch_caps": (8, 64),
}


@pytest.fixture(scope="module")
def result():
    workload = SearchWorkload(requests_per_s=4.0, prompt_tokens=512, output_tokens=128)
    return search(SearchSpace.build(**SPACE), workload, Objectives(tpot_slo_s=0.03))


@pytest.mark.parametrize("colour_by", ["method", "node"])
def test_each_chart_equals_the_same_figure_validated(result, colour_by):
    for fig in frontier_charts(result, colour_by):
        assert equals_validated(fig)


def test_the_frontier_series_holds_every_frontier_point_and_the_cloud_its_limit(result):
    throughput, cost = frontier_charts(result, "method", limit=5)
    for fig, plane in ((throughput, "throughput"), (cost, "cost")):
        frontier = [t for t in fig.data if t.name == "frontier"]
        assert len(frontier) == 1
        expected = {p.index for p in result.points if plane in p.frontiers}
        assert set(frontier[0].customdata) == expected and expected
        cloud = sum(len(t.x) for t in fig.data if t.name != "frontier")
        assert cloud <= 5 + len(expected)
        assert {t.name for t in fig.data if t.name != "frontier"} <= {"none", "ngram"}


def test_the_document_carries_the_checks_of_the_recommendations_fleet_that_were_run(result):
    title = "How sure the recommendation's fleet is"
    assert title not in [s.title for s in search_report(result).sections]
    draws, margin = result.recommendation_across_draws(2), result.recommendation_speed_margin()
    assert draws is not None and margin is not None
    [section] = [s for s in search_report(result, draws=draws, margin=margin).sections if s.title == title]
    assert section.notes[0].startswith("Sized on 2 draws of the same traffic")
    assert section.notes[1] == f"Speed margin: {margin.describe()}."
    only = [s for s in search_report(result, margin=margin).sections if s.title == title]
    assert [s.notes for s in only] == [[f"Speed margin: {margin.describe()}."]]
