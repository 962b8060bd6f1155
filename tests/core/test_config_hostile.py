"""Configs are data: bounds before layouts, no code, no network, no kernels, clean field errors."""

from __future__ import annotations

import importlib.abc
import json
import socket
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.catalog.config_import import model_from_config
from planner.catalog.lookup import list_models
from planner.errors import PlannerError
from planner.model.architecture import architecture_from_config
from planner.model.config_bounds import config_bounds, validate_config_fields
from planner.model.meta_device import build_on_meta_device, count_on_meta_device
from tests.conftest import TINY_GPT_NEOX

TINY = TINY_GPT_NEOX
HUB_KERNEL = {
    **TINY,
    "_attn_implementation": "kernels-community/flash-attn",
    "attn_implementation": "kernels-community/vllm-flash-attn3",
    "use_kernels": True,
}
AUTO_MAP = {
    **TINY,
    "auto_map": {"AutoConfig": "evil/repo--configuration.EvilConfig", "AutoModelForCausalLM": "evil/repo--m.Evil"},
    "trust_remote_code": True,
    "_name_or_path": "evil/repo",
}


class _Blocked(importlib.abc.MetaPathFinder):
    """Records (and refuses) any lookup of a module a config must never pull in."""

    PREFIXES = ("kernels", "transformers_modules", "flash_attn")

    def __init__(self) -> None:
        self.attempts: list[str] = []

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.PREFIXES:
            self.attempts.append(fullname)
            raise ImportError(f"blocked import of {fullname}")
        return None


@pytest.fixture
def no_code_no_network(monkeypatch):
    count_on_meta_device(TINY)  # transformers' own one-time availability probes happen here, before the guard
    blocked = _Blocked()
    sys.meta_path.insert(0, blocked)
    connections: list[object] = []

    def refuse(*args, **kwargs):
        connections.append(args)
        raise OSError("network blocked in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    for name in list(sys.modules):
        if name.split(".")[0] in _Blocked.PREFIXES:
            monkeypatch.delitem(sys.modules, name)
    yield blocked, connections
    sys.meta_path.remove(blocked)


@pytest.mark.parametrize("cfg", [HUB_KERNEL, AUTO_MAP], ids=["hub-kernel", "auto-map"])
def test_hostile_configs_are_counted_without_code_or_network(cfg, no_code_no_network):
    blocked, connections = no_code_no_network
    counts = count_on_meta_device(json.loads(json.dumps(cfg)))
    assert counts.total_params == count_on_meta_device(TINY).total_params
    assert counts.model_class.startswith("GPTNeoX")
    arch = architecture_from_config(cfg)  # the transformers path of the importer
    assert arch.num_layers == 2
    assert blocked.attempts == [] and connections == []


def test_model_class_comes_from_transformers_itself(no_code_no_network):
    model = build_on_meta_device(AUTO_MAP)
    assert type(model).__module__.startswith("transformers.models.")
    assert model.config._attn_implementation == "eager"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"num_hidden_layers": 10_000_000}, "num_hidden_layers"),
        ({"vocab_size": 10**40}, "vocab_size"),
        ({"vocab_size": 1e40}, "vocab_size"),
        ({"hidden_size": 1_000_000_000}, "hidden_size"),
        ({"hidden_size": "4096"}, "hidden_size"),
        ({"vocab_size": 0}, "vocab_size"),
        ({"num_attention_heads": 0}, "num_attention_heads"),
        ({"num_hidden_layers": True}, "num_hidden_layers"),
        ({"layer_types": "full_attention"}, "layer_types"),
        ({"layer_types": [1, 2]}, "layer_types"),
        ({"rope_scaling": [1]}, "rope_scaling"),
        ({"num_key_value_heads": 64}, "num_key_value_heads"),
        ({"num_local_experts": 8, "num_experts_per_tok": 9}, "num_experts_per_tok"),
        ({"hidden_size": 131072, "intermediate_size": 1048576, "num_hidden_layers": 1024}, "config"),
    ],
)
@pytest.mark.parametrize("model_type", ["llama", "mixtral", "gpt_neox"])
def test_out_of_bounds_fields_are_field_errors(change, field, model_type):
    cfg = {**TINY, "model_type": model_type, **change}
    with pytest.raises(PlannerError) as err:
        model_from_config(cfg, model_id="hostile")
    assert err.value.field == field, str(err.value)
    assert "\n" not in str(err.value)


def test_every_bound_has_reasoning_and_a_public_source():
    bounds = config_bounds()
    assert bounds.max_weight_bytes.value == 10**14
    for bound in bounds.fields:
        assert bound.reasoning and str(bound.source).startswith("https://")
        assert bound.min <= bound.max


def test_published_giants_pass_the_bounds():
    for spec in list_models():
        validate_config_fields(spec.config)


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.lists(st.integers(-5, 5), max_size=5),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
_FIELDS = [name for bound in config_bounds().fields for name in bound.names] + [
    "layer_types",
    "mlp_only_layers",
    "rope_scaling",
    "tie_word_embeddings",
    "use_sliding_window",
    "torch_dtype",
]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    model_type=st.sampled_from(["llama", "qwen2", "qwen3_moe", "mixtral", "gemma2", "deepseek_v3", "phi3", "nope"]),
    changes=st.dictionaries(st.sampled_from(_FIELDS), _VALUES, max_size=4),
)
def test_fuzzed_configs_import_or_fail_with_a_planner_error(model_type, changes):
    """The closed-form importer: any field value ends in a spec or a PlannerError, never another exception."""
    cfg = {**TINY, "model_type": model_type, "num_key_value_heads": 4, **changes}
    try:
        model_from_config(cfg, model_id="fuzz")
    except PlannerError as exc:
        assert "\n" not in str(exc)
