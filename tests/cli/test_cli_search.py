"""`python -m planner search`: the JSON's shape, a CSV of every point, and bad input as one line with exit code 2."""

from __future__ import annotations

import csv
import json

import pytest

from planner.catalog import get_model
from tests.conftest import run_cli

SMALL = [
    "search",
    "--target",
    "Llama-3.1-8B",
    "--nodes",
    "1x-h100-sxm-80gb",
    "--methods",
    "none,draft_model,ngram",
    "--k",
    "1-2",
    "--dtypes",
    "bf16",
    "--batch-caps",
    "8,32",
    "--prompt-tokens",
    "512",
    "--output-tokens",
    "128",
]


def test_json_has_points_fitting_points_seconds_frontier_and_recommended(tmp_path):
    target = tmp_path / "points.csv"
    proc = run_cli(*SMALL, "--requests-per-s", "4", "--tpot-slo-ms", "30", "--json", "--csv", str(target), check=True)
    out = json.loads(proc.stdout)
    assert {"points", "fitting_points", "seconds", "frontier", "recommended"} <= set(out)
    # none (1) + Llama-3.2-1B and n-gram at K 1-2 (4), each at two batch caps
    assert len(out["points"]) == 10 and out["fitting_points"] == 10 and out["seconds"] > 0
    point = out["points"][0]
    for field in ("node", "tp", "dtype", "kv_dtype", "method", "k", "max_num_seqs", "engine", "fits", "starts",
                  "kv_cache_tokens", "output_tok_s_per_gpu", "output_tok_s_per_user", "ttft_s", "tpot_s", "gpus",
                  "usd_per_million_output_tokens"):  # fmt: skip
        assert field in point, field
    recommended = out["recommended"]
    assert recommended["meets_objectives"] and recommended["tpot_s"] <= 0.030
    assert recommended["index"] in {p["index"] for p in out["frontier"]}
    assert all(p["stage"] == "simulated" and p["frontiers"] for p in out["frontier"])
    with target.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 10 and rows[0]["node"] == "1x-h100-sxm-80gb"


def test_a_concurrency_and_a_dataset_are_accepted():
    proc = run_cli(
        "search", "--target", "Llama-3.1-8B", "--nodes", "1x-h100-sxm-80gb", "--methods", "none", "--dtypes", "bf16",
        "--batch-caps", "16", "--concurrency", "40", "--dataset", "sharegpt", "--json", check=True,
    )  # fmt: skip
    out = json.loads(proc.stdout)
    [point] = out["points"]
    assert point["replicas"] == 3 and point["concurrency_per_replica"] == 14


@pytest.mark.parametrize(
    "args",
    [
        ("--requests-per-s", "1", "--k", "0-3"),
        ("--requests-per-s", "1", "--methods", "medusa"),
        ("--requests-per-s", "1", "--dtypes", "bf17"),
        ("--requests-per-s", "-1"),
        ("--requests-per-s", "1", "--concurrency", "3"),
        ("--requests-per-s", "1", "--percentile", "101"),
        ("--requests-per-s", "1", "--nodes", "no-such-node"),
        ("--requests-per-s", "1", "--prompt-tokens", "1000000"),
        ("--requests-per-s", "1", "--processes", "9"),
        ("--requests-per-s", "1", "--processes", "0"),
        ("--requests-per-s", "1", "--processes", "two"),
        ("--requests-per-s", "1", "--engine-version", "0.5.0"),
        ("--requests-per-s", "1", "--engines", "vllm,sglang", "--engine-version", "0.19.0"),
    ],
)
def test_bad_input_exits_2_with_one_line(args):
    base = ["search", "--target", "Llama-3.1-8B", "--prompt-tokens", "512", "--output-tokens", "128"]
    if "--prompt-tokens" in args:
        base = [*base[:3], "--output-tokens", "128"]
    proc = run_cli(*base, *args)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not proc.stdout


def test_the_processes_asked_for_change_the_stages_reported_never_the_answer():
    two_layouts = [*SMALL[: SMALL.index("--dtypes") + 1], "bf16,fp8", *SMALL[SMALL.index("--dtypes") + 2 :]]
    answers = {}
    for processes in ("1", "2"):
        proc = run_cli(*two_layouts, "--requests-per-s", "4", "--tpot-slo-ms", "30", "--processes", processes, "--json")
        out = json.loads(proc.stdout)
        answers[processes] = out
    assert list(answers["1"].pop("stage_seconds")) == ["plan", "screen", "simulate", "size"]
    assert list(answers["2"].pop("stage_seconds")) == ["plan and screen in 2 processes", "simulate", "size"]
    for out in answers.values():
        out.pop("seconds")
    assert answers["1"] == answers["2"]
    proc = run_cli(*SMALL, "--requests-per-s", "4", "--processes", "9")
    assert proc.returncode == 2 and "from 1 to 8" in proc.stderr


def test_without_lengths_or_objectives_a_search_asks_what_a_default_quote_asks():
    """The Fleet and Explore pages' request and objectives (``planner.defaults``) where the flags give none: the
    search's recommendation is the quote's, and either objective given overrides only its own."""
    space = ["--nodes", "1x-h100-sxm-80gb", "--methods", "none", "--dtypes", "bf16", "--batch-caps", "default"]
    found = json.loads(
        run_cli("search", "--target", "Llama-3.1-8B", *space, "--requests-per-s", "4", "--json", check=True).stdout
    )
    assert (found["workload"]["prompt_tokens"], found["workload"]["output_tokens"]) == (1024, 256)
    assert found["objectives"] == {"ttft_slo_s": 2.0, "tpot_slo_s": 0.2, "percentile": 99.0}
    quote = json.loads(
        run_cli(
            "quote", "--target", "Llama-3.1-8B", "--node", "1x-h100-sxm-80gb", "--requests-per-s", "4", "--json",
            check=True,
        ).stdout
    )  # fmt: skip
    fleet, quoted = found["recommended"]["sized_for_traffic"], quote["recommended"]
    assert (fleet["gpus"], fleet["replicas"]) == (quoted["option"]["gpus"], quoted["option"]["replicas"])
    one = json.loads(
        run_cli("search", "--target", "Llama-3.1-8B", *space, "--requests-per-s", "4", "--tpot-slo-ms", "30",
                "--prompt-tokens", "512", "--json", check=True).stdout
    )  # fmt: skip
    assert one["objectives"]["ttft_slo_s"] == 2.0 and one["objectives"]["tpot_slo_s"] == 0.03
    assert (one["workload"]["prompt_tokens"], one["workload"]["output_tokens"]) == (512, 256)
    none = json.loads(
        run_cli("search", "--target", "Llama-3.1-8B", *space, "--requests-per-s", "4", "--slo-preset", "none",
                "--tpot-slo-ms", "30", "--json", check=True).stdout
    )  # fmt: skip
    assert none["objectives"]["ttft_slo_s"] is None and none["objectives"]["tpot_slo_s"] == 0.03


def test_search_sizes_its_recommendation_on_other_draws_of_the_traffic_when_asked():
    space = "--nodes 8x-h100-sxm-80gb --methods none,ngram --dtypes bf16 --k 2 --batch-caps 16,64"
    load = "--requests-per-s 30 --prompt-tokens 512 --output-tokens 128 --ttft-slo-ms 200"
    args = ["search", "--target", "Llama-3.1-8B", *space.split(), *load.split(), "--traffic-draws", "3"]
    out = json.loads(run_cli(*args, "--json", check=True).stdout)
    check = out["traffic_draws"]
    sized = out["recommended"]["sized_for_traffic"]
    assert [d["draw"] for d in check["draws"]] == [1, 2, 3]
    assert check["draws"][0]["replicas"] == check["quoted_replicas"] == sized["replicas"]
    assert check["replicas_every_draw"] == max(d["replicas"] for d in check["draws"])
    assert "Sized on 3 draws of the same traffic" in run_cli(*args, check=True).stdout
    plain = json.loads(run_cli(*args[:-2], "--json", check=True).stdout)
    assert plain["traffic_draws"] is None and plain["speed_margin"] is None  # not asked: nothing more simulated
    bad = run_cli(*args[:-1], "0")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_a_search_asked_what_a_quote_compares_answers_as_the_quote(tmp_path):
    """The quote's configurations as search flags (its draft only, the engine's own batch cap, the user's α): the
    cheapest fleet the search sizes is the quote's recommendation, on an imported target as on the catalog's."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps(dict(get_model("Llama-3.1-8B").config, _name_or_path="acme/llama-8b")))
    load = ["--requests-per-s", "12", "--prompt-tokens", "1024", "--output-tokens", "256", "--ttft-slo-ms", "3000"]
    load += ["--tpot-slo-ms", "80", "--alpha", "0.7", "--speed-margin", "--json"]
    quote = json.loads(
        run_cli("quote", "--target-config", str(config), "--draft", "meta-llama/Llama-3.2-1B",
                "--node", "1x-h100-sxm-80gb", "--node", "1x-l40s-48gb", *load, check=True).stdout
    )  # fmt: skip
    found = json.loads(
        run_cli("search", "--target-config", str(config), "--nodes", "1x-h100-sxm-80gb,1x-l40s-48gb",
                "--methods", "none,draft_model", "--drafts", "meta-llama/Llama-3.2-1B", "--batch-caps", "default",
                "--dtypes", "bf16", *load, check=True).stdout
    )  # fmt: skip
    assert {p["draft"] for p in found["points"]} == {None, "meta-llama/Llama-3.2-1B"}
    assert {p["alpha"] for p in found["points"] if p["draft"]} == {0.7}
    assert {p["max_num_seqs"] for p in found["points"]} == {1024, 256}, "each node type's own default"
    best = found["recommended"]
    fleet = best["sized_for_traffic"]
    quoted = quote["recommended"]
    assert (best["node"], best["tp"], fleet["gpus"]) == (quoted["node"], quoted["tp"], quoted["option"]["gpus"])
    assert fleet["speculation"] == quoted["option"]["speculation"]
    # and so does its speed margin: the same fleet, the same check
    assert quote["speed_margins"][0]["option"].startswith(f"{quoted['node']}, TP {quoted['tp']}")
    assert found["speed_margin"] == {k: v for k, v in quote["speed_margins"][0].items() if k != "option"}


def test_batch_caps_take_the_engines_default_by_name_and_nothing_else():
    proc = run_cli(*SMALL[: SMALL.index("--batch-caps")], "--batch-caps", "defaults", "--requests-per-s", "1")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_drafts_are_named_as_anywhere_else_and_an_unknown_one_is_refused():
    proc = run_cli(*SMALL, "--drafts", "Llama-3.2-1B", "--requests-per-s", "4", "--json", check=True)
    assert {p["draft"] for p in json.loads(proc.stdout)["points"]} == {None, "meta-llama/Llama-3.2-1B"}
    proc = run_cli(*SMALL, "--drafts", "no-such-draft", "--requests-per-s", "4")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "no-such-draft" in proc.stderr


def test_a_search_runs_the_release_asked_for_and_says_so():
    small = [*SMALL[:5], "--methods", "none", *SMALL[7:], "--requests-per-s", "2"]
    older = run_cli(*small, "--engine-version", "0.19.0", check=True).stdout
    assert "engine: release 0.19.0: vLLM (V1 engine) from 0.10.0, before 0.20.0 (profile vllm-v1-0.10)" in older
    newest = run_cli(*small, check=True).stdout
    assert "engine: the newest profiled release: vLLM (V1 engine)" in newest
