"""SGLang launch commands for the releases the memory plan profiles (0.4.6 to 0.5.2), with each release's own flags
(data/engine_flags.json, recorded from https://github.com/sgl-project/sglang/blob/v0.4.6/python/sglang/srt/server_args.py,
v0.4.7 and v0.5.2)."""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_model, get_node
from planner.deployment import Deployment
from planner.launch import launch_config, read_launch_command

HEAD = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


def _config(version: str, draft: str):
    dep = Deployment.on_node(
        get_model("Llama-3.1-8B"),
        get_node("1x-h100-sxm-80gb"),
        engine="sglang",
        engine_version=version,
        draft=get_model(draft),
        max_model_len=8192,
    )
    return launch_config(dep)


@pytest.mark.parametrize(
    ("version", "draft", "algorithm", "fraction"),
    [
        ("0.4.6", HEAD, "EAGLE3", "0.88"),  # the TP table, whatever the algorithm
        ("0.4.8", HEAD, "EAGLE3", "0.849"),  # (81,559 - 10,240 - 2,048) / 81,559
        ("0.5.2", "Llama-3.2-1B", "STANDALONE", "0.799"),  # (81,559 - 10,240 - 6,144) / 81,559
    ],
)
def test_each_release_launches_with_its_own_fraction_and_reads_back(version, draft, algorithm, fraction):
    config = _config(version, draft)
    assert f"--speculative-algorithm {algorithm}" in config.command
    assert f"--mem-fraction-static {fraction} " in config.command.replace("\\\n", " ")
    assert read_launch_command(config.command).same_deployment(config.settings)


def test_a_release_without_pipeline_parallelism_gets_no_pp_flag():
    """v0.4.6's server_args has no --pp-size; a PP-1 plan is written without it and reads back as PP 1."""
    assert "--pp-size" not in _config("0.4.6", HEAD).command
    assert "--pp-size 1" in _config("0.4.8", HEAD).command
