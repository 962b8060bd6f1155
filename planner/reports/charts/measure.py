"""Plotly figures and tables of measurement records and log checks (pure functions of their models).

Used by the Validation page; no figure computes a planner formula, it only draws what a record or
a :class:`planner.validation.log_check.LogCheck` holds.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from planner.measure.record import MeasurementRecord
from planner.reports.charts.legend import LEGEND_BELOW, LEGEND_MARGIN_PX
from planner.reports.screen import human_label
from planner.units import GIB
from planner.validation.log_check import LogCheck

PREDICTED, MEASURED = "#2b6cb0", "#dd6b20"
VERDICT_COLOURS = {"recommend": "#38a169", "enable": "#d69e2e", "disable": "#e53e3e"}
_LAYOUT = {"margin": {"l": 10, "r": 10, "t": 40, "b": LEGEND_MARGIN_PX}, "legend": LEGEND_BELOW}


def records_frame(records: list[MeasurementRecord]) -> pd.DataFrame:
    """One row per record: what the table on the Validation page shows."""
    rows = []
    for r in records:
        rows.append(
            {
                "id": r.id,
                "created_at": r.created_at,
                "gpu": r.gpu_label,
                "pair": r.pair,
                "backend": r.backend,
                "status": r.status,
                "dtype": r.dtype,
                "K": r.k,
                "mode": r.mode,
                "random weights": r.random_weights,
                "alpha": r.alpha,
                "tau": r.mean_accepted_len,
                "tok/s": r.tokens_per_s,
                "baseline tok/s": r.baseline_tokens_per_s,
                "speedup": r.speedup,
                "peak GiB": r.peak_memory_bytes / GIB if r.peak_memory_bytes else None,
                "peak err": r.errors_frac.get("peak_memory"),
                "speedup err": r.errors_frac.get("speedup"),
            }
        )
    return pd.DataFrame(rows)


def filter_records(
    records: list[MeasurementRecord], gpus: list[str] | None = None, pairs: list[str] | None = None
) -> list[MeasurementRecord]:
    return [r for r in records if (not gpus or r.gpu_label in gpus) and (not pairs or r.pair in pairs)]


def _bars(title: str, labels: list[str], predicted: list[float | None], measured: list[float | None], unit: str):
    fig = go.Figure()
    fig.add_bar(name="predicted", x=labels, y=predicted, marker_color=PREDICTED,
                hovertemplate=f"predicted %{{y:.3f}} {unit}<extra></extra>")  # fmt: skip
    fig.add_bar(name="measured", x=labels, y=measured, marker_color=MEASURED,
                hovertemplate=f"measured %{{y:.3f}} {unit}<extra></extra>")  # fmt: skip
    fig.update_layout(title=title, barmode="group", yaxis_title=unit, height=340, **_LAYOUT)
    return fig


def memory_comparison_bars(record: MeasurementRecord) -> go.Figure:
    """Predicted against measured GPU memory by component (GiB)."""
    memory, plan = record.memory, record.predicted.memory
    parts = [
        ("target weights", "target_weights_bytes", "target_weights_bytes"),
        ("draft weights", "draft_weights_bytes", "draft_weights_bytes"),
        ("KV cache", "kv_cache_bytes", "kv_cache_peak_bytes"),
        ("activation", "activation_bytes", "activation_peak_bytes"),
        ("non-torch", "non_torch_bytes", "non_torch_bytes"),
        ("peak", "peak_memory_bytes", "peak_memory_bytes"),
    ]

    def gib(obj, name):
        value = getattr(obj, name, None) if obj is not None else None
        return value / GIB if value is not None else None

    return _bars(
        "GPU memory: planner (engine hf) vs measured",
        [label for label, _, _ in parts],
        [gib(plan, p) for _, p, _ in parts],
        [gib(memory, m) for _, _, m in parts],
        "GiB",
    )


def speed_comparison_bars(record: MeasurementRecord) -> go.Figure:
    """TPOT and TTFT with and without the draft (ms), predicted against measured."""
    speed = record.predicted.speed if record.predicted.speed_comparable else None
    spec, base = record.speculative, record.baseline
    labels = ["TPOT with draft", "TPOT baseline", "TTFT with draft", "TTFT baseline"]

    def ms(value):
        return value * 1000 if value is not None else None

    predicted = (
        [ms(speed.spec_tpot_s), ms(speed.baseline_tpot_s), ms(speed.spec_ttft_s), ms(speed.baseline_ttft_s)]
        if speed
        else [None] * 4
    )
    measured = [ms(spec.tpot_s), ms(base.tpot_s), ms(spec.ttft_s), ms(base.ttft_s)] if spec and base else [None] * 4
    return _bars("Latency: planner vs measured", labels, predicted, measured, "ms")


def memory_timeline(record: MeasurementRecord) -> go.Figure:
    """The NVML timeline: device and process memory of each GPU over the run (GiB)."""
    fig = go.Figure()
    by_gpu: dict[int, list] = {}
    for s in record.nvml.samples:
        by_gpu.setdefault(s.gpu_index, []).append(s)
    for gpu, samples in sorted(by_gpu.items()):
        t = [s.t_s for s in samples]
        fig.add_scatter(x=t, y=[s.device_used_bytes / GIB for s in samples], mode="lines",
                        name=f"GPU {gpu} device used")  # fmt: skip
        if any(s.process_used_bytes is not None for s in samples):
            fig.add_scatter(
                x=t,
                y=[s.process_used_bytes / GIB if s.process_used_bytes is not None else None for s in samples],
                mode="lines",
                name=f"GPU {gpu} this process",
            )
    if record.predicted.memory is not None and by_gpu:
        fig.add_hline(y=record.predicted.memory.peak_memory_bytes / GIB, line_dash="dash", line_color=PREDICTED,
                      annotation_text="planner peak", annotation_position="top left")  # fmt: skip
    fig.update_layout(title="GPU memory over the run (NVML)", xaxis_title="seconds", yaxis_title="GiB", height=340,
                      **_LAYOUT)  # fmt: skip
    return fig


def acceptance_by_position_bars(record: MeasurementRecord) -> go.Figure:
    """Measured acceptance at each draft position, beside Leviathan's i.i.d. α^(i+1) at the same τ."""
    stats = record.acceptance
    fig = go.Figure()
    if stats is None or not stats.acceptance_by_position:
        fig.update_layout(title="No speculative step was measured", height=300, **_LAYOUT)
        return fig
    positions = [f"pos {i}" for i in range(len(stats.acceptance_by_position))]
    fig.add_bar(name="measured (unconditional)", x=positions, y=stats.acceptance_by_position, marker_color=MEASURED)
    if stats.alpha_from_tau is not None:
        iid = [stats.alpha_from_tau ** (i + 1) for i in range(len(positions))]
        fig.add_scatter(name=f"i.i.d. α^(i+1), α = {stats.alpha_from_tau:.3f}", x=positions, y=iid,
                        mode="lines+markers", line_color=PREDICTED)  # fmt: skip
    fig.update_layout(title="Acceptance by draft position", yaxis_title="fraction of steps", yaxis_range=[0, 1.05],
                      height=320, **_LAYOUT)  # fmt: skip
    return fig


def task_acceptance_bars(record: MeasurementRecord) -> go.Figure:
    """α per task, coloured by the verdict, with the disable and recommend thresholds drawn."""
    verdicts = list(record.verdict_by_task.values())
    fig = go.Figure()
    fig.add_bar(
        x=[v.task for v in verdicts],
        y=[v.alpha or 0.0 for v in verdicts],
        marker_color=[VERDICT_COLOURS.get(v.verdict, "#a0aec0") for v in verdicts],
        text=[v.verdict for v in verdicts],
        textposition="outside",
        name="α",
    )
    if verdicts:
        low, high = verdicts[0].disable_below_alpha, verdicts[0].recommend_min_alpha
        fig.add_hline(y=low, line_dash="dot", line_color=VERDICT_COLOURS["disable"],
                      annotation_text=f"disable below {low:.0%}")  # fmt: skip
        fig.add_hline(y=high, line_dash="dot", line_color=VERDICT_COLOURS["recommend"],
                      annotation_text=f"recommend from {high:.0%}")  # fmt: skip
    fig.update_layout(title="Acceptance per task", yaxis_title="α (first-position acceptance)",
                      yaxis_range=[0, 1.1], height=320, showlegend=False, **_LAYOUT)  # fmt: skip
    return fig


def log_check_frame(check: LogCheck) -> pd.DataFrame:
    """Logged against planner, one row per quantity (GiB for byte quantities)."""
    rows = []
    for row in check.rows:
        scale = GIB if row.unit == "bytes" else 1
        rows.append(
            {
                "quantity": human_label(row.quantity),
                "unit": "GiB" if row.unit == "bytes" else row.unit,
                "logged": row.logged / scale if row.logged is not None else None,
                "planner": row.predicted / scale if row.predicted is not None else None,
                "error": row.error_frac,
            }
        )
    return pd.DataFrame(rows)


def log_check_bars(check: LogCheck) -> go.Figure:
    """Logged against planner memory components (GiB)."""
    rows = [r for r in check.rows if r.unit == "bytes" and r.quantity != "gpu_memory_total"]
    return _bars(
        "Start-up log vs planner (per GPU)",
        [r.quantity.replace("_", " ") for r in rows],
        [r.predicted / GIB if r.predicted is not None else None for r in rows],
        [r.logged / GIB if r.logged is not None else None for r in rows],
        "GiB",
    ).update_traces(selector={"name": "measured"}, name="logged")
