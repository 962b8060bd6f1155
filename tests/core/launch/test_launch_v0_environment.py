"""A vLLM V0 plan on a release whose plain launch starts V1 (0.8 and 0.9) carries ``VLLM_USE_V1=0`` in its command,
docker line and Kubernetes manifest, and reads back as V0 (vllm/envs.py VLLM_USE_V1, default "1" from v0.8.0,
https://github.com/vllm-project/vllm/blob/v0.8.5/vllm/envs.py)."""

from __future__ import annotations

import pytest
import yaml

from planner.catalog.lookup import get_model, get_node
from planner.deployment import Deployment
from planner.launch import launch_config, read_launch_command


def _config(engine: str, version: str):
    dep = Deployment.on_node(
        get_model("Llama-3.1-8B"),
        get_node("1x-h100-sxm-80gb"),
        engine=engine,
        engine_version=version,
        max_model_len=8192,
    )
    return launch_config(dep)


def _container_env(manifest: str) -> dict[str, str]:
    deployment = next(doc for doc in yaml.safe_load_all(manifest) if doc and doc["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value") for e in container["env"]}


@pytest.mark.parametrize("version", ["0.8.5", "0.9.2"])
def test_a_v0_plan_on_a_v1_default_release_sets_the_variable_everywhere(version):
    config = _config("vllm-v0", version)
    command_line = next(line for line in config.command.splitlines() if not line.startswith("#"))
    assert command_line.startswith("VLLM_USE_V1=0 vllm serve ")
    assert "--env VLLM_USE_V1=0" in config.docker
    assert _container_env(config.kubernetes)["VLLM_USE_V1"] == "0"
    back = read_launch_command(config.command)
    assert back.engine == "vllm-v0" and back.same_deployment(config.settings)


def test_without_the_variable_the_same_command_reads_back_as_v1():
    config = _config("vllm-v0", "0.9.2")
    plain = config.command.replace("VLLM_USE_V1=0 ", "")
    assert read_launch_command(plain).engine == "vllm"


@pytest.mark.parametrize(("engine", "version"), [("vllm-v0", "0.7.3"), ("vllm", "0.9.2"), ("vllm", "0.19.0")])
def test_no_variable_where_the_plain_launch_starts_the_planned_engine(engine, version):
    config = _config(engine, version)
    assert "VLLM_USE_V1" not in config.command + config.docker + config.kubernetes
    assert read_launch_command(config.command).engine == engine
