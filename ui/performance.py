"""Performance: does the draft make serving faster on this node, at this load, and by how much?"""

import streamlit as st

from planner.reports import VALUE_LABELS, for_customers, plain_text, speed_assumptions_table, step_times_table
from planner.speed import DATASET_NAMES, calibration_summary, speed_source, workload_for
from planner.units import fmt_counted
from ui._common import cached_chart, guarded
from ui._frame import ensure_app_frame
from ui._scenario import scenario_deployment
from ui._speed_common import cached_rate_sweep, speed_report_in_background, workload_fields

ensure_app_frame()
st.title("Performance")
st.caption(
    "How long each decoding step takes on these GPUs (memory bandwidth and compute, communication and engine "
    "overheads), with and without the speculator, and how many drafted tokens are accepted. K comes from the sidebar."
)

dep = scenario_deployment()
fields = workload_fields()
report = None
if dep is not None:
    if not dep.is_speculative:
        st.info("No draft selected: pick a draft model, a head or a method in the sidebar to estimate speculation.")
    else:
        # the sidebar's K is the user's K (for an MTP module too): the verdict is read there
        basis = guarded(lambda: workload_for(dep, k=dep.num_speculative_tokens, **fields))
        workload = basis[0] if basis else None
        if basis is not None:
            source, detail = basis[1], basis[2]
            st.caption(
                f"α {workload.resolved_alpha(workload.k):.2f}: "
                + (
                    "your value."
                    if source == "entered"
                    else f"this speculator's own ({VALUE_LABELS.get(source, source)}: "
                    f"{plain_text(for_customers(detail))})."
                )
            )
        done = guarded(lambda: speed_report_in_background(dep, workload)) if workload else None
        report, figures = done if done is not None else (None, {})

if report is not None and not report.runnable.ok:
    # a workload that cannot run gets no verdict and no speed figure: the reasons and the fixes that work
    st.error("**Cannot run**: " + "; ".join(map(plain_text, report.runnable.reasons)) + ".", icon="⛔")
    if report.runnable.fixes:
        st.markdown(
            "Changes that make it run, best first:\n" + "\n".join(f"- {plain_text(f)}" for f in report.runnable.fixes)
        )
    else:
        st.warning("No change searched makes it run: pick a larger node type or a smaller model.")
    report = None
if report is not None:
    est = report.estimate
    key = dep.model_dump_json() + workload.model_dump_json()
    show = {"recommend": st.success, "enable": st.info, "disable": st.warning}[est.verdict]
    show(f"**{est.verdict.upper()}**: {plain_text(est.verdict_reason)}.", icon="⚡")
    limits = est.thresholds
    st.caption(
        f"Recommended from a predicted speedup of {limits['recommend_min_speedup']:g}x, enabled above "
        f"{limits['enable_min_speedup']:g}x; acceptance below α {limits['warn_below_alpha']:g} rarely pays. "
        f"Source: {for_customers(est.thresholds_source)}"
    )
    for warning in est.warnings:
        st.warning(plain_text(warning), icon="⚠️")
    cols = st.columns(5)
    lengths_text = f"{est.prompt_tokens:,} + {est.output_tokens:,} tokens " + (
        "per request" if est.dataset == "fixed" else f"per request on average ({DATASET_NAMES[est.dataset]})"
    )
    served = (
        f"{est.batch_size:,} request(s) served back to back, {lengths_text}: every prompt is prefilled between or "
        "alongside the decodes (by a draft model or head too)"
    )
    cols[0].metric(
        "Speedup",
        f"{est.speedup:.2f}x",
        help=f"at K = {est.k}: output tokens served per second with the draft over those without; {served}",
    )
    cols[1].metric("Optimal K", f"{est.optimal_k}", f"{est.speedup_at_optimal_k:.2f}x")
    cols[2].metric("Break-even α", "none" if est.break_even_alpha is None else f"{est.break_even_alpha:.3f}")
    cols[3].metric(
        "TPOT",
        f"{est.spec_tpot_s * 1e3:.2f} ms",
        f"{(est.spec_tpot_s - est.baseline_tpot_s) * 1e3:+.2f} ms",
        delta_color="inverse",
    )
    cols[4].metric(
        "Throughput / replica",
        f"{est.throughput_tok_s:,.0f} tok/s",
        f"{est.throughput_tok_s - est.baseline_throughput_tok_s:+,.0f}",
        help=f"output tokens per second; {served}",
    )
    st.caption(
        f"α {est.alpha:.3f} at K {est.k}: {est.expected_tokens_per_step:.2f} tokens per step on average (vLLM "
        f"reports this as a draft acceptance rate of {est.draft_acceptance_rate:.1%}); a draft step costs "
        f"{est.steps.cost_ratio:.1%} of a target step; the decode steps alone would give "
        f"{est.decode_speedup:.2f}x, the prompts served between them bring it to {est.speedup:.2f}x; "
        f"{est.tok_s_per_sequence:,.1f} tok/s per sequence (without the draft "
        f"{est.baseline_tok_s_per_sequence:,.1f}); {est.replicas_per_node} replica(s) per node."
    )

    left, right = st.columns(2)
    with left:
        st.plotly_chart(figures["heatmap"], key="perf_heatmap")
    with right:
        st.plotly_chart(figures["batch"], key="perf_batch_chart")
    left, right = st.columns(2)
    with left:
        st.plotly_chart(figures["break_even"], key="perf_break_even")
    with right:
        st.plotly_chart(figures["latency"], key="perf_latency")

    with st.expander("Assumptions: the engine speed profile and its calibration"):
        st.write(f"Engine speed profile **{est.profile}**, calibrated against the public measurements below.")
        st.write(f"Step times: {guarded(lambda: speed_source(dep))}.")
        st.dataframe(speed_assumptions_table(est), hide_index=True)
        calibration = calibration_summary()
        for key in ("goal_rows", "prior_rows", "plain_rows", "serving_rows"):
            if key in calibration:
                st.write(f"- {for_customers(calibration[key])}")
        st.dataframe(
            step_times_table(est),
            hide_index=True,
            column_config={"ms": st.column_config.NumberColumn(format="%.3f")},
        )

if report is not None and dep is not None:
    st.subheader("Serving under load")
    if st.toggle("Simulate a replica under rising request rates", key="perf_serving", persist_state="page"):
        sweep = guarded(
            lambda: cached_rate_sweep(dep, est.alpha, est.k, est.prompt_tokens, est.output_tokens, est.dataset)
        )
        if sweep is not None:
            stop = (
                f"speculation stops paying at {sweep.crossover_rate:.2f} req/s"
                if sweep.crossover_rate is not None
                else "speculation pays at every rate swept"
            )
            st.caption(
                f"One replica ({fmt_counted(dep.gpus_per_replica, 'GPU')}), {lengths_text}, α {est.alpha:.2f}, "
                f"K {est.k}; plain capacity {sweep.capacity_requests_per_s:.2f} req/s; {stop}."
            )
            left, right = st.columns(2)
            with left:
                st.plotly_chart(cached_chart("throughput_latency_chart", key, sweep), key="perf_throughput_latency")
            with right:
                st.plotly_chart(cached_chart("occupancy_chart", key, sweep), key="perf_occupancy")
            st.plotly_chart(cached_chart("latency_vs_rate_chart", key, sweep), key="perf_latency_vs_rate")
