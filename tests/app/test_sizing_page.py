"""Sizing page: verdict, metrics, charts, suggestions, and the shared scenario."""

from __future__ import annotations

from tests.app.conftest import page


def _metric(at, label_start: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label_start))


def test_default_scenario_fits_and_shows_every_part():
    at = page("sizing.py").run()
    assert not at.exception
    assert at.success and "Fits" in at.success[0].value
    assert int(_metric(at, "KV cache tokens").replace(",", "")) > 100_000
    assert len(at.get("plotly_chart")) == 3  # memory bar, draft cost, concurrency curve
    assert "KV cache" in set(at.dataframe[0].value["Component"])
    concurrency = _metric(at, "Concurrent requests")
    assert concurrency.replace(",", "").isdigit()  # whole requests, never 116.63
    assert concurrency in at.success[0].value


def test_70b_on_one_h100_does_not_fit_and_suggests():
    at = page("sizing.py").run()
    at.sidebar.selectbox(key="scenario_node").set_value("1x-h100-sxm-80gb")
    at.sidebar.number_input(key="scenario_tp").set_value(1)
    at.run()
    assert not at.exception
    assert "Does not fit" in at.error[0].value
    suggestions = at.dataframe[0].value
    assert len(suggestions) and (suggestions["GPUs per replica"] >= 1).all()
    # more H100s at a higher TP: vLLM 0.34 (the newest profiled release) holds it on two, earlier releases on four
    assert suggestions["Change"].str.contains(r"GPUs on 8x-h100-sxm-80gb at TP [248]\b").any()
    # the shortfall, not a negative KV cache drawn as a bar
    charts = at.get("plotly_chart")
    assert any("Short by" in c.proto.spec and "GiB per GPU" in c.proto.spec for c in charts)
    assert not any("KV cache" in c.proto.spec and "stage" in c.proto.spec for c in charts)
    components = at.dataframe[1].value
    assert (components["GiB (2^30 B)"] >= 0).all()
    assert components["Component"].str.contains("short by").any()


def test_removing_the_draft_raises_concurrency():
    at = page("sizing.py").run()
    with_draft = int(_metric(at, "Concurrent requests").replace(",", ""))
    at.sidebar.selectbox(key="scenario_draft").set_value("(no draft)")
    at.run()
    assert int(_metric(at, "Concurrent requests").replace(",", "")) > with_draft
    assert at.info  # the draft-cost panel explains there is no draft


def test_impossible_tp_is_a_message_not_a_traceback():
    at = page("sizing.py").run()
    at.sidebar.number_input(key="scenario_tp").set_value(3)
    at.run()
    assert not at.exception
    assert "tp = 3" in at.error[0].value


def test_the_first_screen_loads_a_worked_example_in_one_click():
    at = page("sizing.py").run()
    at.sidebar.selectbox(key="scenario_node").set_value("1x-l4-24gb").run()
    at.button(key="example_70B + 3B on 8x H100").click().run()
    assert not at.exception
    assert at.sidebar.selectbox(key="scenario_draft").value == "meta-llama/Llama-3.2-3B"
    assert at.sidebar.selectbox(key="scenario_node").value == "8x-h100-sxm-80gb"
    assert at.query_params["d"] in ("meta-llama/Llama-3.2-3B", ["meta-llama/Llama-3.2-3B"])
    assert "Fits" in at.success[0].value


def test_sizing_exports_every_format_on_demand():
    at = page("sizing.py").run()
    buttons = [b for b in at.get("download_button") if not b.proto.label.startswith("Download the")]  # not Launch
    assert [b.proto.label for b in buttons] == ["PDF", "HTML", "XLSX", "Markdown", "JSON"]
    assert all(b.proto.deferred_file_id and not b.proto.url for b in buttons)  # built when clicked, not per rerun
