"""``python -m ui._server``: the modules the pages import are imported before the server listens."""

from __future__ import annotations

import ast

from ui._server import APP, REPO, page_imports


def test_every_top_level_import_of_the_app_and_its_pages_is_preloaded_but_ui_itself():
    names = page_imports()
    assert {"streamlit", "planner.decisions", "planner.reports.charts", "planner.scenario"} <= set(names)
    assert not [n for n in names if n.split(".")[0] == "ui"]  # its st.cache_data functions are made under the runtime
    fleet = ast.parse((REPO / "ui" / "fleet.py").read_text(encoding="utf-8"))
    imported = {n.module for n in fleet.body if isinstance(n, ast.ImportFrom) and not n.module.startswith("ui")}
    assert imported <= set(names) and APP.exists()


def test_the_catalog_facts_of_every_model_are_computed_before_the_first_visit():
    from planner.catalog import list_models, model_facts  # noqa: PLC0415
    from planner.catalog.model_facts import _facts  # noqa: PLC0415
    from planner.facts import clear_caches  # noqa: PLC0415
    from ui._server import warm_data  # noqa: PLC0415

    clear_caches()
    warm_data()
    assert _facts.cache_info().currsize >= len(list_models())
    first = list_models()[0]
    facts = model_facts(first)
    facts.weight_bytes_by_format.clear()  # a caller's copy: the remembered facts stay whole
    assert model_facts(first).weight_bytes_by_format


def test_the_served_app_does_not_watch_its_own_folder():
    """A file watcher over the repository reconciles every write below it (test databases, caches, a virtual
    environment): CPU taken from the visitors, and seconds per page on a loaded machine."""
    import tomllib  # noqa: PLC0415

    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["fileWatcherType"] == "none"
    assert config["server"]["runOnSave"] is False
