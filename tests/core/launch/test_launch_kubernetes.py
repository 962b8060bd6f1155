"""The Kubernetes manifest loads as YAML and validates against the Kubernetes object schema (offline schemas)."""

from __future__ import annotations

import kubernetes_validate  # requirements-dev.txt; ships the Kubernetes JSON schemas (no network)
import pytest
import yaml

from planner.catalog.lookup import get_model, get_node
from planner.deployment import Deployment
from planner.launch import launch_config

K8S_VERSION = "1.30.0"


@pytest.mark.parametrize(
    ("engine", "version"), [("vllm", "0.19.0"), ("vllm-v0", "0.8.1"), ("sglang", "0.5.10"), ("trtllm", None)]
)
def test_manifest_validates_against_the_kubernetes_schema(engine, version):
    dep = Deployment.on_node(
        get_model("Llama-3.1-70B"),
        get_node("8x-h100-sxm-80gb"),
        tp=8,
        draft=get_model("Llama-3.2-1B"),
        max_model_len=32768,
        engine=engine,
        engine_version=version,
    )
    docs = [doc for doc in yaml.safe_load_all(launch_config(dep).kubernetes) if doc]
    kinds = [doc["kind"] for doc in docs]
    assert {"Deployment", "Service", "PersistentVolumeClaim"} <= set(kinds)
    for doc in docs:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 8
    assert container["readinessProbe"]["httpGet"]["path"] == "/health"
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert volumes["shm"]["emptyDir"]["medium"] == "Memory"
    assert "persistentVolumeClaim" in volumes["model-cache"]
    assert (
        "--max-num-seqs" in container["command"]
        or "--max-running-requests" in container["command"]
        or ("--max_batch_size" in container["command"])
    )


def test_a_broken_manifest_fails_the_validator():
    """The validator is not a no-op: a misspelt container field is rejected (strict schema)."""
    dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), engine_version="0.19.0")
    deployment = next(d for d in yaml.safe_load_all(launch_config(dep).kubernetes) if d["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["readinesProbe"] = container.pop("readinessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, K8S_VERSION, strict=True)
