"""`size` and `check-pair` with heads, the target's MTP layers and n-gram (`--method`)."""

from __future__ import annotations

import json

from tests.conftest import run_cli

HEAD = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


def test_size_shows_the_heads_weights_as_the_engine_loads_them():
    out = run_cli("size", "--target", "Llama-3.1-8B", "--draft", HEAD, "--gpu", "h100-sxm-80gb", check=True).stdout
    assert "EAGLE-3 head yuhuili/EAGLE3-LLaMA3.1-Instruct-8B" in out
    assert "424,689,664 parameters as the engine loads them" in out and "embedding shared with the target" in out
    payload = json.loads(
        run_cli(
            "size", "--target", "Llama-3.1-8B", "--draft", HEAD, "--gpu", "h100-sxm-80gb", "--json", check=True
        ).stdout
    )
    assert payload["speculative_method"] == "eagle3"
    assert payload["speculator"]["weights_bytes_per_gpu"] == 2 * 424_689_664 + 8 * 32_000


def test_size_with_the_targets_mtp_layers_needs_no_draft():
    args = ("size", "--target", "DeepSeek-V3", "--method", "mtp", "--node", "8x-h200-sxm-141gb", "--tp", "8")
    payload = json.loads(run_cli(*args, "--json", check=True).stdout)
    assert payload["speculator"]["kind"] == "mtp" and payload["speculator"]["kv_bytes_per_token_per_gpu"] == 1152
    assert payload["speculator"]["components"]["embedding"] == 0


def test_a_method_that_cannot_run_is_one_line_and_exit_2():
    proc = run_cli("size", "--target", "Llama-3.1-8B", "--method", "mtp", "--gpu", "h100-sxm-80gb")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "MTP" in proc.stderr
    proc = run_cli(
        "size", "--target", "Llama-3.1-8B", "--draft", "Llama-3.2-1B", "--method", "eagle3", "--gpu", "h100-sxm-80gb"
    )
    assert proc.returncode == 2 and "method" in proc.stderr


def test_check_pair_says_plainly_a_head_cannot_propose_for_another_target():
    out = run_cli("check-pair", "--target", "Qwen2.5-7B", "--draft", HEAD, check=True).stdout
    assert "incompatible" in out.splitlines()[0]
    assert "trained on meta-llama/Llama-3.1-8B-Instruct's hidden states; it cannot propose for Qwen2.5-7B" in out


def test_check_pair_reads_a_plain_config_as_a_head_with_method(tmp_path):
    config = tmp_path / "config.json"
    head = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "num_hidden_layers": 1,
        "hidden_size": 4096,
        "intermediate_size": 11008,
        "num_attention_heads": 32,
        "vocab_size": 32000,
    }
    config.write_text(json.dumps(head))
    args = ("check-pair", "--target", "Llama-2-7b-hf", "--draft-config", str(config), "--json")
    plain = json.loads(run_cli(*args, check=True).stdout)
    as_head = json.loads(run_cli(*args, "--method", "eagle", check=True).stdout)
    assert "head_target" not in [c["name"] for c in plain["checks"]]
    assert [c["status"] for c in as_head["checks"] if c["name"] == "head_target"] == ["warn"]
