"""`python -m planner simulate`: the JSON contract, plain vs draft, and one-line errors for bad workloads."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

BASE = ("simulate", "--target", "Llama-3.1-70B", "--node", "8x-h100-sxm-80gb", "--tp", "4")
METRICS = {"requests_per_s", "output_tokens_per_s", "total_tokens_per_s", "ttft_s", "tpot_s", "e2e_latency_s"}
KEYS = METRICS | {"mean_batch_size", "plain", "speedup", "replicas", "gpus", "limited_by", "alpha_source"}


def test_json_contract_with_a_draft():
    out = json.loads(
        run_cli(
            *BASE, "--draft", "Llama-3.2-1B", "--alpha", "0.8", "--k", "3", "--request-rate", "4",
            "--dataset", "sharegpt", "--num-prompts", "300", "--json", check=True,
        ).stdout
    )  # fmt: skip
    assert set(out) >= KEYS
    assert set(out["plain"]) >= METRICS
    for key in ("ttft_s", "tpot_s", "e2e_latency_s"):
        assert set(out[key]) == {"mean", "p50", "p99"} and out[key]["p50"] <= out[key]["p99"]
    assert out["replicas"] == 1 and out["gpus"] == 4 and out["k"] == 3 and out["alpha"] == 0.8
    assert out["speedup"] > 1 and out["tpot_s"]["mean"] < out["plain"]["tpot_s"]["mean"]


def test_without_a_draft_plain_is_the_top_level():
    out = json.loads(run_cli(*BASE, "--concurrency", "8", "--num-prompts", "64", "--json", check=True).stdout)
    assert out["speedup"] == 1
    for key in METRICS:
        assert out["plain"][key] == out[key]


def test_default_acceptance_is_the_pairs_and_says_where_it_came_from():
    out = json.loads(
        run_cli(*BASE, "--draft", "Llama-3.2-1B", "--offline", "--num-prompts", "64", "--json", check=True).stdout
    )
    assert out["alpha_source"] in {"measured", "published", "prior"} and 0 < out["alpha"] < 1


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--request-rate", "0"), "request-rate"),
        (("--request-rate", "-2"), "request-rate"),
        (("--concurrency", "0"), "concurrency"),
        (("--offline", "--prompt-tokens", "200000"), "max model length"),
        (("--offline", "--max-model-len", "1024", "--prompt-tokens", "1000", "--output-tokens", "100"), "1,024"),
        (("--offline", "--draft", "Llama-3.2-1B", "--rho", "0.5"), "--k"),
    ],
)
def test_bad_workloads_exit_2_with_one_line(args, needle):
    proc = run_cli(*BASE, *args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and needle in proc.stderr


def test_a_request_beyond_the_max_model_length_names_the_prompt_and_its_length():
    proc = run_cli(
        "simulate", "--target", "Llama-3.1-8B", "--gpu", "h100-sxm-80gb", "--request-rate", "5",
        "--prompt-tokens", "200000", "--num-prompts", "20",
    )  # fmt: skip
    assert proc.returncode == 2 and "prompt_tokens = 200000" in proc.stderr


def test_a_tree_simulates_with_its_widths_and_the_steady_state():
    out = json.loads(
        run_cli(
            "simulate", "--target", "Llama-3.1-8B", "--draft", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
            "--gpu", "h100-sxm-80gb", "--engine", "sglang", "--alpha", "0.7", "--num-speculative-tokens", "5",
            "--concurrency", "33", "--num-prompts", "200", "--verification", "tree", "--json", check=True,
        ).stdout
    )  # fmt: skip
    assert out["verification"] == "tree" and out["tree_widths"] == [3, 1, 1, 1, 1]
    assert out["steady"] and out["steady_output_tokens_per_s"] > 0
    assert out["padded_steps"] > 0 and 0 < out["mean_padding_frac"] < 1  # 33 requests run as the 40-request graph


def test_mlperfs_set_is_a_dataset_the_command_draws_from():
    args = (*BASE, "--offline", "--num-prompts", "200", "--dataset", "mlperf-openorca")
    out = run_cli(*args, check=True).stdout
    assert "MLPerf OpenOrca lengths" in out and "mean 222 prompt and 294 output tokens" in out
    drawn = json.loads(run_cli(*args, "--json", check=True).stdout)
    fixed = json.loads(
        run_cli(*BASE, "--offline", "--num-prompts", "200", "--prompt-tokens", "222", "--output-tokens", "294",
                "--json", check=True).stdout
    )  # fmt: skip
    # the set's spread, not its means alone: its longest answers (up to 1,024 tokens) drain a small batch at the end
    assert drawn["output_tokens_per_s"] < 0.9 * fixed["output_tokens_per_s"]


def test_a_datasets_answers_can_be_scaled_to_a_stated_mean_and_only_a_datasets():
    args = (*BASE, "--offline", "--num-prompts", "200", "--dataset", "mlperf-openorca")
    scaled = run_cli(*args, "--output-mean-tokens", "250", check=True).stdout
    assert "outputs scaled to a mean of 250 tokens" in scaled
    drawn = json.loads(run_cli(*args, "--json", check=True).stdout)
    shorter = json.loads(run_cli(*args, "--output-mean-tokens", "250", "--json", check=True).stdout)
    # the same requests with shorter answers: each output token carries more of its prompt's prefill
    assert shorter["output_tokens_per_s"] < drawn["output_tokens_per_s"]
    wrong = run_cli(*BASE, "--offline", "--num-prompts", "20", "--output-mean-tokens", "250")
    assert wrong.returncode == 2 and len(wrong.stderr.strip().splitlines()) == 1
    assert "output_mean_tokens" in wrong.stderr and "sharegpt" in wrong.stderr
