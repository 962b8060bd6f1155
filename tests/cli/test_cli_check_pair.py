"""`python -m planner check-pair` through a subprocess, as users run it."""

from __future__ import annotations

import json

from tokenizers import Tokenizer, models, pre_tokenizers

from tests.conftest import run_cli

WORDS = ["[UNK]", "the", "cat", "sat", "on", "mat"]


def write_tokenizer(path, words: list[str]) -> str:
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(path))
    return str(path)


def check_pair_json(*args: str) -> dict:
    proc = run_cli("check-pair", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_json_contract_and_padding_warning():
    out = check_pair_json("--target", "Qwen2.5-72B", "--draft", "Qwen2.5-0.5B")
    assert {"verdict", "parameter_ratio", "checks"} <= out.keys()
    assert out["verdict"] == "compatible_with_warnings"
    assert all({"name", "status", "detail"} <= c.keys() for c in out["checks"])
    vocab = next(c for c in out["checks"] if c["name"] == "vocab_size")
    assert vocab["status"] == "warn" and "152,064 vs 151,936" in vocab["detail"]
    assert out["acceptance"]["source"] == "prior"


def test_incompatible_is_a_result_with_exit_code_zero():
    out = check_pair_json("--target", "Llama-3.1-70B", "--draft", "Qwen2.5-0.5B")
    assert out["verdict"] == "incompatible"
    assert next(c for c in out["checks"] if c["name"] == "tokenizer")["status"] == "fail"
    text = run_cli("check-pair", "--target", "Llama-3.1-70B", "--draft", "Qwen2.5-0.5B", check=True).stdout
    assert "incompatible" in text and "[FAIL] tokenizer" in text
    assert out["acceptance"] is None  # no prior for a pair whose token ids mean other tokens
    assert "α: none" in text and "(prior)" not in text


def test_a_pair_refused_only_by_the_engine_keeps_its_acceptance():
    out = check_pair_json("--target", "Llama-3.1-70B", "--draft", "Llama-3.2-1B", "--tp", "8", "--draft-tp", "1")
    assert out["verdict"] == "incompatible"
    assert out["acceptance"]["alpha"] > 0  # the models still agree; only this engine setting is refused


def test_tp_options_reach_the_engine_check():
    out = check_pair_json("--target", "Llama-3.1-70B", "--draft", "Llama-3.2-1B", "--tp", "8", "--draft-tp", "1")
    assert next(c for c in out["checks"] if c["name"] == "engine")["status"] == "fail"
    v0 = check_pair_json(
        "--target", "Llama-3.1-70B", "--draft", "Llama-3.2-1B", "--tp", "8", "--draft-tp", "1", "--engine", "vllm-v0"
    )
    assert next(c for c in v0["checks"] if c["name"] == "engine")["status"] == "pass"


def test_tokenizer_files_that_differ_in_one_token_name_it(tmp_path):
    a = write_tokenizer(tmp_path / "a.json", WORDS)
    b = write_tokenizer(tmp_path / "b.json", [*WORDS[:5], "rug"])
    out = check_pair_json(
        "--target", "Llama-3.1-70B", "--draft", "Llama-3.2-1B", "--target-tokenizer", a, "--draft-tokenizer", b
    )
    tokenizer = next(c for c in out["checks"] if c["name"] == "tokenizer")
    assert out["verdict"] == "incompatible" and tokenizer["status"] == "fail"
    assert "'mat'" in tokenizer["detail"] and "'rug'" in tokenizer["detail"]
    assert out["vocab_comparison"]["only_in_a"] == 1


def test_imported_draft_config_asks_for_tokenizer_files(tmp_path):
    config = {
        "model_type": "llama",
        "num_hidden_layers": 4,
        "hidden_size": 256,
        "intermediate_size": 512,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 128256,
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    out = check_pair_json("--target", "Llama-3.1-8B", "--draft-config", str(tmp_path))
    tokenizer = next(c for c in out["checks"] if c["name"] == "tokenizer")
    assert tokenizer["status"] == "warn" and "tokenizer.json" in tokenizer["detail"]


def test_bad_input_is_one_line_and_exit_code_two(tmp_path):
    broken = tmp_path / "tokenizer.json"
    broken.write_text("{not json")
    for args in (
        ("--target", "Llama-3.1-70B", "--draft", "no-such-model"),
        ("--target", "Llama-3.1-70B", "--draft", "Llama-3.2-1B", "--target-tokenizer", str(broken)),
        ("--target", "Llama-3.1-70B", "--draft", "Llama-3.2-1B", "--target-tokenizer", str(tmp_path)),
        ("--target", "Llama-3.1-70B", "--draft", "Llama-3.2-1B", "--tp", "3"),
        ("--target", "Llama-3.1-70B"),
    ):
        proc = run_cli("check-pair", *args, "--json")
        assert proc.returncode == 2, args
        assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    pair = ("--target", "Llama-3.1-70B", "--draft", "Llama-3.2-1B")
    proc = run_cli("check-pair", *pair, "--target-tokenizer", str(broken), "--draft-tokenizer", str(broken))
    assert "tokenizer.json" in proc.stderr and "target_tokenizer" in proc.stderr
