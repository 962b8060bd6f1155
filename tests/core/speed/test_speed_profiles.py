"""Speed profiles: layering (vendor, base engine, engine, vendor override), sources, bad files."""

from __future__ import annotations

import json

import pytest

from planner.catalog.lookup import get_gpu, get_model
from planner.deployment import Deployment
from planner.errors import CatalogError, InputError
from planner.speed.engine_step import Chunks, EngineStep
from planner.speed.profiles import PARAMETERS, speed_profile


@pytest.mark.parametrize("engine", ["vllm", "vllm-v0", "sglang", "trtllm", "hf"])
@pytest.mark.parametrize("vendor", ["nvidia", "amd"])
def test_every_engine_resolves_with_a_source_for_every_value(engine, vendor):
    profile = speed_profile(engine, vendor)
    assert profile.id == f"{engine}-{vendor}"
    assert {name for name, _, _ in profile.parameters()} == set(PARAMETERS)
    assert all(len(source) > 20 for _, _, source in profile.parameters())


def test_layers_override_in_order():
    vllm, trt, v0 = speed_profile("vllm", "nvidia"), speed_profile("trtllm", "nvidia"), speed_profile("vllm-v0", "amd")
    assert trt.layer_overhead_s == vllm.layer_overhead_s  # inherited from the base engine
    assert trt.allreduce_latency_s != vllm.allreduce_latency_s  # its own value
    assert v0.layer_overhead_s == speed_profile("vllm", "amd").layer_overhead_s  # base's vendor override
    assert v0.bandwidth_frac == speed_profile("hf", "amd").bandwidth_frac  # vendor value
    assert not speed_profile("hf", "nvidia").cuda_graphs


def test_unknown_engine_or_vendor_is_an_input_error():
    with pytest.raises(InputError):
        speed_profile("tgi", "nvidia")
    with pytest.raises(InputError):
        speed_profile("vllm", "other")


def test_missing_value_is_a_catalog_error(tmp_data_dir):
    path = tmp_data_dir / "speed_profiles.json"
    raw = json.loads(path.read_text())
    del raw["vendors"][0]["values"]["bandwidth_frac"]
    path.write_text(json.dumps(raw))
    with pytest.raises(CatalogError, match="bandwidth_frac"):
        speed_profile("vllm", "nvidia")


def test_an_unoverlapped_scheduler_lengthens_every_step_by_its_share():
    dep = Deployment.build(target=get_model("Meta-Llama-3-8B"), gpu=get_gpu("h100-sxm-80gb"), engine="sglang")
    current, old = speed_profile("sglang", "nvidia"), speed_profile("sglang-0.3", "nvidia")
    assert current.host_serial_frac == 0.0 and old.host_serial_frac == 0.1
    chunks = Chunks()
    chunks.add(200, 0)
    new_step = EngineStep(dep, current).plain(decode_seqs=32, decode_context_tokens=32 * 300, chunks=chunks)
    old_step = EngineStep(dep, old).plain(decode_seqs=32, decode_context_tokens=32 * 300, chunks=chunks)
    assert old_step.total_s == pytest.approx(1.1 * new_step.total_s)
    assert old_step.flops == new_step.flops  # host time adds seconds, never GPU work
    assert EngineStep(dep, old).prefill(500) == pytest.approx(1.1 * EngineStep(dep, current).prefill(500))
