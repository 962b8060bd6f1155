"""Fleet & Quote page: the cheapest option that meets every objective, misses apart, exports on demand."""

from __future__ import annotations

from tests.app.conftest import page


def _table(at, column: str):
    """The first table on the page with ``column`` (the options that meet: "Cost / month"; that miss: "Misses")."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_quote_names_the_cheapest_option_that_meets_every_objective():
    at = page("fleet.py").run()
    assert not at.exception
    assert at.success[0].value.startswith("Cheapest option that meets every objective")
    meeting = _table(at, "Cost / month")
    assert list(meeting.columns)[:3] == ["Option", "Nodes", "GPUs"]
    assert meeting["Cost / month"].str.match(r"^\$[\d,]+ / month$").all()  # formatted for people
    assert not meeting.isin(["nan", "None"]).any().any()
    # the recommended option is the first row, named in the headline
    assert meeting["Option"].iloc[0].split(",")[0] in at.success[0].value


def test_the_page_says_which_sidebar_fields_it_uses():
    at = page("fleet.py").run()
    text = " ".join(c.value for c in at.caption)
    assert "Tensor parallelism is chosen per option" in text and "not used here" in text


def test_a_tight_tpot_objective_sets_misses_apart_with_their_shortfall():
    at = page("fleet.py").run()
    at.number_input(key="fleet_slo").set_value(15.0).run()
    assert not at.exception
    misses = _table(at, "Misses")
    assert misses["Misses"].str.contains(r"TPOT .* ms against an objective of 15 ms \(\d+% over\)").all()
    if at.success:
        assert at.success[0].value.startswith("Cheapest option that meets every objective")
        meeting = _table(at, "Cost / month")
        assert not set(meeting["Option"]) & set(misses["Option"])
    else:
        assert at.error[0].value.startswith("No option meets every objective")


def test_exports_are_buttons_built_on_demand_pdf_first():
    at = page("fleet.py").run()
    buttons = [b for b in at.get("download_button") if not b.proto.label.startswith("Download the")]  # not Launch
    assert [b.proto.label for b in buttons] == ["PDF", "HTML", "XLSX", "Markdown", "JSON"]
    assert all(b.proto.deferred_file_id and not b.proto.url for b in buttons)  # built when clicked, not per rerun


def test_no_node_selected_is_a_message():
    at = page("fleet.py").run()
    at.multiselect(key="fleet_nodes").set_value([]).run()
    assert not at.exception
    assert "Pick at least one node type" in at.info[0].value


def test_a_prompt_longer_than_the_context_is_an_error_naming_the_field():
    at = page("fleet.py").run()
    at.number_input(key="fleet_prompt").set_value(1_000_000).run()
    assert not at.exception
    assert any("prompt_tokens" in e.value and "131,072" in e.value for e in at.error)
    assert not at.success


def test_the_counts_are_sized_on_other_draws_of_the_traffic_when_asked():
    at = page("fleet.py").run()
    assert not at.exception
    assert not any("draws of the same traffic" in i.value for i in at.info), "checked only when asked"
    at.button(key="fleet_draws").click().run()
    assert not at.exception
    said = next(i.value for i in at.info if "draws of the same traffic" in i.value)
    meeting = _table(at, "Cost / month")
    assert said.startswith(meeting["Option"].iloc[0] + ": Sized on 3 draws")  # the recommended option first
    draws = _table(at, "Replicas in each draw")
    assert list(draws["Option"]) == list(meeting["Option"])
    assert draws["Replicas in each draw"].str.fullmatch(r"[\d,]+, [\d,]+, [\d,]+").all()
    # a later run keeps the check (the button's click is remembered for these inputs)
    at.run()
    assert any("draws of the same traffic" in i.value for i in at.info)


def test_each_options_speed_margin_is_found_when_asked():
    at = page("fleet.py").run()
    assert not at.exception
    assert not any("longer than estimated" in i.value for i in at.info), "checked only when asked"
    at.button(key="fleet_margins").click().run()
    assert not at.exception
    meeting = _table(at, "Cost / month")
    said = next(i.value for i in at.info if "longer" in i.value and "the quoted" in i.value)
    assert said.startswith(meeting["Option"].iloc[0] + ": the quoted")  # the recommended option first
    margins = _table(at, "Speed margin")
    assert list(margins["Option"]) == list(meeting["Option"])
    assert margins["Speed margin"].str.fullmatch(r"\d+(\.\d)?%").all()
    assert margins["Against the planner's error"].str.contains("median error").all()
    at.run()  # a later run keeps the check (the button's click is remembered for these inputs)
    assert any("Speed margin" in d.value.columns for d in at.dataframe)


def test_the_sidebars_engine_release_sizes_the_quote_and_is_stated():
    at = page("fleet.py").run()
    at.multiselect(key="fleet_nodes").set_value(["8x-h100-sxm-80gb"]).run()
    newest = " ".join(m.value for m in at.markdown)
    assert "the newest profiled release: vLLM (V1 engine) from 0.34.0 on" in newest
    at.sidebar.text_input(key="scenario_engine_version").set_value("0.19.0").run()
    assert not at.exception
    older = " ".join(m.value for m in at.markdown)
    assert "release 0.19.0: vLLM (V1 engine) from 0.10.0, before 0.20.0 (profile vllm-v1-0.10)" in older
    assert "newest profiled release" not in older
