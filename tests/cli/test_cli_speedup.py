"""`python -m planner speedup`, through a subprocess as users run it."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

BASE = ("speedup", "--target", "Llama-3.1-70B", "--draft", "Llama-3.2-1B", "--node", "8x-h100-sxm-80gb", "--tp", "8")
KEYS = {
    "alpha",
    "k",
    "batch_size",
    "expected_tokens_per_step",
    "baseline_tpot_s",
    "spec_tpot_s",
    "speedup",
    "optimal_k",
    "speedup_at_optimal_k",
    "break_even_alpha",
    "throughput_tok_s",
    "baseline_throughput_tok_s",
    "verdict",
    "thresholds",
    "speed_source",
}


def test_json_contract():
    out = json.loads(run_cli(*BASE, "--alpha", "0.8", "--k", "5", "--json", check=True).stdout)
    assert out.keys() >= KEYS
    assert round(out["expected_tokens_per_step"], 2) == 3.69
    assert out["speedup"] > 1.5 and out["verdict"] == "recommend"
    assert out["speed_source"].startswith(("kernel times measured on H100 SXM", "roofline estimate:"))
    assert out["thresholds"]["recommend_min_speedup"] == 1.3


def test_tau_and_rho_give_the_same_alpha():
    tau = json.loads(run_cli(*BASE, "--mean-accepted-len", "3.68928", "--k", "5", "--json", check=True).stdout)
    rho = json.loads(run_cli(*BASE, "--draft-acceptance-rate", "0.537856", "--k", "5", "--json", check=True).stdout)
    assert tau["alpha"] == pytest.approx(0.8, abs=1e-5)
    assert rho["alpha"] == pytest.approx(0.8, abs=1e-5)


def test_large_batch_turns_speculation_off():
    out = json.loads(run_cli(*BASE, "--alpha", "0.8", "--batch-size", "1024", "--json", check=True).stdout)
    assert out["speedup"] < 1 and out["verdict"] == "disable"


def test_summary_states_verdict_and_thresholds():
    text = run_cli(*BASE, "--alpha", "0.8", check=True).stdout
    assert "verdict: RECOMMEND" in text and "thresholds:" in text


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--alpha", "1.5"), "alpha"),
        (("--mean-accepted-len", "9", "--k", "5"), "mean_accepted_len"),
        (("--alpha", "0.8", "--batch-size", "0"), "batch-size"),
        (("--alpha", "0.8", "--k", "0"), "k"),
        (("--alpha", "0.8", "--dataset", "sharegpt", "--prompt-tokens", "512"), "--prompt-tokens"),
        (("--alpha", "0.8", "--dataset", "alpaca"), "--dataset"),
    ],
)
def test_invalid_inputs_exit_2_with_one_line(args, needle):
    proc = run_cli(*BASE, *args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and needle in proc.stderr


def test_a_speculator_is_required_and_without_acceptance_the_pairs_is_used():
    proc = run_cli("speedup", "--target", "Llama-3.1-70B", "--node", "8x-h100-sxm-80gb", "--tp", "8", "--alpha", "0.8")
    assert proc.returncode == 2 and "--draft" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    out = json.loads(run_cli(*BASE, "--json", check=True).stdout)
    assert out["alpha_source"] == "prior" and "prior" in out["alpha_detail"] and 0.5 < out["alpha"] < 1
    given = json.loads(run_cli(*BASE, "--alpha", "0.7", "--json", check=True).stdout)
    assert given["alpha_source"] == "entered" and given["alpha"] == 0.7


def test_rho_needs_k_and_the_verdict_is_at_the_given_k():
    proc = run_cli(*BASE, "--rho", "0.5")
    assert proc.returncode == 2 and "--k" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    out = json.loads(run_cli(*BASE, "--rho", "0.2", "--k", "4", "--json", check=True).stdout)
    assert out["verdict_k"] == 4 and out["k"] == 4 and "optimal_k" in out
    assert out["acceptance_convention"] == "draft_acceptance_rate"
    assert any(w.startswith("ρ = 0.200") for w in out["warnings"])  # the advisory in the user's convention


HEAD = (
    "speedup",
    "--target",
    "Llama-3.1-8B",
    "--draft",
    "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
    "--gpu",
    "h100-sxm-80gb",
)


@pytest.mark.parametrize("k", ["8", "12"])
def test_a_long_chain_with_a_head_compares_against_a_tree_that_fits_it(k):
    # The chain/tree comparison once built a tree of depth K inside the default 8-token budget and exited 2.
    out = json.loads(run_cli(*HEAD, "--alpha", "0.8", "--k", k, "--json", check=True).stdout)
    assert out["verification"] == "chain" and out["verify_tokens"] == int(k) + 1
    assert set(out["speedup_by_verification"]) == {"chain", "tree"}


def test_the_optimal_tree_depth_pays_at_least_the_chosen_depth():
    out = json.loads(
        run_cli(*HEAD, "--alpha", "0.8", "--k", "4", "--verification", "tree", "--json", check=True).stdout
    )
    assert out["speedup_at_optimal_k"] >= out["speedup"]
    assert out["speedup_by_k"][str(out["optimal_k"])] == out["speedup_at_optimal_k"]


def test_sharegpt_lengths_take_the_datasets_means_and_price_their_spread():
    args = (*BASE, "--alpha", "0.8", "--k", "3", "--batch-size", "64")
    drawn = json.loads(run_cli(*args, "--dataset", "sharegpt", "--json", check=True).stdout)
    alike = json.loads(run_cli(*args, "--prompt-tokens", "202", "--output-tokens", "179", "--json", check=True).stdout)
    assert (drawn["dataset"], drawn["prompt_tokens"], drawn["output_tokens"]) == ("sharegpt", 202, 179)
    assert alike["dataset"] == "fixed"
    # each step is priced over the prompt lengths it may meet, not at their mean: a step's time is not linear in
    # its prompt tokens (measured GEMM tiles step up; a long prompt pays its FLOPs), so the two differ, a little
    ratio = drawn["baseline_throughput_tok_s"] / alike["baseline_throughput_tok_s"]
    assert ratio != pytest.approx(1.0, abs=1e-3) and ratio == pytest.approx(1.0, abs=0.1)
    assert "on average (ShareGPT-like lengths)" in run_cli(*args, "--dataset", "sharegpt", check=True).stdout
