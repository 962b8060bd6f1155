"""Fleet & Quote: traffic -> replicas -> nodes -> cost on several node types; the cheapest option that meets
every objective, the options that miss apart, and the quote as a document."""

import streamlit as st

from planner import PlannerError
from planner.catalog import get_node, list_nodes
from planner.decisions import QUOTE_REQUESTS, Traffic, options_across_draws, options_speed_margins
from planner.defaults import TRAFFIC_DRAWS
from planner.launch import quoted_deployment
from planner.reports import draws_table, margins_table, misses_table, options_table, plain_text, quote_report
from planner.reports.charts import cost_by_node
from ui._background import (
    AHEAD_QUIET_S,
    browser_session,
    result_or_progress,
    server_activity,
    server_jobs,
    wait_until_quiet,
)
from ui._common import export_buttons, fleet_engine, guarded, scenario_link
from ui._fleet_plan import plan_by_node
from ui._frame import ensure_app_frame
from ui._launch import launch_section
from ui._save_quote import save_quote_widget
from ui._scenario import bind, current_scenario, lookup_model

ensure_app_frame()
st.title("Fleet & Quote")
st.caption(
    "How many nodes a workload needs, and what they cost, with and without the scenario's draft. "
    "Prices are dated on-demand medians from the price catalog; override them below."
)
st.caption(
    "From the sidebar this page uses the **target**, the **draft**, the **serving engine** and its **release**, "
    "and the **KV-cache dtype**. Tensor parallelism is chosen per option (every degree the model admits on each "
    "node type is tried), K likewise (the draft length that needs the fewest nodes), and the max model length is "
    "prompt + output tokens: the sidebar's node type, TP/PP, weights, K and max model length are not used here."
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
alpha = st.number_input(
    "Acceptance α of the speculator",
    0.0,
    1.0,
    value=None,
    step=0.01,
    placeholder="the speculator's own",
    help="Leave empty to use the speculator's own α (measured, published or the prior of its kind).",
    **bind("fleet_alpha", "fleet_alpha"),
)
node_ids = [n.id for n in list_nodes()]
chosen = st.multiselect("Node types to compare", node_ids, **bind("fleet_nodes", "fleet_nodes", list, tuple))
price = st.number_input(
    "Override $/GPU-hour for every node type (0 = catalog prices)",
    0.0,
    step=0.1,
    **bind("fleet_price", "fleet_usd_per_gpu_hour"),
)


def _views(plan, percentile):
    """The page's tables and chart of one plan (computed with the plan, off the script thread)."""
    meeting = options_table(plan.meeting, percentile) if plan.meeting else None
    return (
        meeting.parts()[0][1].formatted() if meeting else None,
        meeting.formatted() if meeting else None,
        misses_table(plan.missing, percentile).formatted() if plan.missing else None,
        cost_by_node(plan.quotes) if plan.quotes else None,
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
method = scenario.method if scenario else None
draft_id = scenario.draft if scenario and not method else None
speculator_label = draft_id or {"ngram": "n-gram lookup", "mtp": "MTP module"}.get(method or "")
key = (
    (
        scenario.target,
        (draft_id, method),
        traffic,
        tuple(chosen),
        tuple(fleet_engine(scenario).items()),
        scenario.kv_dtype,
    )
    if scenario and traffic and chosen
    else None
)


def _planned(key):
    """The plan of ``key`` and its views, computed in the background (ui/_background.py) under a progress bar,
    node type by node type (ui/_fleet_plan.py: the bar's steps). None while the work runs."""
    target_id, (draft_id, method), traffic, node_list, engine, kv_dtype = key
    target, draft = lookup_model(target_id), lookup_model(draft_id) if draft_id else None
    nodes = [get_node(n) for n in node_list]
    fields = {"draft": draft, "method": method, **dict(engine), "kv_dtype": kv_dtype}

    def work(job):
        sized = []

        def node_done(node, alone):
            sized.append((node.id, alone))
            job.show((tuple(sized), len(nodes)))
            job.step_done()

        plan = plan_by_node(
            target,
            nodes,
            traffic,
            before_node=lambda done, node: job.advance(f"Sizing fleets ({done} of {len(nodes)} node types done)..."),
            after_node=node_done,
            before_all=lambda: job.advance("Pricing the options..."),
            **fields,
        )
        return plan, _views(plan, traffic.percentile)

    models = tuple(m.model_dump_json() if m else None for m in (target, draft))  # an imported model by its config
    job = server_jobs().start((repr(key), models), work, steps=len(nodes) + 1, name="fleet plan")
    return result_or_progress(job, "Sizing fleets", _sized_so_far)


def _sized_so_far(partial) -> None:
    """Each node type's own plan as it is done, while the others are still being sized (a live server only)."""
    sized, total = partial
    st.caption(f"Sized so far: {len(sized)} of {total} node types. The comparison follows once every one is done.")
    st.markdown(
        "\n".join(
            f"- **{plain_text(node)}**: "
            + plain_text(alone.headline if not isinstance(alone, PlannerError) else f"cannot be planned: {alone}")
            for node, alone in sized
        )
    )


def _deployment_of(quoted):
    """The deployment of one quoted option, as the quote sized it."""
    fields = {"method": method, **dict(key[4]), "kv_dtype": key[5]}
    draft = lookup_model(draft_id) if draft_id else None
    return quoted_deployment(lookup_model(scenario.target), quoted, traffic, draft=draft, **fields)


def _check_on_request(plan, name: str, button: str, run, doing, progress: str, table, icon: str):
    """A check of every option that meets the objectives, run once asked (``button``: it simulates each option a few
    more times) in the background under a progress bar; the click is remembered for these inputs. ``run(plan,
    before_option)`` checks the options, ``doing(quoted)`` says what a step does; the recommended option's answer
    is said, then ``table`` of them all."""
    asked_key = repr(key)
    if st.button(button, key=f"fleet_{name}"):
        st.session_state[f"fleet_{name}_for"] = asked_key
    if st.session_state.get(f"fleet_{name}_for") != asked_key:
        return None
    count = len(plan.meeting)

    def work(job):
        def before_option(done, quoted):
            if done:
                job.step_done()
            job.advance(f"{doing(quoted)} ({done + 1} of {count})...")

        return run(plan, before_option)

    job = server_jobs().start((asked_key, name), work, steps=count, name=name)
    checks = guarded(lambda: result_or_progress(job, progress), f"the {name} check")
    if checks:
        best = checks[0]
        st.info(plain_text(f"{best[0].label}: {best[1].describe()}."), icon=icon)
        st.dataframe(table(checks).formatted(), hide_index=True)
    return checks


def _draws_check(plan):
    """Every option that meets the objectives sized again on other draws of the traffic, once asked."""
    st.subheader("How much each count owes to one draw of the traffic")
    st.caption(
        f"Each option is sized on one simulated draw of the traffic ({QUOTE_REQUESTS:,} Poisson requests). A high "
        "percentile of a latency that queues moves from one draw to the next, and the fewest replicas that meet it "
        f"with it: size every option on {TRAFFIC_DRAWS} draws to see how far, and the count that meets the "
        "objectives in every draw."
    )
    return _check_on_request(
        plan,
        "draws",
        f"Size every option on {TRAFFIC_DRAWS} draws of the traffic",
        lambda plan, before: options_across_draws(plan, _deployment_of, TRAFFIC_DRAWS, before_option=before),
        lambda quoted: f"Sizing {quoted.label} on {TRAFFIC_DRAWS} draws of the traffic",
        "Sizing on other draws of the traffic",
        draws_table,
        "🎲",
    )


def _margins_check(plan):
    """How much slower than estimated each option that meets the objectives may be, once asked."""
    st.subheader("How much slower than estimated each option may be")
    st.caption(
        "The planner's step times are within a few percent of published runs on most of them and further off on "
        "some. An option's speed margin is how much longer than estimated every engine step may take with its "
        "quoted replicas still meeting every objective and covering the offered rate. An option whose margin is "
        "below the planner's median error is sized again at that error: the replicas and nodes that still hold there."
    )
    return _check_on_request(
        plan,
        "margins",
        "Find each option's speed margin",
        lambda plan, before: options_speed_margins(plan, _deployment_of, before_option=before),
        lambda quoted: f"Slowing {quoted.label} down",
        "Finding each option's speed margin",
        margins_table,
        "🐢",
    )


planned = guarded(lambda: _planned(key)) if key else None
plan, views = planned if planned is not None else (None, None)
if not chosen:
    st.info("Pick at least one node type.")
if plan is not None:
    if plan.recommended is not None:
        st.success(plain_text(plan.headline), icon="💰")
    else:
        st.error(plain_text(plan.headline), icon="⛔")
    for flag in plan.flags:
        st.warning(plain_text(flag[:1].upper() + flag[1:] + "."), icon="⚠️")
    if plan.saving is not None:
        st.info(plain_text("On the same node type, " + plan.saving.describe() + "."), icon="📉")
    elif plan.speculation_note:
        st.info(plain_text(plan.speculation_note + "."), icon="📉")
    if plan.hardware_note:
        st.info(plain_text("Separately, the node type: " + plan.hardware_note + "."), icon="🖥️")
    if plan.alpha_basis and plan.alpha_basis != "no speculation":
        st.caption(plain_text("Acceptance: " + plan.alpha_basis + "."))
    decisive, details, misses, figure = views
    if decisive is not None:
        best = plan.recommended.option
        st.caption(
            f"Needs its last replica for: {plain_text(best.limited_by)}; "
            f"one replica is limited by {plain_text(best.replica_limited_by)}."
        )
        st.subheader("Options that meet every objective")
        st.dataframe(decisive, hide_index=True)
        with st.expander("Every figure of these options"):
            st.dataframe(details, hide_index=True)
    checks = _draws_check(plan) if decisive is not None else None
    margins = _margins_check(plan) if decisive is not None else None
    if misses is not None:
        st.subheader("Options that miss an objective")
        st.caption("Shown apart and not priced: each lists what it misses and by how much at the largest fleet tried.")
        st.markdown(
            "\n".join(
                f"- **{plain_text(q.label)}** misses " + "; ".join(plain_text(m.describe()) for m in q.option.misses)
                for q in plan.missing
            )
        )
        with st.expander("These options as a table"):
            st.dataframe(misses, hide_index=True)
    if figure is not None:
        st.plotly_chart(figure, key="fleet_cost")
    for reason in plan.unusable:
        st.warning(plain_text(reason))
    st.subheader("Export the quote")
    link = scenario_link(scenario.to_query())

    launched = None
    if plan.recommended is not None:
        launched = guarded(lambda: _deployment_of(plan.recommended), "the recommended option")

    def build_report():
        return quote_report(
            scenario.target,
            speculator_label,
            plan,
            scenario_link=link,
            launch=launched,
            draws=checks or None,
            margins=margins or None,
        )

    if browser_session():  # the document's charts drawn ahead of the first download click, in a quiet moment
        jobs, activity = server_jobs(), server_activity()

        def draw_charts(job):
            wait_until_quiet(jobs, activity, AHEAD_QUIET_S, ahead=True)
            return build_report().chart_images()

        jobs.start((repr(key), "charts"), draw_charts, steps=1, name="quote charts", ahead=True)
    export_buttons(build_report, "quote", "fleet")
    if plan.recommended is not None:
        launch_section(launched, None, "fleet", title=f"Launch the recommended option ({plan.recommended.label})")
    with st.expander("Assumptions"):
        for note in dict.fromkeys(n for q in plan.quotes for n in q.notes):
            st.write(f"- {plain_text(note)}")
    save_quote_widget(scenario, build_report)
