"""Exported sizing documents carry the launch configuration as an appendix (the command as the plan sets it)."""

from __future__ import annotations

from planner.catalog.lookup import get_model, get_node
from planner.decisions import Traffic, plan_fleet
from planner.deployment import Deployment
from planner.launch import quoted_deployment
from planner.memory import plan_memory
from planner.reports import quote_report, sizing_report
from planner.reports.document import Report, Section


def _report(**fields) -> Report:
    dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), **fields)
    return sizing_report(dep, plan_memory(dep))


def test_sizing_report_appendix_holds_the_engine_command_and_manifest():
    data = _report(tp=8, draft=get_model("Llama-3.2-1B"), engine_version="0.19.0", max_num_seqs=256).to_json()
    by_title = {s["title"]: s for s in data["sections"]}
    command = by_title["Appendix: launch configuration"]["code"]
    assert "vllm serve meta-llama/Llama-3.1-70B" in command and "--max-num-seqs 256" in command
    assert "kind: Deployment" in by_title["Appendix: Kubernetes manifest"]["code"]
    assert "docker run" in by_title["Appendix: docker run"]["code"]


def test_an_unlaunchable_plan_says_why_in_the_appendix():
    data = _report(tp=1).to_json()  # 70B on one of the node's GPUs
    appendix = next(s for s in data["sections"] if s["title"] == "Appendix: launch configuration")
    assert appendix["code"] == "" and "does not fit" in appendix["text"]


def test_code_is_fenced_and_escaped_in_every_format():
    hostile = "echo ```\n<script>alert(1)</script>"
    report = Report(title="t", sections=[Section(title="Appendix", code=hostile)])
    md = report.to_markdown()
    assert "````\n" + hostile + "\n````" in md  # a fence longer than any backtick run inside
    html = report.to_html(with_charts=False)
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert report.to_xlsx()[:2] == b"PK"


def test_quote_report_carries_the_recommended_options_launch():
    traffic = Traffic.build(requests_per_s=2, prompt_tokens=1000, output_tokens=200)
    target, draft = get_model("Llama-3.1-8B"), get_model("Llama-3.2-1B")
    plan = plan_fleet(target, [get_node("1x-h100-sxm-80gb")], traffic, draft=draft)
    dep = quoted_deployment(target, plan.recommended, traffic, draft=draft)
    data = quote_report(target.id, draft.id, plan, launch=dep).to_json()
    appendix = next(s for s in data["sections"] if s["title"] == "Appendix: launch configuration")
    assert "--max-model-len 1200" in appendix["code"]  # the quote sizes at prompt + output tokens
    assert ("--speculative-config" in appendix["code"]) == plan.recommended.option.speculation
