"""One answer per question: 22 scenarios through the pages (AppTest) and the command line (``--json``) give the
same headline figures, for every speculator kind (draft model, EAGLE and EAGLE-3 heads, MTP, n-gram) and every page
with figures (Sizing, Performance, Draft Selection, Fleet & Quote).

Each case is one scenario: its link (the page reads it like a shared link) and the same inputs as CLI flags, each
input left at its default on both sides unless the case sets it: a flag is passed only where the scenario differs
from its default, so the pages' and the commands' defaults (``planner/defaults.py``) are compared too.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import io
import json
import re
from dataclasses import dataclass, field

import pytest
from streamlit.testing.v1 import AppTest

from planner.cli import main
from planner.cli.deployment_args import add_deployment_args
from planner.cli.matrix_cmd import register
from planner.defaults import NUM_SPECULATIVE_TOKENS, SELECTION_BATCH_SIZE
from planner.deployment import Deployment
from planner.reports import whole_requests
from planner.reports.escaping import ZERO_WIDTH_SPACE
from planner.scenario import Scenario
from planner.speed import speculation_rules
from tests.app.conftest import REPO

L40S, H100, H100X8, H200X8 = "1x-l40s-48gb", "1x-h100-sxm-80gb", "8x-h100-sxm-80gb", "8x-h200-sxm-141gb"
LLAMA8, LLAMA3_8, LLAMA70 = "meta-llama/Llama-3.1-8B", "meta-llama/Meta-Llama-3-8B", "meta-llama/Llama-3.1-70B"
EAGLE3, EAGLE = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "lmzheng/sglang-EAGLE-LLaMA3-Instruct-8B"


@dataclass(frozen=True)
class Case:
    page: str
    scenario: dict
    #: Flags of the page's inputs that are not deployment fields (batch, lengths, traffic, α).
    flags: tuple[str, ...] = ()
    page_inputs: dict = field(default_factory=dict)


def _deployment_flags(s: Scenario) -> list[str]:
    flags = ["--target", s.target, "--node", s.node, "--tp", str(s.tp), "--pp", str(s.pp)]
    flags += ["--max-model-len", str(s.max_model_len)]
    if s.k != Scenario().k:  # the default K (every speculator kind, MTP included) is left to the command
        flags += ["--num-speculative-tokens", str(s.k)]
    flags += ["--engine", s.engine, "--kv-dtype", s.kv_dtype]
    if s.dtype:
        flags += ["--dtype", s.dtype]
    if s.method:
        flags += ["--method", s.method]
    elif s.draft:
        flags += ["--draft", s.draft]
    return flags


CASES = {
    # Performance: the speedup, the optimal K, the verdict and the α, at the pair's own α and the user's K
    "perf-70b-1b": Case("performance", {}),
    "perf-70b-3b-k3": Case("performance", {"draft": "meta-llama/Llama-3.2-3B", "k": 3}),
    "perf-8b-ngram": Case("performance", {"target": LLAMA8, "method": "ngram", "node": L40S, "tp": 1}),
    "perf-8b-1b-l40s": Case("performance", {"target": LLAMA8, "node": L40S, "tp": 1}),
    "perf-8b-eagle3": Case("performance", {"target": LLAMA8, "draft": EAGLE3, "node": H100, "tp": 1}),
    "perf-8b-eagle": Case("performance", {"target": LLAMA3_8, "draft": EAGLE, "node": H100, "tp": 1}),
    "perf-dsv3-mtp": Case(
        "performance", {"target": "deepseek-ai/DeepSeek-V3", "method": "mtp", "node": H200X8, "tp": 8}
    ),
    "perf-8b-ngram-batch8": Case(
        "performance", {"target": LLAMA8, "method": "ngram", "node": H100, "tp": 1, "batch_size": 8}
    ),
    "perf-200k-prompt-8k-len": Case(
        "performance", {"target": LLAMA8, "method": "ngram", "node": L40S, "tp": 1, "prompt_tokens": 200_000}
    ),
    "perf-70b-one-h100": Case("performance", {"node": H100, "tp": 1}),
    "perf-70b-1b-sharegpt-batch64": Case("performance", {"dataset": "sharegpt", "batch_size": 64}),
    # Sizing: KV tokens and whole concurrent requests, or the reason and the best fix
    "size-70b-1b": Case("sizing", {}),
    "size-405b-bf16-one-h100": Case(
        "sizing", {"target": "meta-llama/Llama-3.1-405B", "draft": None, "node": H100, "tp": 1, "dtype": "bf16"}
    ),
    "size-8b-ngram": Case("sizing", {"target": LLAMA8, "method": "ngram", "node": L40S, "tp": 1}),
    "size-8b-eagle3": Case("sizing", {"target": LLAMA8, "draft": EAGLE3, "node": H100, "tp": 1}),
    # Draft Selection: the winner and its speedup at the batch ranked at
    "select-70b": Case("draft_selection", {"draft": None}),
    "select-8b-l40s-batch8": Case(
        "draft_selection", {"target": LLAMA8, "node": L40S, "tp": 1}, ("--batch-size", "8"), {"selection_batch": 8}
    ),
    "select-8b-l40s-one-alpha": Case(
        "draft_selection",
        {"target": LLAMA8, "node": L40S, "tp": 1},
        ("--alpha", "0.8"),
        {"selection_assume": True},
    ),
    # Fleet & Quote: the headline (node type, nodes, GPUs, cost), at the pair's own α
    "fleet-8b-ngram-50rps": Case(
        "fleet",
        {"target": LLAMA8, "method": "ngram", "fleet_requests_per_s": 50.0, "fleet_nodes": ("4x-l40s-48gb",)},
    ),
    "fleet-70b-1b": Case("fleet", {"fleet_requests_per_s": 5.0, "fleet_nodes": (H100X8,)}),
    "fleet-8b-eagle3": Case(
        "fleet", {"target": LLAMA8, "draft": EAGLE3, "fleet_requests_per_s": 5.0, "fleet_nodes": (H100,)}
    ),
    "fleet-8b-1b-vllm-0.19": Case(
        "fleet",
        {"target": LLAMA8, "engine_version": "0.19.0", "fleet_requests_per_s": 30.0, "fleet_nodes": (H100, L40S)},
    ),
}


def _cli(argv: list[str]) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*argv, "--json"]) == 0
    return json.loads(out.getvalue())


def _page(case: Case) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300)
    for key, value in Scenario(**case.scenario).to_query().items():
        at.query_params[key] = value
    at.run()
    at.switch_page(f"ui/{case.page}.py").run()
    for key, value in case.page_inputs.items():
        at.checkbox(key=key).check() if value is True else at.number_input(key=key).set_value(value)
        at.run()
    assert not at.exception
    return at


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def _texts(at: AppTest) -> str:
    """The page's messages as a person reads them (Markdown's backslash escapes and HTML entities resolved)."""
    source = " ".join(e.value for kind in ("success", "info", "warning", "error") for e in getattr(at, kind))
    return html.unescape(re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", source)).replace(ZERO_WIDTH_SPACE, "")


def _performance(case: Case, s: Scenario, at: AppTest) -> None:
    flags = _deployment_flags(s)
    for name, flag in (("batch_size", "--batch-size"), ("prompt_tokens", "--prompt-tokens")):
        if getattr(s, name) is not None:
            flags += [flag, str(getattr(s, name))]
    if s.dataset != "fixed":
        flags += ["--dataset", s.dataset]
    cli = _cli(["speedup", *flags])
    if cli["verdict"] == "cannot_run":
        assert any("Cannot run" in e.value for e in at.error) and not at.metric
        assert all(reason in _texts(at) for reason in cli["cannot_run_reasons"])
        assert "RECOMMEND" not in _texts(at) and "ENABLE" not in _texts(at)
        return
    assert _metric(at, "Speedup") == f"{cli['speedup']:.2f}x"
    assert _metric(at, "Optimal K") == str(cli["optimal_k"])
    assert f"**{cli['verdict'].upper()}**" in _texts(at)
    assert f"at K = {cli['k']}" in _texts(at)  # the verdict is read at the user's K
    assert any(f"α {cli['alpha']:.2f}" in c.value for c in at.caption)


def _sizing(case: Case, s: Scenario, at: AppTest) -> None:
    cli = _cli(["size", *_deployment_flags(s)])
    if cli["fits"]:
        assert _metric(at, "KV cache tokens / replica") == f"{cli['kv_cache_tokens']:,}"
        assert _metric(at, "Concurrent requests") == f"{whole_requests(cli['max_concurrency']):,}"
        return
    assert cli["problems"][0] in _texts(at)
    fixes = next(d.value for d in at.dataframe if "Change" in d.value.columns)
    assert list(fixes["Change"]) == [fix["change"] for fix in cli["suggestions"]]
    assert all(fix["fits"] and fix["starts"] for fix in cli["suggestions"])


def _draft_selection(case: Case, s: Scenario, at: AppTest) -> None:
    flags = [f for f in _deployment_flags(s) if f not in ("--draft", s.draft, "--method", s.method)]
    cli = _cli(["matrix", *flags, *case.flags])
    top = cli["rows"][0]
    best = at.success[0].value
    batch = 8 if "--batch-size" in case.flags else Scenario().selection_batch_size
    assert cli["batch_size"] == batch  # the command's default batch is the page's
    assert best.startswith(f"Best draft: {top['draft']} — predicted {top['speedup_at_batch']:.2f}x at batch {batch}")
    if "--alpha" in case.flags:
        assert top["method"] != "ngram"  # one assumed α for learned drafts never makes free lookup the winner


def _fleet(case: Case, s: Scenario, at: AppTest) -> None:
    # the Fleet page uses the scenario's target, speculator, engine and KV dtype; it sizes its own layouts
    flags = ["--target", s.target, "--engine", s.engine, "--kv-dtype", s.kv_dtype]
    flags += ["--engine-version", s.engine_version] if s.engine_version else []
    flags += ["--method", s.method] if s.method else ["--draft", s.draft] if s.draft else []
    for node in s.fleet_nodes:
        flags += ["--node", node]
    flags += ["--requests-per-s", str(s.fleet_requests_per_s), "--prompt-tokens", str(s.fleet_prompt_tokens)]
    flags += ["--output-tokens", str(s.fleet_output_tokens), "--tpot-slo-ms", str(s.fleet_tpot_slo_ms)]
    flags += ["--ttft-slo-ms", str(s.fleet_ttft_slo_ms), "--percentile", str(s.fleet_percentile)]
    cli = _cli(["quote", *flags])
    assert cli["verdict"] in _texts(at)
    assumptions = " ".join(m.value for m in at.markdown)
    assert all(q["engine_release"] in assumptions for q in cli["quotes"])  # the release each quote ran
    if cli["alpha"] is not None:
        assert any(f"α = {cli['alpha']:.2f}" in c.value for c in at.caption)
    if cli["saving"]:
        assert cli["saving"]["against"] in _texts(at)


CHECKS = {"performance": _performance, "sizing": _sizing, "draft_selection": _draft_selection, "fleet": _fleet}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_page_and_the_command_line_give_the_same_headline(name):
    case = CASES[name]
    scenario = Scenario(**case.scenario)
    CHECKS[case.page](case, scenario, _page(case))


def test_the_cases_cover_every_speculator_kind_and_every_page_with_figures():
    assert len(CASES) == 22
    kinds = {
        "ngram" if c.scenario.get("method") == "ngram" else "mtp" if c.scenario.get("method") == "mtp"
        else "eagle3" if c.scenario.get("draft") == EAGLE3 else "eagle" if c.scenario.get("draft") == EAGLE
        else "draft_model"
        for c in CASES.values()
    }  # fmt: skip
    assert kinds == {"ngram", "mtp", "eagle3", "eagle", "draft_model"}
    assert {c.page for c in CASES.values()} == set(CHECKS)


def test_every_view_takes_its_defaults_from_one_table():
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    matrix_defaults = parser.parse_args(["matrix", "--target", "Llama-3.1-8B", "--node", H100])
    assert Scenario().selection_batch_size == matrix_defaults.batch_size == SELECTION_BATCH_SIZE
    assert speculation_rules().default_workload.batch_size == SELECTION_BATCH_SIZE  # the Performance page's batch
    assert Scenario().k == Deployment.model_fields["num_speculative_tokens"].default == NUM_SPECULATIVE_TOKENS
    deployment_flags = argparse.ArgumentParser()
    add_deployment_args(deployment_flags)
    assert deployment_flags.parse_args(["--target", "x", "--node", H100]).k is None  # unset: the deployment's default K
