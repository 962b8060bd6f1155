"""Fleet & Quote: traffic -> replicas -> nodes -> cost on several node types, exported as a report."""

import streamlit as st

from pages._common import guarded
from pages._frame import ensure_app_frame
from pages._save_quote import save_quote_widget
from pages._scenario import bind, current_scenario, lookup_model
from planner.catalog import get_node, list_nodes
from planner.decisions import Traffic, compare_nodes
from planner.reports import MIME, quote_report, quotes_table
from planner.reports.charts import cost_by_node

ensure_app_frame()
st.title("Fleet & Quote")
st.caption(
    "How many nodes a workload needs, and what they cost, with and without the scenario's draft. "
    "Prices are dated on-demand medians (data/prices.json); override them below."
)

scenario = current_scenario()
c1, c2, c3, c4 = st.columns(4)
# Each input is bound to the shared scenario (bind): it survives page switches and travels in the link.
rate = c1.number_input("Requests per second", 0.0, step=1.0, **bind("fleet_rate", "fleet_requests_per_s"))
prompt = c2.number_input("Prompt tokens", 0, step=128, **bind("fleet_prompt", "fleet_prompt_tokens"))
output = c3.number_input("Output tokens", 0, step=64, **bind("fleet_output", "fleet_output_tokens"))
slo_ms = c4.number_input("TPOT objective (ms, 0 = none)", 0.0, step=5.0, **bind("fleet_slo", "fleet_tpot_slo_ms"))
t1, t2 = st.columns(2)
ttft_ms = t1.number_input("TTFT objective (ms, 0 = none)", 0.0, step=50.0, **bind("fleet_ttft", "fleet_ttft_slo_ms"))
percentile = t2.number_input(
    "Objectives hold at percentile", 1.0, 100.0, step=1.0, **bind("fleet_percentile", "fleet_percentile")
)
alpha = st.slider("Assumed acceptance α of the draft", 0.0, 1.0, step=0.01, **bind("fleet_alpha", "fleet_alpha"))
node_ids = [n.id for n in list_nodes()]
chosen = st.multiselect("Node types to compare", node_ids, **bind("fleet_nodes", "fleet_nodes", list, tuple))
price = st.number_input(
    "Override $/GPU-hour for every node type (0 = catalog prices)",
    0.0,
    step=0.1,
    **bind("fleet_price", "fleet_usd_per_gpu_hour"),
)


@st.cache_data(show_spinner="Sizing fleets...", max_entries=32)
def _quotes(target_id, draft_id, traffic, node_list, engine, kv_dtype):
    target = lookup_model(target_id)
    draft = lookup_model(draft_id) if draft_id else None
    return compare_nodes(
        target, [get_node(n) for n in node_list], traffic, draft=draft, engine=engine, kv_dtype=kv_dtype
    )


traffic = guarded(
    lambda: Traffic.build(
        requests_per_s=rate,
        prompt_tokens=int(prompt),
        output_tokens=int(output),
        tpot_slo_s=slo_ms / 1e3 if slo_ms else None,
        ttft_slo_s=ttft_ms / 1e3 if ttft_ms else None,
        percentile=percentile,
        alpha=alpha,
        usd_per_gpu_hour=price or None,
    )
)
draft_id = scenario.draft if scenario else None
engine = scenario.engine if scenario and scenario.engine != "hf" else "vllm"
result = (
    guarded(lambda: _quotes(scenario.target, draft_id, traffic, tuple(chosen), engine, scenario.kv_dtype))
    if scenario and traffic and chosen
    else None
)
if not chosen:
    st.info("Pick at least one node type.")
if result is not None:
    quotes, unusable = result
    if quotes:
        best = quotes[0]
        option = best.chosen
        cost = f"${option.usd_per_month:,.0f} per month" if option.usd_per_month else "no catalog price"
        st.success(
            f"Cheapest: {option.nodes} x {best.node} (TP {best.tp}), {option.gpus} GPUs, {cost}"
            + (f"; speculation saves {best.savings_frac:.0%} of GPUs" if best.savings_frac else ""),
            icon="💰",
        )
        st.info(
            f"Binding constraint on {best.node}: {option.limited_by}; each replica is limited by "
            f"{option.replica_limited_by} at {option.requests_per_s_per_replica:.2f} req/s "
            f"(p{traffic.percentile:g} TTFT {option.ttft_s * 1e3:,.0f} ms, TPOT {option.tpot_s * 1e3:.1f} ms).",
            icon="📌",
        )
        st.dataframe(quotes_table(quotes), hide_index=True)
        st.plotly_chart(cost_by_node(quotes), key="fleet_cost")
    for reason in unusable:
        st.warning(reason)
    report = quote_report(scenario.target, draft_id, traffic, quotes, unusable)
    st.subheader("Export")
    cols = st.columns(5)
    for col, fmt in zip(cols, ("xlsx", "html", "json", "md"), strict=False):
        data = guarded(lambda f=fmt: report.export(f))
        if data is not None:
            col.download_button(fmt.upper(), data, file_name=f"quote.{fmt}", mime=MIME[fmt], key=f"fleet_export_{fmt}")
    if cols[4].button("Build PDF", key="fleet_build_pdf", help="prints the HTML report with headless Chromium"):
        pdf = guarded(lambda: report.export("pdf"))
        if pdf is not None:
            cols[4].download_button("PDF", pdf, file_name="quote.pdf", mime=MIME["pdf"], key="fleet_export_pdf")
    with st.expander("Assumptions"):
        for note in report.assumptions:
            st.write(f"- {note}")
    save_quote_widget(scenario, report)
