"""The CLI contract of the Foundation issue, through a subprocess as users run it."""

from __future__ import annotations

import json

import pytest

from tests.conftest import TINY_GPT_NEOX, TINY_GPT_NEOX_PARAMS, run_cli


def test_params_json_contract():
    out = json.loads(run_cli("params", "--model", "meta-llama/Llama-3.1-70B", "--json", check=True).stdout)
    assert {"model", "total_params", "active_params", "components", "method"} <= out.keys()
    assert out["total_params"] == 70_553_706_496
    assert out["method"] == "formula"
    assert sum(out["components"].values()) == out["total_params"]


def test_kv_json_contract_and_tp():
    out = json.loads(run_cli("kv", "--model", "llama-3.1-70b", "--tp", "8", "--json", check=True).stdout)
    assert out["kv_bytes_per_token"] == 327_680
    assert out["kv_bytes_per_token_per_gpu"] == 40_960
    fp8 = json.loads(run_cli("kv", "--model", "Llama-3.1-70B", "--kv-dtype", "fp8", "--json", check=True).stdout)
    assert fp8["kv_bytes_per_token"] == 163_840


def test_kv_context_caps_sliding_layers():
    out = json.loads(run_cli("kv", "--model", "gemma-2-9b", "--context", "8192", "--json", check=True).stdout)
    # Counted in full per token (contract); capped for an 8,192-token sequence: 21 layers hold 4,096.
    assert out["kv_bytes_per_token"] == 42 * 8192
    assert out["kv_bytes_for_context"] == 21 * 8192 * 8192 + 21 * 4096 * 8192


@pytest.mark.parametrize(
    ("cfg", "expected"),
    [
        # transformers defaults for these families, counted on the meta device (exact).
        ({"model_type": "falcon"}, 6_921_720_704),
        (
            TINY_GPT_NEOX,
            TINY_GPT_NEOX_PARAMS,
        ),
    ],
)
def test_custom_config_outside_the_catalog_counts_exactly(tmp_path, cfg, expected):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    out = json.loads(run_cli("params", "--config", str(path), "--json", check=True).stdout)
    assert out["total_params"] == expected
    assert out["method"] == "meta-device"
    kv = json.loads(run_cli("kv", "--config", str(path), "--json", check=True).stdout)
    assert kv["kv_bytes_per_token"] > 0


def test_catalog_lists_ids():
    models = json.loads(run_cli("catalog", "models", "--json", check=True).stdout)["models"]
    assert "meta-llama/Llama-3.1-70B" in models and len(models) >= 39
    gpus = run_cli("catalog", "gpus", check=True).stdout.split()
    assert "h100-sxm-80gb" in gpus
    nodes = json.loads(run_cli("catalog", "nodes", "--json", check=True).stdout)["nodes"]
    assert "8x-h100-sxm-80gb" in nodes


@pytest.mark.parametrize(
    "args",
    [
        ("params", "--model", "no-such-model"),
        ("kv", "--model", "Llama-3.1-70B", "--tp", "3"),
        ("kv", "--model", "Llama-3.1-70B", "--tp", "0"),
        ("kv", "--model", "Llama-3.1-70B", "--kv-dtype", "int3"),
        ("params",),
        ("params", "--config", "/nonexistent/config.json"),
        ("frobnicate",),
    ],
)
def test_errors_exit_2_with_one_line(args):
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:")
    assert "Traceback" not in proc.stderr


def test_bad_config_files_exit_2(tmp_path):
    (tmp_path / "a.json").write_text("not json at all")
    (tmp_path / "b.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 64}))
    (tmp_path / "c.json").write_text(json.dumps({"model_type": "nonsense_arch", "num_hidden_layers": 2}))
    (tmp_path / "d.json").write_text(
        json.dumps(
            {
                "model_type": "llama",
                "num_hidden_layers": -2,
                "hidden_size": 64,
                "num_attention_heads": 4,
                "intermediate_size": 64,
                "vocab_size": 10,
            }
        )
    )
    expected_field = {
        "a.json": "JSON",
        "b.json": "num_hidden_layers",
        "c.json": "model_type",
        "d.json": "num_hidden_layers",
    }
    for name, field in expected_field.items():
        proc = run_cli("params", "--config", str(tmp_path / name))
        assert proc.returncode == 2, name
        assert field in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
