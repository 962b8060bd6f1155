"""`python -m planner quote`: several node types, JSON output, and a report written whole."""

from __future__ import annotations

import json

from tests.conftest import run_cli


def test_quote_json_and_export(tmp_path):
    target = tmp_path / "quote.xlsx"
    pair = "quote --target Llama-3.1-70B --draft Llama-3.2-1B --node 8x-h100-sxm-80gb --node 8x-h200-sxm-141gb"
    proc = run_cli(
        *pair.split(), "--requests-per-s", "40", "--tpot-slo-ms", "40", "--export", str(target), "--json", check=True
    )
    out = json.loads(proc.stdout)
    assert len(out["quotes"]) == 2 and out["quotes"][0]["with_speculation"] is not None
    assert target.read_bytes()[:2] == b"PK" and not list(tmp_path.glob("*.partial"))


def test_quote_bad_inputs_exit_2():
    for args in (("--requests-per-s", "-1"), ("--requests-per-s", "1", "--alpha", "2")):
        proc = run_cli("quote", "--target", "Llama-3.1-8B", "--node", "1x-h100-sxm-80gb", *args)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_a_request_longer_than_the_models_context_is_refused_not_quoted():
    # Llama-3.1-8B's config: max_position_embeddings 131,072 (https://huggingface.co/meta-llama/Llama-3.1-8B).
    proc = run_cli(
        "quote", "--target", "Llama-3.1-8B", "--node", "1x-h100-sxm-80gb", "--requests-per-s", "5",
        "--prompt-tokens", "1000000",
    )  # fmt: skip
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "prompt_tokens" in proc.stderr and "131,072" in proc.stderr


def test_quote_for_ngram_uses_the_methods_alpha_and_marks_the_recommended_option():
    out = json.loads(
        run_cli(
            "quote", "--target", "Llama-3.1-8B", "--method", "ngram", "--node", "1x-h100-sxm-80gb",
            "--requests-per-s", "2", "--json", check=True,
        ).stdout
    )  # fmt: skip
    assert "prior" in out["alpha_basis"] and out["alpha"] < 0.5  # open-ended prompts: little of the output is copied
    assert any(q["with_speculation"] for q in out["quotes"])
    entered = json.loads(
        run_cli(
            "quote", "--target", "Llama-3.1-8B", "--method", "ngram", "--node", "1x-h100-sxm-80gb",
            "--requests-per-s", "2", "--alpha", "0.7", "--json", check=True,
        ).stdout
    )  # fmt: skip
    assert entered["alpha"] == 0.7 and "your value" in entered["alpha_basis"]
