"""Sizing: will the target + draft fit this node with this engine, and what KV cache is left?"""

import streamlit as st

from pages._common import cached_concurrency_curve, cached_plan, guarded
from pages._frame import ensure_app_frame
from pages._scenario import scenario_deployment
from planner.reports import MIME, gpu_memory_table, sizing_report, suggestions_table
from planner.reports.charts import concurrency_curve, draft_cost_bars, gpu_memory_bar

ensure_app_frame()
st.title("Sizing")
st.caption("Per-GPU memory as the serving engine budgets it. GiB = 2^30 bytes, GB = 10^9 bytes.")

dep = scenario_deployment()
plan = guarded(lambda: cached_plan(dep)) if dep else None
if plan is not None:
    if plan.fits:
        st.success(
            f"Fits: {plan.kv_cache_tokens:,} KV-cache tokens per replica, "
            f"{plan.max_concurrency:g} concurrent requests at {plan.max_model_len:,} tokens.",
            icon="✅",
        )
    else:
        st.error("Does not fit: " + "; ".join(plan.problems[:2]), icon="⛔")
    if not plan.starts:
        st.error("Would not start: " + "; ".join(plan.start_problems), icon="🛑")
    for problem in plan.problems[(0 if plan.fits else 2) :]:
        if problem not in plan.start_problems:
            st.warning(problem, icon="⚠️")

    cols = st.columns(4)
    cols[0].metric("KV cache tokens / replica", f"{plan.kv_cache_tokens:,}")
    cols[1].metric(f"Max concurrency @ {plan.max_model_len:,}", f"{plan.max_concurrency:g}")
    cols[2].metric("KV bytes / token / GPU", f"{plan.kv_bytes_per_token_per_gpu:,} B")
    cols[3].metric("Draft's share of KV pool", f"{plan.draft_kv_share_frac:.1%}")

    if plan.suggestions:
        st.subheader("What would make it fit")
        st.dataframe(
            suggestions_table(plan),
            hide_index=True,
            column_config={"max_concurrency": st.column_config.NumberColumn(format="%.1f")},
        )

    st.subheader("One GPU's memory by component")
    st.plotly_chart(gpu_memory_bar(plan), key="sizing_memory_bar")
    st.dataframe(
        gpu_memory_table(plan.per_gpu),
        hide_index=True,
        column_config={
            "GiB": st.column_config.NumberColumn(format="%.2f"),
            "GB": st.column_config.NumberColumn(format="%.2f"),
        },
    )

    left, right = st.columns(2)
    with left:
        st.subheader("The draft's cost")
        if dep.draft is not None:
            st.plotly_chart(draft_cost_bars(plan), key="sizing_draft_cost")
            lost = (plan.max_concurrency_without_draft or 0) - plan.max_concurrency
            st.caption(
                f"The draft costs {lost:.1f} concurrent requests "
                f"({plan.draft_kv_bytes_per_token_per_gpu:,} of {plan.kv_bytes_per_token_per_gpu:,} "
                f"KV bytes per token, {plan.lookahead_slots_per_seq} lookahead slots per request)."
            )
        else:
            st.info("No draft selected: pick one in the sidebar to see what it costs.")
    with right:
        st.subheader("Concurrency against context length")
        lengths = (1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)
        points = guarded(lambda: cached_concurrency_curve(dep, lengths))
        if points:
            st.plotly_chart(concurrency_curve(points, plan.max_model_len), key="sizing_concurrency")

    st.subheader("Export this sizing")
    report = sizing_report(dep, plan)
    for col, fmt in zip(st.columns(4), ("xlsx", "html", "json", "md"), strict=True):
        data = guarded(lambda f=fmt: report.export(f))
        if data is not None:
            col.download_button(
                fmt.upper(), data, file_name=f"sizing.{fmt}", mime=MIME[fmt], key=f"sizing_export_{fmt}"
            )

    with st.expander("Assumptions and engine knobs"):
        for note in plan.assumptions:
            st.write(f"- {note}")
