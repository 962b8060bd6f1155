"""Fleet & Quote page: a quote per node type, the cheapest first, and report exports."""

from __future__ import annotations

from tests.app.conftest import page


def test_quote_renders_and_exports():
    at = page("fleet.py").run()
    assert not at.exception
    assert "Cheapest" in at.success[0].value
    assert any(i.value.startswith("Binding constraint") for i in at.info)
    table = at.dataframe[0].value
    assert {"yes", "no"} == set(table["speculation"])
    assert len(at.get("download_button")) == 4  # xlsx, html, json, md (PDF on demand)


def test_no_node_selected_is_a_message():
    at = page("fleet.py").run()
    at.multiselect(key="fleet_nodes").set_value([]).run()
    assert not at.exception
    assert "Pick at least one node type" in at.info[0].value
