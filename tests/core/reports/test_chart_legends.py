"""No chart shows a stray "trace 0" legend entry: every trace in a shown legend has a name, and a chart with one
trace hides its legend (the speed, serving, selection and memory charts, built from real core results)."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from planner.catalog.lookup import get_model, get_node
from planner.decisions import decision_matrix
from planner.deployment import Deployment
from planner.memory import plan_memory
from planner.reports import charts
from planner.reports.charts.legend import LEGEND_MARGIN_PX
from planner.reports.charts.plain_figure import equals_validated
from planner.speed import SpeedWorkload, rate_sweep, speed_report

DEP = Deployment.on_node(
    get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8, draft=get_model("Llama-3.2-1B")
)


@pytest.fixture(scope="module")
def figures() -> dict[str, go.Figure]:
    report = speed_report(DEP, SpeedWorkload.build(alpha=0.8))
    sweep = rate_sweep(DEP, alpha=0.8, k=5, prompt_tokens=512, output_tokens=64)
    plan = plan_memory(DEP)
    matrix = decision_matrix(DEP, batch_size=8)
    return {
        "speedup_heatmap": charts.speedup_heatmap(report.grid, 0.8, 5),
        "batch_speedup_chart": charts.batch_speedup_chart(report.sweep),
        "break_even_chart": charts.break_even_chart(report.sweep),
        "latency_chart": charts.latency_chart(report.estimate),
        "throughput_latency_chart": charts.throughput_latency_chart(sweep),
        "latency_vs_rate_chart": charts.latency_vs_rate_chart(sweep),
        "occupancy_chart": charts.occupancy_chart(sweep),
        "speedup_vs_kv_scatter": charts.speedup_vs_kv_scatter(matrix),
        "gpu_memory_bar": charts.gpu_memory_bar(plan),
        "draft_cost_bars": charts.draft_cost_bars(plan),
    }


def _in_legend(fig: go.Figure) -> list:
    """The traces a browser would list in the legend (plotly shows it for two or more, unless told)."""
    candidates = [t for t in fig.data if t.showlegend is not False and t.type not in ("heatmap", "contour")]
    shown = fig.layout.showlegend
    if shown is False or (shown is None and len(candidates) < 2):
        return []
    return candidates


@pytest.mark.parametrize(
    "name",
    [
        "speedup_heatmap",
        "batch_speedup_chart",
        "break_even_chart",
        "latency_chart",
        "throughput_latency_chart",
        "latency_vs_rate_chart",
        "occupancy_chart",
        "speedup_vs_kv_scatter",
        "gpu_memory_bar",
        "draft_cost_bars",
    ],
)
def test_every_trace_in_a_shown_legend_has_a_name(figures, name):
    fig = figures[name]
    assert fig is not None
    unnamed = [i for i, t in enumerate(fig.data) if t in _in_legend(fig) and not (t.name or "").strip()]
    assert not unnamed, f"{name}: traces {unnamed} would be listed as 'trace N'"
    if len([t for t in fig.data if t.showlegend is not False]) == 1:
        assert fig.layout.showlegend is not True, f"{name}: a legend for a single trace"


@pytest.mark.parametrize(
    "name",
    [
        "batch_speedup_chart",
        "latency_chart",
        "throughput_latency_chart",
        "latency_vs_rate_chart",
        "occupancy_chart",
        "speedup_vs_kv_scatter",
        "gpu_memory_bar",
        "draft_cost_bars",
    ],
)
def test_a_shown_legend_sits_below_the_axis_labels_with_room_kept(figures, name):
    """A legend at a negative y of the plot area covers the x-axis title; below the whole figure it cannot."""
    fig = figures[name]
    if not _in_legend(fig):
        return
    legend, bottom = fig.layout.legend, fig.layout.margin.b or 0
    assert legend.orientation != "h" or (legend.yref == "container" and bottom >= LEGEND_MARGIN_PX), name


def test_the_selection_scatter_names_verdicts_and_methods_in_words_and_equals_itself_validated(figures):
    fig = figures["speedup_vs_kv_scatter"]
    names = [t.name for t in fig.data]
    assert names and not [n for n in names if "_" in n], names  # "compatible, with warnings", not enum names
    assert any("draft model" in n for n in names)
    assert equals_validated(fig)


def test_the_memory_charts_equal_themselves_validated(figures):
    """Built from plain properties (planner.reports.charts.plain_figure), each serialises as the validated figure."""
    small = Deployment.on_node(get_model("Llama-3.1-405B"), get_node("1x-h100-sxm-80gb"), tp=1, dtype="bf16")
    short = plan_memory(small)  # does not fit: the shortfall chart
    plan = plan_memory(DEP)
    built = [
        figures["gpu_memory_bar"],
        figures["draft_cost_bars"],
        charts.memory_shortfall_bar(short),
        charts.concurrency_curve([(1024, 300.0), (8192, 40.0), (65536, 5.0)], plan.max_model_len),
    ]
    assert all(fig is not None and equals_validated(fig) for fig in built)
    assert charts.memory_shortfall_bar(plan) is None  # nothing short
    assert [s.type for s in figures["gpu_memory_bar"].layout.shapes] == ["line"]  # the engine's memory limit


def test_the_speed_charts_equal_themselves_validated(figures):
    """The Performance page's four charts, built from plain properties, serialise as the validated figures, also with
    batches where no α pays (the shaded band) and without a crossover."""
    report = speed_report(DEP, SpeedWorkload.build(alpha=0.8))
    names = ("speedup_heatmap", "batch_speedup_chart", "break_even_chart", "latency_chart")
    assert all(equals_validated(figures[name]) for name in names)
    points = [
        p.model_copy(update={"break_even_alpha": None}) if i >= len(report.sweep.points) - 2 else p
        for i, p in enumerate(report.sweep.points)
    ]
    sweep = report.sweep.model_copy(update={"points": points, "crossover_batch": None})
    band = charts.break_even_chart(sweep)
    assert equals_validated(band) and [s.type for s in band.layout.shapes] == ["line", "rect"]
    assert equals_validated(charts.batch_speedup_chart(sweep))
    assert equals_validated(charts.speedup_heatmap(report.grid))  # without this workload's marker
