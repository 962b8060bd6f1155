"""Explore: every way to serve the target for the workload, the Pareto frontiers (throughput per GPU against
per user; cost per million tokens against TPOT), the cheapest configuration that meets every objective, and
any point made the scenario with one click."""

import plotly.graph_objects as go
import pyarrow as pa
import streamlit as st
from pydantic import ValidationError

from planner import PlannerError, Scenario
from planner.catalog import list_nodes
from planner.decisions.search import (
    DEFAULT_BATCH_CAPS,
    DEFAULT_DTYPES,
    DEFAULT_KS,
    METHODS,
    Objectives,
    SearchSpace,
    SearchWorkload,
    search,
)
from planner.defaults import TRAFFIC_DRAWS
from planner.engines import engine_release
from planner.errors import first_pydantic_error
from planner.reports import COLOUR_BY, frontier_charts, frontier_table, search_report
from ui._background import result_or_progress, server_jobs
from ui._common import export_buttons, guarded
from ui._flash import set_flash, take_flash
from ui._frame import ensure_app_frame
from ui._scenario import bind, current_scenario, imported_models, load_scenario

ensure_app_frame()
st.title("Explore")
st.caption(
    "Every configuration of the target on the chosen node types (TP, precision, speculation, K, batch cap) for "
    "the workload below: each planned in memory, screened with the step model, and the ones that can reach the "
    "frontier simulated. Figures are per replica with its batch cap of requests in flight. From the sidebar this "
    "page uses the **target**, the **serving engine** and, to start with, the **node type**; the rest of the space "
    "starts as `python -m planner search` searches it. A point you pick becomes the whole scenario."
)

scenario = current_scenario() or Scenario()
c1, c2, c3 = st.columns(3)
rate = c1.number_input("Requests per second", 0.0, step=1.0, **bind("explore_rate", "fleet_requests_per_s"))
prompt = c2.number_input("Prompt tokens", 0, step=128, **bind("explore_prompt", "fleet_prompt_tokens"))
output = c3.number_input("Output tokens", 0, step=64, **bind("explore_output", "fleet_output_tokens"))
o1, o2, o3 = st.columns(3)
tpot_ms = o1.number_input("TPOT objective (ms, 0 = none)", 0.0, step=5.0, **bind("explore_tpot", "fleet_tpot_slo_ms"))
ttft_ms = o2.number_input("TTFT objective (ms, 0 = none)", 0.0, step=50.0, **bind("explore_ttft", "fleet_ttft_slo_ms"))
percentile = o3.number_input(
    "Objectives hold at percentile", 1.0, 100.0, step=1.0, **bind("explore_percentile", "fleet_percentile")
)
with st.expander("Search space", expanded=False):
    s1, s2 = st.columns(2)
    nodes = s1.multiselect("Node types", [n.id for n in list_nodes()], default=[scenario.node], key="explore_nodes")
    methods = s2.multiselect("Speculation", list(METHODS), default=list(METHODS), key="explore_methods")
    s3, s4, s5 = st.columns(3)
    ks = s3.multiselect("Draft lengths K", list(range(1, 9)), default=list(DEFAULT_KS), key="explore_ks")
    dtypes = s4.multiselect(
        "Precisions (weights:KV)", list(dict.fromkeys([*DEFAULT_DTYPES, "int4-awq", "bf16:fp8"])),
        default=list(DEFAULT_DTYPES), key="explore_dtypes",
    )  # fmt: skip
    caps = s5.multiselect(
        "Batch caps (max_num_seqs)",
        sorted({1, 4, 512, *DEFAULT_BATCH_CAPS}),
        default=list(DEFAULT_BATCH_CAPS),
        key="explore_caps",
    )


def _explored(space: SearchSpace, workload: SearchWorkload, objectives: Objectives, colour: str):
    """The search and its tables, then its two frontier charts in ``colour``'s colouring, each computed in the
    background (ui/_background.py) once per inputs and shared read-only by every session; None while either runs (a
    progress bar is drawn). A colouring is drawn when first asked for, so an objective change waits for one pair."""

    def work(job):
        job.advance("Searching the design space...")
        result = search(space, workload, objectives, progress=job.advance)  # the bar's label follows its stages
        return result, _tables(result)

    key = ("explore", space.model_dump_json(), workload.model_dump_json(), objectives.model_dump_json())
    job = server_jobs().start(key, work, steps=1, name="search")
    searched = result_or_progress(job, "Searching the design space")
    if searched is None:  # still searching: the server reruns the page when it is done
        return None
    result, tables = searched

    def draw(job):
        job.advance("Drawing the frontiers...")
        return tuple(_DrawnFigure(fig) for fig in frontier_charts(result, COLOUR_BY[colour]))

    job = server_jobs().start((*key, colour), draw, steps=1, name="frontier charts")
    charts = result_or_progress(job, "Drawing the frontiers")
    return None if charts is None else (result, charts, tables)


class _DrawnFigure(go.Figure):
    """A chart drawn unchanged on every rerun: its dict (what ``st.plotly_chart`` serialises) is built once, not
    deep-copied and re-encoded each time."""

    def __init__(self, figure: go.Figure) -> None:
        super().__init__(figure)
        self.__dict__["_drawn"] = super().to_dict()

    def to_dict(self) -> dict:
        return self.__dict__["_drawn"]


def _tables(result):
    """The frontier table (as the CSV has it, and as Arrow for display), the first 500 configurations that do not
    fit or would not start (Arrow) and how many there are."""
    unfit = [{"configuration": p.label, "reason": p.reason} for p in result.points if not (p.fits and p.starts)]
    table = frontier_table(result)
    shown = pa.Table.from_pandas(table, preserve_index=False)
    first = pa.Table.from_pylist(unfit[:500]) if unfit else pa.table({"configuration": [], "reason": []})
    return table, shown, first, len(unfit)


def _inputs():
    space = SearchSpace.build(
        target=scenario.target, engines=(scenario.engine,), nodes=tuple(nodes), methods=tuple(methods),
        ks=tuple(ks), dtypes=tuple(dtypes), batch_caps=tuple(caps),
        imported=tuple(imported_models().values()),  # an imported target, and imported drafts to try
        engine_version=scenario.engine_version,  # the sidebar's release, as on the Sizing page
    )  # fmt: skip
    if not rate or not prompt or not output:
        raise PlannerError("requests per second, prompt and output tokens must be above 0", field="workload")
    try:  # a value the link allows but the search does not (a prompt over its limit) is named, not a crash
        workload = SearchWorkload(requests_per_s=rate, prompt_tokens=int(prompt), output_tokens=int(output))
        objectives = Objectives(
            tpot_slo_s=tpot_ms / 1e3 if tpot_ms else None, ttft_slo_s=ttft_ms / 1e3 if ttft_ms else None,
            percentile=percentile,
        )  # fmt: skip
    except ValidationError as exc:
        raise first_pydantic_error(exc) from None
    return space, workload, objectives


def _scenario_of(point, workload: SearchWorkload) -> Scenario:
    """The sidebar's scenario for a point: its configuration, the page inputs kept."""
    base = current_scenario() or Scenario()
    draft_free = point.method in ("ngram", "mtp")
    return Scenario.build(
        **{
            **base.model_dump(),
            "target": scenario.target,
            "draft": point.draft,
            "method": point.method if draft_free else None,
            "node": point.node,
            "tp": point.tp,
            "pp": point.pp,
            "draft_tp_one": False,
            "dtype": point.dtype,
            "draft_dtype": None,
            "kv_dtype": point.kv_dtype,
            "engine": point.engine,
            "engine_version": base.engine_version if point.engine == base.engine else None,  # the release searched
            "memory_fraction": None,
            "max_model_len": workload.max_model_len,
            "k": point.k or base.k,
            "max_num_batched_tokens": None,
            "max_num_seqs": point.max_num_seqs,
            "gpu_memory_gib": None,
        }
    )


def _make_scenario(point, workload: SearchWorkload) -> None:
    try:
        load_scenario(_scenario_of(point, workload))
    except PlannerError as exc:
        set_flash("explore_message", ("error", f"This point cannot be the scenario: {exc}"))
        return
    set_flash(
        "explore_message",
        (
            "success",
            f"The scenario is now {point.label} ({point.kv_cache_tokens:,} KV cache tokens per replica): every page "
            "and the link show it.",
        ),
    )


def _chart_selected(key: str, result, workload: SearchWorkload) -> None:
    selection = st.session_state.get(key)
    found = (selection or {}).get("selection", {}).get("points", []) if selection else []
    index = next((p.get("customdata") for p in found if p.get("customdata") is not None), None)
    if isinstance(index, list):
        index = index[0] if index else None
    if index is not None and 0 <= int(index) < len(result.points):
        _make_scenario(result.points[int(index)], workload)


def _draws_check(result, asked_key: str):
    """The recommendation's fleet sized again on other draws of the traffic, once asked (a button), in the
    background under a progress bar (as Fleet & Quote checks its options)."""
    label = f"Size it on {TRAFFIC_DRAWS} draws of the traffic"
    if st.button(label, key="explore_draws", help="Each draw is another seed of the simulated Poisson arrivals"):
        st.session_state["explore_draws_for"] = asked_key
    if st.session_state.get("explore_draws_for") != asked_key:
        return None
    job = server_jobs().start(
        (asked_key, "draws"), lambda job: result.recommendation_across_draws(TRAFFIC_DRAWS), 1, "traffic draws"
    )
    check = guarded(lambda: result_or_progress(job, "Sizing on other draws of the traffic"), "the draws check")
    if check is not None:
        st.info(check.describe() + ".", icon="🎲")
    return check


def _margin_check(result, asked_key: str):
    """How much slower than estimated the recommendation's fleet may be, once asked (a button), in the background
    under a progress bar (as Fleet & Quote checks its options)."""
    help_text = "How much longer than estimated every engine step may take with this fleet still meeting the objectives"
    if st.button("Find its speed margin", key="explore_margin", help=help_text):
        st.session_state["explore_margin_for"] = asked_key
    if st.session_state.get("explore_margin_for") != asked_key:
        return None
    job = server_jobs().start((asked_key, "margin"), lambda job: result.recommendation_speed_margin(), 1, "margin")
    margin = guarded(lambda: result_or_progress(job, "Finding its speed margin"), "the speed margin")
    if margin is not None:
        st.info(f"Speed margin: {margin.describe()}.", icon="🐢")
    return margin


inputs = guarded(_inputs, "the search inputs")
colour = st.session_state.get("explore_colour")
colour = colour if colour in COLOUR_BY else next(iter(COLOUR_BY))  # the radio below keeps it; first run: its default
explored = guarded(lambda: _explored(*inputs, colour), "the search") if inputs else None
if explored is not None:
    result, (throughput, cost), (table, shown, unfit, unfit_count) = explored
    space, workload, objectives = inputs
    message = take_flash("explore_message")
    if message:
        (st.success if message[0] == "success" else st.error)(message[1])
        st.page_link("ui/sizing.py", label="Open it on Sizing", icon="📐")
    (st.success if result.recommended else st.warning)(result.headline)
    if result.sizing is not None and result.sizing.note:
        st.caption(result.sizing.note[0].upper() + result.sizing.note[1:] + ".")
    fleet = result.recommended_fleet
    draws_checked = margin_checked = None
    if fleet is not None and fleet.meets_slo:
        draws_checked = _draws_check(result, repr(inputs))
        margin_checked = _margin_check(result, repr(inputs))
    st.caption(
        f"{len(result.points):,} configurations, {result.fitting_points:,} fit and start, {result.simulated:,} "
        f"simulated ({result.seconds:.1f} s). Objectives: {objectives.describe()}. Engine: "
        + "; ".join(engine_release(engine, space.release()) for engine in space.engines)
        + "."
    )
    st.radio("Colour by", list(COLOUR_BY), horizontal=True, key="explore_colour", persist_state="page")
    left, right = st.columns(2)
    for col, fig, name in ((left, throughput, "throughput"), (right, cost, "cost")):
        chart_key = f"explore_chart_{name}"
        col.plotly_chart(
            fig, key=chart_key, on_select=lambda k=chart_key: _chart_selected(k, result, workload),
            selection_mode="points",
        )  # fmt: skip
    st.subheader("Frontier")
    st.caption(
        "Each point's figures are those of replicas kept at their batch cap of requests in flight; at a request rate "
        "the recommendation above is sized for the traffic as Fleet & Quote sizes an option."
    )
    st.dataframe(shown, hide_index=True)
    if result.steps:
        st.markdown("\n".join(f"- {s.sentence}" for s in result.steps[:8]))
    # the recommendation first (sized for the traffic it need not be on a frontier drawn at the batch cap)
    picks = result.frontier
    if result.recommended is not None and all(p.index != result.recommended.index for p in picks):
        picks = [result.recommended, *picks]
    if picks:
        labels = [p.label for p in picks]
        chosen = st.selectbox("Configuration: the recommendation, then the frontier", labels, key="explore_pick")
        point = picks[labels.index(chosen)]
        st.button(
            "Make it the scenario", key="explore_apply", on_click=_make_scenario, args=(point, workload), type="primary"
        )
    with st.expander(f"Configurations that do not fit or would not start ({unfit_count:,})"):
        st.dataframe(unfit, hide_index=True)
        if unfit_count > 500:
            st.caption(
                f"The first 500 of {unfit_count:,}; every point and its reason: `python -m planner search --csv`."
            )
    st.download_button(
        "Frontier as CSV", lambda: table.to_csv(index=False).encode(), file_name="frontier.csv", mime="text/csv",
        key="explore_csv",
    )  # fmt: skip
    export_buttons(
        lambda: search_report(result, draws=draws_checked, margin=margin_checked), "frontier", key="explore_export"
    )
