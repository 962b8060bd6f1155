"""Explore page: the frontier charts and table, the recommendation, a point made the scenario, exports."""

from __future__ import annotations

import json

from planner.catalog import get_model
from planner.catalog.importing import model_from_config
from tests.app.conftest import page

TIMEOUT_S = 300


def _run(at):
    return at.run(timeout=TIMEOUT_S)


def test_the_page_draws_two_frontier_charts_a_table_and_names_the_cheapest():
    at = _run(page("explore.py"))
    assert not at.exception
    charts = at.get("plotly_chart")
    assert len(charts) == 2
    headline = (at.success or at.warning)[0].value
    assert headline.startswith(("Cheapest configuration that meets every objective", "No configuration"))
    table = next(d.value for d in at.dataframe if "configuration" in d.value.columns)
    assert {"output tok/s per GPU", "output tok/s per user", "$ per million output tokens"} <= set(table.columns)
    assert len(table) >= 1 and table["frontier"].str.len().gt(0).all()
    # the Fleet workload is a request rate: the recommendation is sized for it as a quote is, and says how
    assert any(c.value.startswith("The recommendation is sized for ") for c in at.caption)
    # the recommendation is the first configuration offered as the scenario, on a frontier or not
    assert f" × {at.selectbox(key='explore_pick').options[0]}: " in headline


def test_making_a_frontier_point_the_scenario_changes_the_sidebar_and_the_link():
    at = _run(page("explore.py"))
    label = at.selectbox(key="explore_pick").value
    at.button(key="explore_apply").click()
    _run(at)
    assert not at.exception
    assert at.success[0].value.startswith("The scenario is now " + label)
    tp = int(label.split(" TP ")[1].split()[0])
    assert at.session_state["scenario_tp"] == tp
    assert at.session_state["scenario_max_num_seqs"] == int(label.split(" seqs")[0].rsplit(" ", 1)[1])


def test_colouring_by_node_type_redraws_both_charts_with_one_series_per_node_type():
    at = _run(page("explore.py"))

    def series(chart):
        spec = json.loads(chart.proto.spec)
        return {trace["name"] for trace in spec["data"] if trace["name"] != "frontier"}

    by_method = [series(c) for c in at.get("plotly_chart")]
    assert all("none" in names for names in by_method)
    at.radio(key="explore_colour").set_value("node type")
    _run(at)
    assert not at.exception
    nodes = {at.session_state["scenario_node"]}
    assert [series(c) for c in at.get("plotly_chart")] == [nodes, nodes]


def test_an_objective_nothing_meets_is_a_warning_not_an_error():
    at = page("explore.py")
    _run(at)
    at.number_input(key="explore_tpot").set_value(0.01)
    _run(at)
    assert not at.exception
    assert at.warning and at.warning[0].value.startswith("No configuration meets every objective")
    # every configuration lies beyond the objective's reach: the page says why, with the nearest one's floor
    assert "; no fleet of any meets them, the nearest being " in at.warning[0].value
    assert "one request alone takes " in at.warning[0].value


def test_exports_are_offered_csv_and_report_formats():
    at = _run(page("explore.py"))
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels[0] == "Frontier as CSV" and labels[1:] == ["PDF", "HTML", "XLSX", "Markdown", "JSON"]


def test_the_recommendation_is_sized_on_other_draws_of_the_traffic_when_asked():
    at = _run(page("explore.py"))
    assert not any("draws of the same traffic" in i.value for i in at.info), "checked only when asked"
    at.button(key="explore_draws").click()
    _run(at)
    assert not at.exception
    said = next(i.value for i in at.info if "draws of the same traffic" in i.value)
    assert said.startswith("Sized on 3 draws of the same traffic (400 simulated requests each), this option needs ")
    _run(at)  # kept for these inputs
    assert any("draws of the same traffic" in i.value for i in at.info)


def test_the_recommendations_speed_margin_is_found_when_asked():
    at = _run(page("explore.py"))
    assert not any("longer than estimated" in i.value for i in at.info), "checked only when asked"
    at.button(key="explore_margin").click()
    _run(at)
    assert not at.exception
    said = next(i.value for i in at.info if "longer" in i.value)
    assert said.startswith("Speed margin: the quoted ") and "the planner's median throughput error" in said
    _run(at)  # kept for these inputs
    assert any(i.value.startswith("Speed margin: the quoted ") for i in at.info)


def test_an_imported_target_is_searched_like_the_catalogs(tmp_path):
    """A model imported from a config.json (the sidebar's target) is searched like the catalog's: the page names
    the cheapest configuration of it, not an unknown model."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(get_model("Llama-3.1-8B").config, _name_or_path="acme/llama-8b")))
    at = page("explore.py")
    at.session_state["imported_models"] = {"acme/llama-8b": model_from_config(path)}
    _run(at)  # the sidebar now offers the imported model
    at.selectbox(key="scenario_target").select("acme/llama-8b")
    _run(at)
    assert not at.exception and not at.error, [e.value for e in at.error]
    headline = (at.success or at.warning)[0].value
    assert headline.startswith(("Cheapest configuration that meets every objective", "No configuration"))
    assert at.selectbox(key="explore_pick").options


def test_the_sidebars_engine_release_is_searched_stated_and_kept_by_a_point_made_the_scenario():
    at = page("explore.py")
    at.run(timeout=TIMEOUT_S)
    at.sidebar.text_input(key="scenario_engine_version").set_value("0.19.0")
    _run(at)
    assert not at.exception
    assert any("Engine: release 0.19.0: vLLM (V1 engine) from 0.10.0, before 0.20.0" in c.value for c in at.caption)
    at.button(key="explore_apply").click()
    _run(at)
    assert at.success[0].value.startswith("The scenario is now ")
    assert at.session_state["scenario_engine_version"] == "0.19.0"
