"""The command line tells the same truth as the pages: no verdict for a workload that cannot run, no negative
memory figure, the fixes that fit, speculation credited on the same node type."""

from __future__ import annotations

import json
import re

from tests.conftest import run_cli


def test_a_200k_prompt_on_an_8k_max_length_gets_the_reason_and_the_fix_not_a_verdict():
    args = ("speedup", "--target", "Llama-3.1-8B", "--method", "ngram", "--node", "1x-l40s-48gb")
    args += ("--prompt-tokens", "200000", "--max-model-len", "8192")
    text = run_cli(*args, check=True).stdout
    assert "cannot run:" in text and "context window of 131,072 tokens" in text and "fix: shorten" in text
    assert not re.search(r"verdict: (RECOMMEND|ENABLE|DISABLE)", text) and "speedup" not in text.lower()
    out = json.loads(run_cli(*args, "--json", check=True).stdout)
    assert out["verdict"] == "cannot_run" and out["cannot_run_reasons"] and out["fixes"]


def test_ngram_uses_its_own_alpha_and_the_verdict_is_at_the_users_k():
    args = ("speedup", "--target", "Llama-3.1-8B", "--method", "ngram", "--node", "1x-l40s-48gb", "--json")
    out = json.loads(run_cli(*args, check=True).stdout)
    assert out["alpha_source"] == "prior" and out["alpha"] < 0.3
    assert out["verdict"] != "recommend" and out["verdict_k"] == out["k"] == 5


def test_size_prints_no_negative_figure_and_only_fixes_that_fit():
    args = ("size", "--target", "Llama-3.1-405B", "--gpu", "h100-sxm-80gb", "--dtype", "bf16")
    text = run_cli(*args, check=True).stdout
    assert not re.search(r"-\d+\.\d+ GiB", text) and "short of any KV cache by" in text
    assert text.count("problem: weights need") == 1
    out = json.loads(run_cli(*args, "--json", check=True).stdout)
    assert out["suggestions"] and all(s["fits"] and s["starts"] for s in out["suggestions"])
    assert min(v for v in out["per_gpu"].values() if isinstance(v, int)) >= 0
