"""A launch says when the planner priced its steps from kernels measured with another release of its engine."""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_model, get_node
from planner.deployment import Deployment
from planner.launch import kernels_note, launch_config
from planner.memory import plan_memory
from planner.reports import sizing_report
from planner.speed.kernels import aiconfigurator_tables as tables_module

MEASURED = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=4)
INSTALLED = tables_module.systems_dir() is not None


@pytest.mark.skipif(not INSTALLED, reason="aiconfigurator-core is not installed here")
def test_another_release_than_the_tables_is_said_in_the_command_the_config_and_the_appendix():
    tables = tables_module.kernel_tables(MEASURED.gpu.id, MEASURED.engine)
    config = launch_config(MEASURED)
    assert tables is not None and config.release != tables.version, "the newest recorded release is not the tables'"
    said = config.kernels_note
    assert said == (
        f"the planner prices these steps from kernels measured with vLLM {tables.version} where its tables cover "
        f"them; {config.release}'s kernels may run at another speed"
    )
    assert f"# note: {said}" in config.command and f"# note: {said}" in config.docker
    appendix = sizing_report(MEASURED, plan_memory(MEASURED)).to_json()["sections"]
    intro = next(s["text"] for s in appendix if s["title"] == "Appendix: launch configuration")
    assert intro.endswith(f"Note: {said}.")
    assert kernels_note(MEASURED, tables.version) is None  # the tables' own release: nothing to say


def test_steps_priced_on_the_roofline_say_nothing_of_releases():
    on_l4 = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-l4-24gb"), tp=1, max_model_len=8192)
    assert launch_config(on_l4).kernels_note is None  # no measured tables for the L4
    with tables_module.roofline_only():  # the package missing: every step on the roofline
        assert kernels_note(MEASURED, "0.21.0") is None
