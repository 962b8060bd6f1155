"""The Launch section of the Sizing and Fleet pages: the engine command (st.code has a copy button), the docker
line, the Kubernetes manifest with a download; a plan that does not fit shows the reason instead."""

from __future__ import annotations

import yaml

from planner import Deployment, get_model, get_node, launch_config
from tests.app.conftest import page
from tests.conftest import ENGINE_LOGS


def _codes(at) -> list[str]:
    return [c.value for c in at.code]


def test_sizing_shows_the_launch_command_of_the_plan():
    at = page("sizing.py").run()
    assert not at.exception
    codes = _codes(at)
    command = next(c for c in codes if "\nvllm serve " in c or "sglang.launch_server" in c or "trtllm-serve" in c)
    assert "--gpu-memory-utilization" in command or "--mem-fraction-static" in command
    manifest = next(c for c in codes if "kind: Deployment" in c)
    kinds = [d["kind"] for d in yaml.safe_load_all(manifest) if d]
    assert "Service" in kinds
    assert any(b.proto.label == "Download the manifest" for b in at.get("download_button"))


def test_sizing_launch_says_why_when_the_plan_does_not_fit():
    at = page("sizing.py").run()
    at.sidebar.selectbox(key="scenario_node").set_value("1x-h100-sxm-80gb")
    at.sidebar.number_input(key="scenario_tp").set_value(1)
    at.run()
    assert not at.exception
    assert not any("kind: Deployment" in c for c in _codes(at))
    assert any("No launch command" in w.value and "does not fit" in w.value for w in at.warning)


def test_fleet_launches_the_recommended_option():
    at = page("fleet.py").run()
    assert not at.exception
    assert at.success[0].value.startswith("Cheapest option that meets every objective")
    command = next(c for c in _codes(at) if "# engine:" in c and "kind: Deployment" not in c)
    assert "--max-model-len" in command or "--context-length" in command or "--max_seq_len" in command
    assert any(e.label.startswith("Launch the recommended option") for e in at.expander)


def test_launch_downloads_are_built_when_clicked():
    at = page("sizing.py").run()
    launch = [b for b in at.get("download_button") if b.proto.label.startswith("Download the")]
    assert [b.proto.label for b in launch] == ["Download the command", "Download the manifest"]
    assert all(b.proto.deferred_file_id and not b.proto.url for b in launch)


def test_validation_checks_a_log_against_the_launch_command(tmp_store):
    dep = Deployment.on_node(
        get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), engine_version="0.10.0", memory_fraction=0.85,
        max_model_len=16384,
    )  # fmt: skip
    at = page("validation.py").run()
    at.text_area(key="validation_log_text").input((ENGINE_LOGS / "vllm-v1-019-llmd-llama31-8b-16k.log").read_text())
    at.text_area(key="validation_log_launch").input(launch_config(dep).command)
    at.button(key="validation_log_submit").click().run()
    assert not at.exception and not at.error
    assert any("launch command" in c.value and "memory fraction 0.85" in c.value for c in at.caption)
