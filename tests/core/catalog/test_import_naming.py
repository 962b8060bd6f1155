"""Names of imported models: typed > the config's _name_or_path > custom-<type>; never a catalog model's name."""

from __future__ import annotations

import pytest

from planner.catalog import checked_model_name, config_fingerprint, import_name
from planner.errors import InputError


def test_the_configs_own_name_is_used_not_a_file_name():
    assert import_name({"_name_or_path": " acme/draft-1b ", "model_type": "llama"}) == "acme/draft-1b"
    assert import_name({"model_type": "qwen2"}) == "custom-qwen2"
    assert import_name({"_name_or_path": "acme/x"}, typed="mine") == "mine"


@pytest.mark.parametrize("name", ["meta-llama/Llama-3.1-8B", "llama-3.1-8b", "  META-LLAMA/llama-3.1-8b "])
def test_a_catalog_models_name_is_refused_with_a_way_out(name):
    with pytest.raises(InputError, match="type another name") as err:
        import_name({"_name_or_path": name})
    assert err.value.field == "model_name"


@pytest.mark.parametrize("name", ["", "   ", "a\u0000b", "x" * 201, 5])
def test_malformed_names_are_refused(name):
    with pytest.raises(InputError):
        checked_model_name(name)


def test_the_fingerprint_ignores_key_order_and_sees_any_change():
    a = {"model_type": "llama", "hidden_size": 64, "nested": {"b": 1, "a": 2}}
    b = {"nested": {"a": 2, "b": 1}, "hidden_size": 64, "model_type": "llama"}
    assert config_fingerprint(a) == config_fingerprint(b)
    assert config_fingerprint(a) != config_fingerprint({**a, "hidden_size": 128})
