"""`python -m planner quote`: several node types, JSON output, and a report written whole."""

from __future__ import annotations

import json

from planner.scenario import Scenario
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
    for args in (
        ("--requests-per-s", "-1"),
        ("--requests-per-s", "1", "--alpha", "2"),
        ("--requests-per-s", "1", "--traffic-draws", "11"),
        ("--requests-per-s", "1", "--traffic-draws", "three"),
    ):
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


def test_a_single_gpu_quote_counts_in_the_singular():
    text = run_cli(
        "quote", "--target", "Llama-3.1-8B", "--node", "1x-h100-sxm-80gb", "--requests-per-s", "2", check=True
    ).stdout  # fmt: skip
    assert "1 replica, 1 node, 1 GPU," in text and "1 GPUs" not in text and "(s)" not in text


def test_the_preset_none_leaves_only_the_objectives_given_and_the_defaults_are_the_fleet_pages():
    base = ["quote", "--target", "Llama-3.1-8B", "--node", "1x-h100-sxm-80gb", "--requests-per-s", "4", "--json"]
    given = json.loads(run_cli(*base, "--slo-preset", "none", "--tpot-slo-ms", "50", check=True).stdout)
    traffic = given["quotes"][0]["traffic"]
    assert traffic["ttft_slo_s"] is None and traffic["tpot_slo_s"] == 0.05
    defaults = Scenario().traffic()
    traffic = json.loads(run_cli(*base, check=True).stdout)["quotes"][0]["traffic"]
    for field in ("prompt_tokens", "output_tokens", "ttft_slo_s", "tpot_slo_s", "percentile"):
        assert traffic[field] == getattr(defaults, field), field


def test_quote_sizes_every_option_on_other_draws_of_the_traffic_when_asked():
    args = "quote --target Llama-3.1-70B --node 8x-h100-sxm-80gb --requests-per-s 20 --traffic-draws 3"
    out = json.loads(run_cli(*args.split(), "--json", check=True).stdout)
    titles = [s["title"] for s in out["report"]["sections"]]
    assert titles.count("How much each count owes to one draw of the traffic") == 1
    checks = out["traffic_draws"]
    assert checks and checks[0]["option"] == out["recommended"]["node"] + ", TP " + str(out["recommended"]["tp"]) + (
        ", without speculation"
    )
    assert all(len(c["draws"]) == 3 and c["draws"][0]["replicas"] == c["quoted_replicas"] for c in checks)
    assert all(c["replicas_every_draw"] >= max(d["replicas"] for d in c["draws"]) for c in checks)
    text = run_cli(*args.split(), check=True).stdout
    assert "Sized on 3 draws of the same traffic (400 simulated requests each)" in text
    plain = json.loads(run_cli(*args.split()[:-2], "--json", check=True).stdout)
    assert plain["traffic_draws"] == []  # one draw, the quote's own: nothing more is simulated


def test_quote_finds_each_options_speed_margin_when_asked(tmp_path):
    args = "quote --target Llama-3.1-70B --node 8x-h100-sxm-80gb --requests-per-s 20 --speed-margin"
    target = tmp_path / "quote.md"
    out = json.loads(run_cli(*args.split(), "--export", str(target), "--json", check=True).stdout)
    margins = out["speed_margins"]
    recommended = out["recommended"]
    assert margins and margins[0]["option"].startswith(f"{recommended['node']}, TP {recommended['tp']}")
    assert all(0 <= m["margin_frac"] <= m["limit_frac"] for m in margins)
    assert all(m["at_least"] or m["fails_frac"] - m["margin_frac"] <= m["resolution_frac"] for m in margins)
    assert all(m["planner_error"]["median_abs_pct"] > 0 for m in margins)  # shown beside the planner's own error
    assert "How much slower than estimated each option may be" in target.read_text()
    text = run_cli(*args.split(), check=True).stdout
    assert "speed margin: the quoted" in text and "longer" in text
    plain = json.loads(run_cli(*args.split()[:-1], "--json", check=True).stdout)
    assert plain["speed_margins"] == []  # not asked: nothing more is simulated


def test_the_quote_runs_the_engine_release_asked_for_and_says_so():
    quote = ("quote", "--target", "Llama-3.1-8B", "--node", "1x-h100-sxm-80gb", "--requests-per-s", "2")
    older = json.loads(run_cli(*quote, "--engine-version", "0.19.0", "--json", check=True).stdout)
    newest = json.loads(run_cli(*quote, "--json", check=True).stdout)
    assert "release 0.19.0" in older["quotes"][0]["engine_release"]
    assert "newest profiled release" in newest["quotes"][0]["engine_release"]
    assert older["quotes"][0]["kv_concurrency_limit"] < newest["quotes"][0]["kv_concurrency_limit"]
    text = run_cli(*quote, "--engine-version", "0.19.0", check=True).stdout
    assert "engine: release 0.19.0: vLLM (V1 engine) from 0.10.0, before 0.20.0" in text
    refused = run_cli(*quote, "--engine-version", "0.5.0")
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "engine_version" in refused.stderr and "0.34.0 or later" in refused.stderr


def test_a_quote_side_by_side_in_worker_processes_is_the_quote_one_after_another(monkeypatch):
    args = (
        "quote", "--target", "Llama-3.1-8B", "--draft", "Llama-3.2-1B", "--node", "1x-h100-sxm-80gb", "--node",
        "1x-l40s-48gb", "--node", "8x-a100-sxm-80gb", "--requests-per-s", "12", "--traffic-draws", "2",
        "--speed-margin", "--json",
    )  # fmt: skip
    answers = []
    for workers in ("1", "2"):  # node types, and the checks of their options, in one process, then in two workers
        monkeypatch.setenv("PLANNER_WORKERS", workers)
        answers.append(json.loads(run_cli(*args, check=True).stdout))
    assert answers[0] == answers[1] and len(answers[0]["quotes"]) == 3
