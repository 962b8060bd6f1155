"""UI-only helpers of the Performance page: the workload widgets and the cached core call.

Nothing here computes a formula: the widgets gather a ``SpeedWorkload`` and ``speed_report_in_background``
calls ``planner.speed.estimate.speed_report`` once per distinct (deployment, workload), off the script thread.
"""

from __future__ import annotations

import streamlit as st

from planner.speed import (
    DRAWN_DATASETS,
    RateSweep,
    SpeedReport,
    SpeedWorkload,
    datasets,
    rate_sweep,
    speculation_rules,
    speed_report,
)
from ui._background import result_or_progress, server_jobs
from ui._scenario import bind

#: The Performance page's choice of request lengths (label -> ``SpeedWorkload.dataset``).
LENGTH_CHOICES = {"Fixed": "fixed", "ShareGPT-like": "sharegpt", "MLPerf OpenOrca": "mlperf-openorca"}
ACCEPTANCE_MODES = {
    "α (per-token acceptance, Leviathan)": "alpha",
    "τ (mean accepted length: vLLM mean acceptance length, SGLang accept len, NVIDIA acceptance rate)": (
        "mean_accepted_len"
    ),
    "ρ (vLLM V1 'Avg Draft acceptance rate', a fraction)": "draft_acceptance_rate",
}


def speed_report_in_background(dep, workload: SpeedWorkload) -> tuple[SpeedReport, dict] | None:
    """``speed_report(dep, workload)`` and its four charts (by name), computed once per (deployment, workload) in
    the background under a progress bar (ui/_background.py); None while the work runs."""

    def work(job):
        from planner.reports import charts  # noqa: PLC0415 (plotly: with the first estimate, off the script thread)

        job.advance("Estimating the speedup...")
        report = speed_report(dep, workload)
        figures = {}
        if report.runnable.ok:  # a workload that cannot run gets no figure
            est = report.estimate
            figures = {
                "heatmap": charts.speedup_heatmap(report.grid, est.alpha, est.k),
                "batch": charts.batch_speedup_chart(report.sweep),
                "break_even": charts.break_even_chart(report.sweep),
                "latency": charts.latency_chart(est),
            }
        return report, figures

    key = ("performance", dep.model_dump_json(), workload.model_dump_json())
    return result_or_progress(server_jobs().start(key, work, steps=1, name="speed estimate"), "Estimating the speedup")


@st.cache_data(show_spinner="Simulating the replica...", max_entries=16)
def cached_rate_sweep(dep, alpha: float, k: int, prompt_tokens: int, output_tokens: int, dataset: str) -> RateSweep:
    return rate_sweep(dep, alpha=alpha, k=k, prompt_tokens=prompt_tokens, output_tokens=output_tokens, dataset=dataset)


def _optional_float(value) -> float | None:
    return None if value is None else float(value)


def _or(default: int):
    """A bound field's widget value: the field's, or ``default`` when the scenario leaves it to the rules."""
    return lambda value: int(default if value is None else value)


def workload_fields() -> dict:
    """Draw the page's workload inputs (main area) and return the fields of ``planner.speed.workload_for``
    (an empty acceptance: the speculator's own α)."""
    defaults = speculation_rules().default_workload
    labels = {mode: label for label, mode in ACCEPTANCE_MODES.items()}
    mode_label = st.selectbox(
        "Acceptance given as",
        list(ACCEPTANCE_MODES),
        **bind("perf_acceptance_mode", "acceptance_mode", labels.get, ACCEPTANCE_MODES.get),
    )
    mode = ACCEPTANCE_MODES[mode_label]
    cols = st.columns(4)
    value = cols[0].number_input(
        mode_label.split(" (")[0],
        min_value=0.0,
        value=None,
        step=0.01,
        format="%.3f",
        placeholder="the speculator's own",
        help="Leave empty to use the speculator's own α (measured, published or the prior of its kind). "
        "α and ρ are fractions from 0 to 1; τ lies from 1 to K+1.",
        **bind(f"perf_{mode}", "acceptance", lambda v: None if v is None else float(v), _optional_float),
    )
    batch = cols[1].number_input(
        "Batch size (sequences)", 0, step=1, **bind("perf_batch", "batch_size", _or(defaults.batch_size), int)
    )
    labels = {dataset: label for label, dataset in LENGTH_CHOICES.items()}
    drawn = " ".join(f"{labels[key]}: {datasets()[key].description}." for key in DRAWN_DATASETS)
    dataset = LENGTH_CHOICES[
        st.radio(
            "Request lengths",
            list(LENGTH_CHOICES),
            horizontal=True,
            help=f"Fixed: every request has the lengths below. {drawn} Each step is priced over the prompt lengths it "
            "may meet.",
            **bind("perf_lengths", "dataset", labels.get, LENGTH_CHOICES.get),
        )
    ]
    fields = {mode: None if value is None else float(value), "batch_size": int(batch), "dataset": dataset}
    if dataset != "fixed":  # the dataset's own mean lengths
        spec = datasets()[dataset]
        cols[2].metric("Prompt tokens (mean)", f"{spec.prompt.mean_tokens:,.0f}")
        cols[3].metric("Output tokens (mean)", f"{spec.output.mean_tokens:,.0f}")
        return fields
    prompt = cols[2].number_input(
        "Prompt tokens", 0, step=128, **bind("perf_prompt", "prompt_tokens", _or(defaults.prompt_tokens), int)
    )
    output = cols[3].number_input(
        "Output tokens", 0, step=64, **bind("perf_output", "output_tokens", _or(defaults.output_tokens), int)
    )
    return fields | {"prompt_tokens": int(prompt), "output_tokens": int(output)}
