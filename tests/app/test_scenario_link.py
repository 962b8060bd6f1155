"""The scenario lives in the link: read from st.query_params, written back on every change, kept across pages."""

from __future__ import annotations

import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from planner.scenario import QUERY_KEYS
from tests.app.conftest import REPO


def _app(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


def _metric(at, label_start: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label_start))


def _query(at) -> dict[str, str]:
    return {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def test_a_link_sets_the_scenario_and_a_sidebar_change_is_written_back():
    at = _app({"n": "1x-h100-sxm-80gb", "tp": "1", "k": "3"})
    assert not at.exception
    assert at.sidebar.selectbox(key="scenario_node").value == "1x-h100-sxm-80gb"
    assert at.sidebar.number_input(key="scenario_tp").value == 1
    assert any("Does not fit" in e.value for e in at.error)
    at.sidebar.selectbox(key="scenario_node").set_value("8x-h200-sxm-141gb")
    at.sidebar.number_input(key="scenario_tp").set_value(8)
    at.run()
    assert _query(at) == {"n": "8x-h200-sxm-141gb", "k": "3"}


def test_the_same_link_gives_the_same_numbers_in_a_new_session():
    first = _app()
    first.sidebar.selectbox(key="scenario_draft").set_value("meta-llama/Llama-3.2-3B")
    first.sidebar.number_input(key="scenario_max_model_len").set_value(32768)
    first.run()
    link = _query(first)
    assert link == {"d": "meta-llama/Llama-3.2-3B", "len": "32768"}
    second = _app(link)
    for label in ("KV cache tokens", "Concurrent requests"):
        assert _metric(second, label) == _metric(first, label)


def test_switching_pages_keeps_the_sidebar_and_the_page_inputs():
    at = _app()
    at.sidebar.selectbox(key="scenario_node").set_value("4x-l40s-48gb")
    at.sidebar.number_input(key="scenario_tp").set_value(4)
    at.sidebar.number_input(key="scenario_k").set_value(3)
    at.run()
    at.switch_page("ui/performance.py").run()
    at.number_input(key="perf_batch").set_value(16).run()
    for name in ("fleet.py", "catalog.py", "draft_selection.py", "sizing.py", "performance.py"):
        at.switch_page(f"ui/{name}").run()
        assert not at.exception, name
        assert at.sidebar.selectbox(key="scenario_node").value == "4x-l40s-48gb", name
        assert at.sidebar.number_input(key="scenario_tp").value == 4, name
        assert at.sidebar.number_input(key="scenario_k").value == 3, name
        assert _query(at) == {"n": "4x-l40s-48gb", "tp": "4", "k": "3", "b": "16"}, name
    assert at.number_input(key="perf_batch").value == 16


def test_a_rerun_that_carries_the_sessions_older_link_does_not_undo_a_newer_choice():
    """A busy browser may send a rerun (a name typed, a button clicked) before it has seen the link the last run
    wrote: that rerun carries the session's previous link, and applying it would silently revert the sidebar."""
    at = _app()
    at.sidebar.selectbox(key="scenario_node").set_value("8x-h200-sxm-141gb").run()
    assert _query(at) == {"n": "8x-h200-sxm-141gb"}
    at.sidebar.number_input(key="scenario_k").set_value(4).run()
    assert _query(at) == {"n": "8x-h200-sxm-141gb", "k": "4"}
    at.query_params.pop("k")  # the stale echo: the link the session wrote one choice ago
    at.run()
    assert at.sidebar.number_input(key="scenario_k").value == 4
    assert _query(at) == {"n": "8x-h200-sxm-141gb", "k": "4"}
    at.query_params["k"] = "3"  # a link this session has not seen is still applied
    at.run()
    assert at.sidebar.number_input(key="scenario_k").value == 3
    assert at.sidebar.selectbox(key="scenario_node").value == "8x-h200-sxm-141gb"


def test_fleet_inputs_travel_in_the_link():
    at = _app({"rps": "5", "fn": "8x-h100-sxm-80gb", "slo": "0"})
    at.switch_page("ui/fleet.py").run()
    assert not at.exception
    assert at.number_input(key="fleet_rate").value == 5.0
    assert at.multiselect(key="fleet_nodes").value == ["8x-h100-sxm-80gb"]
    at.number_input(key="fleet_prompt").set_value(2048).run()
    assert _query(at)["fpt"] == "2048"


def test_a_tampered_link_is_named_in_a_banner_and_replaced_by_defaults():
    at = _app({"tp": "abc", "zz": "1", "t": "no/such-model", "len": "9" * 500, "mf": "nan"})
    assert not at.exception
    banner = at.warning[0].value
    for part in ("tensor parallel size", "'zz'", "target model", "max model length", "engine memory fraction"):
        assert part in banner
    assert at.sidebar.number_input(key="scenario_tp").value == 8
    assert _query(at) == {}  # the link now holds the scenario shown: the defaults
    assert any("Fits" in s.value for s in at.success)


def test_a_max_length_above_the_models_context_blocks_the_results():
    at = _app({"len": "1048576"})
    assert not at.exception
    assert any("context window of 131,072" in e.value for e in at.error)
    assert not at.metric  # no numbers for an input the engine refuses


def test_an_invalid_sidebar_input_blocks_results_with_a_message():
    at = _app()
    at.sidebar.number_input(key="scenario_max_num_batched_tokens").set_value(8).run()  # 0 or at least 16
    assert not at.exception
    assert any("max_num_batched_tokens" in e.value for e in at.sidebar.error)
    assert any("Fix the scenario" in e.value for e in at.error)
    assert not at.metric


_keys = st.sampled_from([*QUERY_KEYS.values(), "x", "", "t[]", "tp%00"])
_values = st.one_of(
    st.text(alphabet=string.printable + "αβ€\u0000\u202e", max_size=60),
    st.sampled_from(["nan", "inf", "-1", "0", "1e309", "none", "9" * 400, "8x-h100-sxm-80gb,", "1.5", "true"]),
    st.integers(-(2**70), 2**70).map(str),
)


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_keys, _values, max_size=6), st.sampled_from(["sizing", "performance", "fleet"]))
def test_random_and_malformed_links_never_show_an_exception(query, page):
    at = _app(query)
    if page != "sizing":
        at.switch_page(f"ui/{page}.py").run()
    assert not at.exception
