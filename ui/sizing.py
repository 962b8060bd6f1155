"""Sizing: will the target + draft fit this node with this engine, and what KV cache is left?"""

import streamlit as st

from planner.reports import memory_components_view, plain_text, sizing_report, suggestions_view, whole_requests
from planner.scenario import EXAMPLES
from ui._common import cached_chart, cached_concurrency_curve, cached_plan, export_buttons, guarded, scenario_link
from ui._frame import ensure_app_frame
from ui._launch import launch_section
from ui._scenario import current_scenario, load_scenario, scenario_deployment

ensure_app_frame()


def _load_example(example) -> None:
    load_scenario(example)
    st.session_state["intro_done"] = True


st.title("Sizing")
with st.expander("What this app answers, and where to start", expanded=not st.session_state.get("intro_done")):
    st.markdown(
        "Speculative decoding runs a small **draft** model beside a large **target** model to serve tokens faster. "
        "This planner answers, for a draft/target pair on a GPU node: **does it fit** and how many requests run at "
        "once (this page), **how much faster** it serves (Performance), **which draft** to use (Draft Selection) "
        "and **how many nodes and dollars** a workload needs (Fleet & Quote). Set the scenario in the sidebar, or "
        "load a worked example; the page's link keeps the scenario, so a reload or a shared link shows the same."
    )
    for col, (name, example) in zip(st.columns(len(EXAMPLES)), EXAMPLES.items(), strict=True):
        col.button(name, key=f"example_{name}", width="stretch", on_click=_load_example, args=(example,))
st.caption("Per-GPU memory as the serving engine budgets it. GiB = 2^30 bytes, GB = 10^9 bytes.")

dep = scenario_deployment()
plan = guarded(lambda: cached_plan(dep)) if dep else None
key = dep.model_dump_json() if dep else ""
if plan is not None:
    if plan.fits:
        st.success(
            f"Fits: {plan.kv_cache_tokens:,} KV-cache tokens per replica, "
            f"{whole_requests(plan.max_concurrency):,} concurrent requests at {plan.max_model_len:,} tokens.",
            icon="✅",
        )
    problems = list(dict.fromkeys(plan.problems))  # each reason once
    shown = [] if plan.fits else problems[:2]
    if shown:
        st.error("Does not fit: " + "; ".join(map(plain_text, shown)), icon="⛔")
    refusals = [p for p in plan.start_problems if p not in shown]
    if refusals:
        st.error("Would not start: " + "; ".join(map(plain_text, refusals)), icon="🛑")
    for problem in problems:
        if problem not in shown and problem not in plan.start_problems:
            st.warning(plain_text(problem), icon="⚠️")

if plan is not None and not plan.fits:
    # nothing to measure in a plan that does not fit: the shortfall, then the changes that fit and start
    if plan.suggestions:
        st.subheader("Changes that fit and start, best first")
        st.dataframe(suggestions_view(plan), hide_index=True)
    else:
        st.warning(
            "No change searched makes it fit: more GPUs of this type, pipeline stages across up to 4 nodes, "
            "other GPU types, fp8 or int4 weights, an fp8 KV cache and serving without the draft were all tried.",
            icon="⛔",
        )
if plan is not None and plan.fits:
    cols = st.columns(4)
    cols[0].metric("KV cache tokens / replica", f"{plan.kv_cache_tokens:,}")
    cols[1].metric(
        "Concurrent requests",
        f"{whole_requests(plan.max_concurrency):,}",
        help=f"Whole requests of max model length ({plan.max_model_len:,} tokens) the KV cache holds at once",
    )
    cols[2].metric("KV cache per token per GPU", f"{plan.kv_bytes_per_token_per_gpu:,} bytes")
    cols[3].metric("Draft's share of KV pool", f"{plan.draft_kv_share_frac:.1%}")

    if plan.suggestions:
        st.subheader("Changes that make it start, best first")
        st.dataframe(suggestions_view(plan), hide_index=True)

if plan is not None:
    shortfall = None if plan.fits else cached_chart("memory_shortfall_bar", key, plan)
    if shortfall is not None:
        st.subheader("What is needed against what the GPU has")
        st.plotly_chart(shortfall, key="sizing_shortfall")
    else:
        st.subheader("One GPU's memory by component")
        st.plotly_chart(cached_chart("gpu_memory_bar", key, plan), key="sizing_memory_bar")
    st.dataframe(
        memory_components_view(plan.per_gpu),
        hide_index=True,
        column_config={
            "GiB (2^30 B)": st.column_config.NumberColumn(format="%.2f"),
            "GB (10^9 B)": st.column_config.NumberColumn(format="%.2f"),
        },
    )

if plan is not None and plan.fits:
    left, right = st.columns(2)
    with left:
        st.subheader("The draft's cost")
        if dep.speculator is not None:
            st.plotly_chart(cached_chart("draft_cost_bars", key, plan), key="sizing_draft_cost")
            lost = whole_requests(plan.max_concurrency_without_draft or 0) - whole_requests(plan.max_concurrency)
            st.caption(
                f"The draft costs {lost:,} concurrent requests "
                f"({plan.draft_kv_bytes_per_token_per_gpu:,} of {plan.kv_bytes_per_token_per_gpu:,} "
                f"KV bytes per token, {plan.lookahead_slots_per_seq} lookahead slots per request)."
            )
        elif dep.is_speculative:  # n-gram lookup
            lost = whole_requests(plan.max_concurrency_without_draft or 0) - whole_requests(plan.max_concurrency)
            st.info(
                f"n-gram lookup holds no weights and no KV cache of its own; its {plan.lookahead_slots_per_seq} "
                f"lookahead slots per request and larger CUDA graphs cost {lost:,} concurrent requests."
            )
        else:
            st.info("No draft selected: pick one in the sidebar to see what it costs.")
    with right:
        st.subheader("Concurrency against context length")
        lengths = (1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)
        points = guarded(lambda: cached_concurrency_curve(dep, lengths))
        if points:
            st.plotly_chart(
                cached_chart("concurrency_curve", key, points, plan.max_model_len), key="sizing_concurrency"
            )

if plan is not None:
    st.subheader("Export this sizing")
    link = scenario_link(current_scenario().to_query())
    export_buttons(lambda: sizing_report(dep, plan, scenario_link=link), "sizing", "sizing")
    launch_section(dep, plan, "sizing")

    with st.expander("Assumptions and engine knobs"):
        for note in plan.assumptions:
            st.write(f"- {plain_text(note)}")
